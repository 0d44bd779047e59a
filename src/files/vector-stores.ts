/**
 * The Vector Stores API: the stores (create, list, retrieve, modify, delete), their files
 * (attach with `attributes` and `chunking_strategy`, list by status, retrieve, update
 * `attributes`, detach, `content`), file batches (create, retrieve, cancel, list files) and
 * search. Owned by key like files: another key's store is not found, and only the owner's
 * files can be attached (an unknown one is a 404 before anything is written).
 *
 * `expires_after` (`anchor: last_active_at`, 1 to 365 days) sets `expires_at`, moved on by each
 * use (search, attaching files). Past it the store is `expired`, as OpenAI reports it: still
 * listed and retrieved, but search, the file_search tool and attaching files answer OpenAI's 400
 * (`Vector store ... is expired`), and a new `expires_after` does not bring it back (its chunks
 * are dropped by the expiry sweep, expiry.ts). A file that expired is gone from every store: a
 * search leaves its chunks out (and removes the file), as do reads of the store's file.
 */
import { invalidRequest, notFound } from "../ops/errors.js";
import type { FileStore, StoredFileBatch, StoredVectorStore, StoredVectorStoreFile, VectorStoreFileRecord } from "../store/files.js";
import type { FileSearchOutcome, FileSearchQuery } from "../tools/file-search/library.js";
import { readChunkingStrategy } from "./ingest/chunk.js";
import type { FilesApi } from "./files-api.js";
import type { Indexer } from "./ingest/ingest.js";
import { searchStores, type SearchDeps } from "./retrieval/search.js";
import type { VectorIndex } from "./retrieval/vector-index.js";
import { batchView, expired, newId, page, readAttributes, readMetadata, readStoreExpiry, storeExpiresAt, vectorStoreView, type Clock, type ListQuery } from "./views.js";

export const vectorStoreNotFound = (id: string, param: string | null = null) => notFound(`No vector store found with id '${id}'.`, param, null);
/** OpenAI's answer for an expired store put to use. */
export const vectorStoreExpired = (id: string, param: string | null = null) => invalidRequest(`Vector store ${id} is expired. Create a new vector store and try again.`, param, null);

type Body = Record<string, unknown>;
const STATUSES = new Set(["in_progress", "completed", "failed", "cancelled"]);

export interface VectorStoresDeps extends SearchDeps {
  records: FileStore;
  index: VectorIndex;
  files: FilesApi;
  indexer: Indexer;
  now: Clock;
}

export class VectorStoresApi {
  constructor(private readonly deps: VectorStoresDeps) {}

  private get records(): FileStore {
    return this.deps.records;
  }

  /** The owner's live store, or 404. */
  async get(owner: string, id: string, param: string | null = null): Promise<StoredVectorStore> {
    const rec = await this.records.getVectorStore(id);
    if (!rec || rec.owner !== owner) throw vectorStoreNotFound(id, param);
    return rec;
  }

  /** The owner's store, to be put to use: 404 as `get`, 400 when it expired. */
  private async live(owner: string, id: string, param: string | null = null): Promise<StoredVectorStore> {
    const rec = await this.get(owner, id, param);
    if (expired(rec.store.expires_at, this.deps.now())) throw vectorStoreExpired(id, param);
    return rec;
  }

  private async view(rec: StoredVectorStore) {
    return vectorStoreView(rec, await this.records.listStoreFiles(rec.store.id), this.deps.now());
  }

  async create(owner: string, body: Body) {
    const fileIds = readFileIds(body.file_ids, "file_ids");
    const chunking = readChunkingStrategy(body.chunking_strategy);
    if (body.name !== undefined && body.name !== null && typeof body.name !== "string") throw invalidRequest("Invalid 'name': expected a string.", "name", "invalid_type");
    const expiry = readStoreExpiry(body.expires_after);
    const metadata = readMetadata(body.metadata) ?? {};
    for (const [i, id] of fileIds.entries()) await this.deps.files.get(owner, id, `file_ids[${i}]`);
    const now = this.deps.now();
    const rec: StoredVectorStore = {
      store: { id: newId("vs_"), object: "vector_store", created_at: now, name: (body.name as string | undefined) ?? "", metadata, last_active_at: now, expires_after: expiry, expires_at: storeExpiresAt(expiry, now) },
      owner,
    };
    await this.records.putVectorStore(rec);
    for (const id of fileIds) await this.attach(rec, id, null, chunking, null);
    return this.view(rec);
  }

  async list(owner: string, q: ListQuery) {
    const stores = await this.records.listVectorStores(owner);
    const views = await Promise.all(stores.map((s) => this.view(s)));
    return page(views, q);
  }

