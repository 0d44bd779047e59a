/**
 * The router's Files and Vector Stores, built once per instance by the server and hung on the
 * runtime (`Runtime.files`) for the responses path, which sees only the `FileLibrary` contract
 * (tools/file-search/library.ts). The routes (http/routes/files.ts, vector-stores.ts) call
 * `files` and `vectorStores`. Records are in the router's store (memory or Redis, shared by
 * instances), bytes and the index under `files.storage` (a directory, shared by instances on
 * one volume, or an `s3://` URI), indexing on the store's job queue.
 */
import { join } from "node:path";
import type { Runtime } from "../runtime/runtime.js";
import type { FileLibrary, FileSearchOutcome, FileSearchQuery, StoredFileContent } from "../tools/file-search/library.js";
import { createBlobStore, isObjectStorage, type BlobStore } from "./blobs.js";
import { PoolEmbedder, type Embedder } from "./ingest/embed.js";
import { FilesApi } from "./files-api.js";
import { Indexer } from "./ingest/ingest.js";
import type { UpkeepOptions } from "./retrieval/index-upkeep.js";
import { VectorIndex } from "./retrieval/vector-index.js";
import { VectorStoresApi } from "./vector-stores.js";
import { ExpirySweep } from "./expiry.js";
import { isRouterFileId, nowSeconds, type Clock } from "./views.js";

export interface FilesOptions {
  /** Another embedder than the pool's (the bench's deterministic one). */
  embedder?: Embedder;
  /** Milliseconds before the n-th retry of an embedding call (tests: 0). */
  backoffMs?: (attempt: number) => number;
  /** The clock `expires_after` is read by, unix seconds (tests move it on). */
  clock?: Clock;
  /** Milliseconds between expiry sweeps (expiry.ts); default a minute, 0 none. */
  sweepEveryMs?: number;
  /** When the index folds new rows in and builds its vector index (tests make them small). */
  upkeep?: Partial<UpkeepOptions>;
}

export class Files implements FileLibrary {
  readonly files: FilesApi;
  readonly vectorStores: VectorStoresApi;
  readonly indexer: Indexer;
  readonly expiry: ExpirySweep;

  private constructor(
    private readonly rt: Runtime,
    readonly index: VectorIndex,
    readonly blobs: BlobStore,
    embedder: Embedder,
    opts: FilesOptions,
  ) {
    const records = rt.stores.files;
    const now = opts.clock ?? nowSeconds;
    const common = { records, metrics: rt.metrics, log: rt.log, tracing: rt.tracing };
    this.indexer = new Indexer({
      ...common,
      blobs,
      index,
      embedder,
      jobs: rt.stores.fileJobs,
      settings: () => ({ batch: rt.config.tools.file_search.embedding_batch, attempts: rt.config.tools.file_search.embedding_attempts }),
      backoffMs: opts.backoffMs,
    });
    this.files = new FilesApi({ records, blobs, metrics: rt.metrics, maxBytes: () => rt.config.files.max_bytes, now, detach: (vs, id) => this.vectorStores.detach(vs, id) });
    this.vectorStores = new VectorStoresApi({ ...common, index, embedder, files: this.files, indexer: this.indexer, now });
    this.expiry = new ExpirySweep(this.files, this.vectorStores, rt.log);
  }

  /** Opens the storage (creating the directory) and starts taking indexing jobs. */
  static async open(rt: Runtime, opts: FilesOptions = {}): Promise<Files> {
    const storage = rt.config.files.storage;
    const indexUri = isObjectStorage(storage) ? storage.replace(/\/+$/, "") + "/index" : join(storage, "index");
    const minChunks = rt.config.tools.file_search.vector_index_min_chunks;
    const upkeep = { vectorIndexMinRows: minChunks === 0 ? Number.POSITIVE_INFINITY : minChunks, ...opts.upkeep };
    const index = new VectorIndex(indexUri, upkeep, (table, task, err) => rt.log.warn({ table, task, err: (err as Error)?.message ?? String(err) }, "vector index upkeep failed; it runs again after the next write"));
    const files = new Files(rt, index, createBlobStore(storage), opts.embedder ?? new PoolEmbedder(rt), opts);
    files.indexer.start(rt.config.tools.file_search.indexing_concurrency);
    files.expiry.start(opts.sweepEveryMs ?? 60_000);
    return files;
  }

  search(q: FileSearchQuery): Promise<FileSearchOutcome> {
    return this.vectorStores.search({ ...q, owner: q.owner ?? "" });
  }

  async assertVectorStores(owner: string, vectorStoreIds: string[]): Promise<void> {
    await this.vectorStores.assertStores(owner ?? "", vectorStoreIds);
  }

  async readFile(owner: string, fileId: string): Promise<StoredFileContent> {
    const rec = await this.files.get(owner ?? "", fileId, "file_id");
    return { id: rec.file.id, filename: rec.file.filename, purpose: rec.file.purpose, mime: rec.mime, bytes: await this.files.readBytes(rec) };
  }

  mints(fileId: string): boolean {
    return isRouterFileId(fileId);
  }

  /** After the store's job queue closed (it waits for running jobs). */
  close(): void {
    this.expiry.stop();
    this.index.close();
  }
}