  async retrieve(owner: string, id: string) {
    return this.view(await this.get(owner, id));
  }

  async modify(owner: string, id: string, body: Body) {
    const rec = await this.get(owner, id);
    if (body.name !== undefined && body.name !== null) {
      if (typeof body.name !== "string") throw invalidRequest("Invalid 'name': expected a string.", "name", "invalid_type");
      rec.store.name = body.name;
    }
    if (body.metadata !== undefined) rec.store.metadata = readMetadata(body.metadata) ?? {};
    if (body.expires_after !== undefined) {
      if (expired(rec.store.expires_at, this.deps.now())) throw vectorStoreExpired(id, "expires_after");
      rec.store.expires_after = readStoreExpiry(body.expires_after);
      rec.store.expires_at = storeExpiresAt(rec.store.expires_after, rec.store.last_active_at ?? rec.store.created_at);
    }
    await this.records.putVectorStore(rec);
    return this.view(rec);
  }

  async delete(owner: string, id: string) {
    await this.get(owner, id);
    const files = await this.records.listStoreFiles(id);
    await Promise.all(files.filter((f) => f.file.status === "in_progress").map((f) => this.deps.indexer.cancel(id, f.file.id).catch(() => {})));
    await this.records.deleteVectorStore(id);
    await this.deps.index.dropStore(id);
    return { id, object: "vector_store.deleted" as const, deleted: true };
  }

  // --- a store's files -------------------------------------------------------------------

  /** Records the file `in_progress` in the store and queues its indexing. */
  private async attach(store: StoredVectorStore, fileId: string, attributes: VectorStoreFileRecord["attributes"], chunking: VectorStoreFileRecord["chunking_strategy"], batchId: string | null): Promise<StoredVectorStoreFile> {
    const rec: StoredVectorStoreFile = {
      file: { id: fileId, object: "vector_store.file", created_at: this.deps.now(), vector_store_id: store.store.id, status: "in_progress", usage_bytes: 0, last_error: null, attributes: attributes ?? {}, chunking_strategy: chunking },
      owner: store.owner,
      batch_id: batchId,
    };
    await this.records.putStoreFile(rec);
    try {
      await this.deps.indexer.enqueue(store.store.id, fileId);
    } catch (err) {
      // Not queued: never left in_progress.
      await this.records.updateStoreFile(store.store.id, fileId, { status: "failed", last_error: { code: "server_error", message: `The indexing job could not be queued: ${(err as Error).message}` } });
      throw err;
    }
    return rec;
  }

  async createFile(owner: string, vectorStoreId: string, body: Body) {
    const store = await this.live(owner, vectorStoreId);
    if (typeof body.file_id !== "string" || !body.file_id) throw invalidRequest("Missing required parameter: 'file_id'.", "file_id", "missing_required_parameter");
    const attributes = readAttributes(body.attributes);
    const chunking = readChunkingStrategy(body.chunking_strategy);
    await this.deps.files.get(owner, body.file_id, "file_id");
    await this.touch(store);
    return (await this.attach(store, body.file_id, attributes, chunking, null)).file;
  }

  async listFiles(owner: string, vectorStoreId: string, q: ListQuery & { filter?: string }, batchId?: string) {
    await this.get(owner, vectorStoreId);
    if (q.filter !== undefined && !STATUSES.has(q.filter)) throw invalidRequest("Invalid 'filter': expected one of in_progress, completed, failed, cancelled.", "filter", "invalid_value");
    const files = (await this.records.listStoreFiles(vectorStoreId)).filter((f) => (!q.filter || f.file.status === q.filter) && (batchId === undefined || f.batch_id === batchId));
    return page(files.map((f) => f.file), q);
  }

  private async storeFile(owner: string, vectorStoreId: string, fileId: string): Promise<StoredVectorStoreFile> {
    await this.get(owner, vectorStoreId);
    const rec = await this.records.getStoreFile(vectorStoreId, fileId);
    // A file that expired is out of every store (expiring it detaches it here too).
    const file = rec && (await this.records.getFile(fileId));
    if (!rec || !file || (await this.deps.files.expire(file))) throw notFound(`No file found with id '${fileId}' in vector store '${vectorStoreId}'.`, null, null);
    return rec;
  }

  async retrieveFile(owner: string, vectorStoreId: string, fileId: string) {
    return (await this.storeFile(owner, vectorStoreId, fileId)).file;
  }

  async updateFile(owner: string, vectorStoreId: string, fileId: string, body: Body) {
    await this.storeFile(owner, vectorStoreId, fileId);
    if (!("attributes" in body)) throw invalidRequest("Missing required parameter: 'attributes'.", "attributes", "missing_required_parameter");
    const attributes = readAttributes(body.attributes) ?? {};
    const updated = await this.records.updateStoreFile(vectorStoreId, fileId, { attributes });
    if (!updated) throw notFound(`No file found with id '${fileId}' in vector store '${vectorStoreId}'.`, null, null);
    await this.deps.index.setAttributes(vectorStoreId, fileId, attributes);
    return updated.file;
  }

  async deleteFile(owner: string, vectorStoreId: string, fileId: string) {
    await this.storeFile(owner, vectorStoreId, fileId);
    await this.detach(vectorStoreId, fileId);
    return { id: fileId, object: "vector_store.file.deleted" as const, deleted: true };
  }

  /** Out of the store: its job stopped, its record and its chunks gone. */
  async detach(vectorStoreId: string, fileId: string): Promise<void> {
    await this.deps.indexer.cancel(vectorStoreId, fileId).catch(() => {});
    await this.records.deleteStoreFile(vectorStoreId, fileId);
    await this.deps.index.removeFile(vectorStoreId, fileId);
  }

  async fileContent(owner: string, vectorStoreId: string, fileId: string) {
    await this.storeFile(owner, vectorStoreId, fileId);
    const chunks = await this.deps.index.fileChunks(vectorStoreId, fileId);
    return { object: "vector_store.file_content.page" as const, data: chunks.map((text) => ({ type: "text" as const, text })), has_more: false, next_page: null };
  }

  // --- file batches ------------------------------------------------------------------------

  async createBatch(owner: string, vectorStoreId: string, body: Body) {
    const store = await this.live(owner, vectorStoreId);
    const attributes = readAttributes(body.attributes);
    const chunking = readChunkingStrategy(body.chunking_strategy);
    if (body.file_ids !== undefined && body.files !== undefined) throw invalidRequest("Give either 'file_ids' or 'files', not both.", "files", "invalid_value");
    const entries =
      body.files !== undefined
        ? readBatchFiles(body.files).map((f, i) => ({ id: f.file_id, attributes: readAttributes(f.attributes, `files[${i}].attributes`) ?? attributes, chunking: f.chunking_strategy === undefined ? chunking : readChunkingStrategy(f.chunking_strategy, `files[${i}].chunking_strategy`) }))
        : readFileIds(body.file_ids, "file_ids").map((id) => ({ id, attributes, chunking }));
    if (entries.length === 0) throw invalidRequest("Missing required parameter: 'file_ids' (or 'files').", "file_ids", "missing_required_parameter");
    for (const [i, e] of entries.entries()) await this.deps.files.get(owner, e.id, body.files !== undefined ? `files[${i}].file_id` : `file_ids[${i}]`);
    const batch: StoredFileBatch = {
      batch: { id: newId("vsfb_"), object: "vector_store.files_batch", created_at: this.deps.now(), vector_store_id: vectorStoreId, cancelled: false },
      owner,
      file_ids: entries.map((e) => e.id),
    };
    await this.records.putBatch(batch);
    await this.touch(store);
    for (const e of entries) await this.attach(store, e.id, e.attributes, e.chunking, batch.batch.id);
    return this.batchView(batch);
  }

  private async batch(owner: string, vectorStoreId: string, batchId: string): Promise<StoredFileBatch> {
    await this.get(owner, vectorStoreId);
    const rec = await this.records.getBatch(batchId);
    if (!rec || rec.batch.vector_store_id !== vectorStoreId) throw notFound(`No file batch found with id '${batchId}' in vector store '${vectorStoreId}'.`, null, null);
    return rec;
  }

  private async batchView(rec: StoredFileBatch) {
    return batchView(rec, await this.records.listStoreFiles(rec.batch.vector_store_id));
  }

  async retrieveBatch(owner: string, vectorStoreId: string, batchId: string) {
    return this.batchView(await this.batch(owner, vectorStoreId, batchId));
  }

  async cancelBatch(owner: string, vectorStoreId: string, batchId: string) {
    const rec = await this.batch(owner, vectorStoreId, batchId);
    await this.records.cancelBatch(batchId);
    for (const f of await this.records.listStoreFiles(vectorStoreId)) {
      if (f.batch_id !== batchId || f.file.status !== "in_progress") continue;
      await this.records.updateStoreFile(vectorStoreId, f.file.id, { status: "cancelled" });
      await this.deps.indexer.cancel(vectorStoreId, f.file.id).catch(() => {});
    }
    rec.batch.cancelled = true;
    return this.batchView(rec);
  }

  async listBatchFiles(owner: string, vectorStoreId: string, batchId: string, q: ListQuery & { filter?: string }) {
    await this.batch(owner, vectorStoreId, batchId);
    return this.listFiles(owner, vectorStoreId, q, batchId);
  }

  // --- search --------------------------------------------------------------------------------

  /** Every id a store this owner may use (the owner's: else 404; not expired: else 400), naming the first that is not. */
  async assertStores(owner: string, ids: string[], param = "vector_store_ids"): Promise<StoredVectorStore[]> {
    const out: StoredVectorStore[] = [];
    for (const [i, id] of ids.entries()) out.push(await this.live(owner, id, ids.length === 1 && param !== "vector_store_ids" ? param : `${param}[${i}]`));
    return out;
  }

  async search(q: FileSearchQuery): Promise<FileSearchOutcome> {
    const stores = await this.assertStores(q.owner, q.vectorStoreIds);
    const outcome = await searchStores(this.deps, q);
    for (const s of stores) void this.touch(s).catch(() => {});
    return { ...outcome, hits: await this.liveHits(outcome.hits) };
  }

  /**
   * The hits whose file is still there: a file that expired since the last sweep is removed now
   * (from every store) and its chunks left out. One record read per file found, at most
   * `max_num_results`.
   */
  private async liveHits(hits: FileSearchOutcome["hits"]): Promise<FileSearchOutcome["hits"]> {
    const ids = [...new Set(hits.map((h) => h.file_id))];
    const gone = new Set<string>();
    await Promise.all(
      ids.map(async (id) => {
        const rec = await this.records.getFile(id);
        if (!rec || (await this.deps.files.expire(rec))) gone.add(id);
      }),
    );
    return gone.size === 0 ? hits : hits.filter((h) => !gone.has(h.file_id));
  }

  /**
   * The sweep: up to `limit` stores whose `expires_at` passed get their indexing stopped and
   * their chunks dropped (they stay, reported `expired`); how many.
   */
  async sweep(limit: number): Promise<number> {
    let n = 0;
    for (const id of await this.records.expiredVectorStores(this.deps.now(), limit)) {
      const rec = await this.records.getVectorStore(id);
      if (!rec || !expired(rec.store.expires_at, this.deps.now())) continue; // deleted, or used since
      if (!rec.swept) {
        const files = await this.records.listStoreFiles(id);
        await Promise.all(files.filter((f) => f.file.status === "in_progress").map((f) => this.deps.indexer.cancel(id, f.file.id).catch(() => {})));
        await this.deps.index.dropStore(id);
        await this.records.putVectorStore({ ...rec, swept: true });
        this.deps.metrics.filesExpired.inc({ object: "vector_store" });
      }
      // (a swept store renamed since was put back on the list: taken off again, not counted twice)
      await this.records.sweptVectorStore(id);
      n++;
    }
    return n;
  }

  /** The route's answer: OpenAI's search results page. */
  async searchPage(owner: string, vectorStoreId: string, body: Body) {
    const outcome = await this.search({
      owner,
      vectorStoreIds: [vectorStoreId],
      query: body.query as string | string[],
      maxNumResults: body.max_num_results as number | undefined,
      filters: body.filters as FileSearchQuery["filters"],
      rankingOptions: body.ranking_options as FileSearchQuery["rankingOptions"],
      rewriteQuery: body.rewrite_query === true,
    });
    return {
      object: "vector_store.search_results.page" as const,
      search_query: outcome.queries,
      data: outcome.hits.map(({ vector_store_id: _vs, ...hit }) => hit),
      has_more: false,
      next_page: null,
    };
  }

  /** `last_active_at` (and the expiry anchored on it) moves on use. */
  private async touch(rec: StoredVectorStore): Promise<void> {
    const now = this.deps.now();
    if (rec.store.last_active_at === now) return;
    rec.store.last_active_at = now;
    rec.store.expires_at = storeExpiresAt(rec.store.expires_after, now);
    await this.records.putVectorStore(rec);
  }
}

function readFileIds(raw: unknown, param: string): string[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw) || !raw.every((id) => typeof id === "string" && id)) throw invalidRequest(`Invalid '${param}': expected an array of file ids.`, param, "invalid_type");
  if (raw.length > 2000) throw invalidRequest(`Invalid '${param}': at most 2000 files.`, param, "invalid_value");
  return [...new Set(raw as string[])];
}

function readBatchFiles(raw: unknown): Array<{ file_id: string; attributes?: unknown; chunking_strategy?: unknown }> {
  if (!Array.isArray(raw) || !raw.every((f) => f && typeof f === "object" && typeof (f as { file_id?: unknown }).file_id === "string")) {
    throw invalidRequest("Invalid 'files': expected an array of objects with a 'file_id'.", "files", "invalid_type");
  }
  return raw as Array<{ file_id: string }>;
}
