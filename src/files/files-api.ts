/**
 * The Files API: `POST /v1/files` (multipart, streamed to disk), list, retrieve, `content`,
 * delete. A file belongs to the key that uploaded it (another key's is not found), as a stored
 * response does. As OpenAI: `content` is refused for `assistants` files and served for the
 * others (`user_data`, ...); a type file_search cannot read is refused at upload for
 * `assistants`; an empty file is refused. Deleting a file removes it from every vector store
 * that held it (their records and their index) before its bytes go.
 *
 * `expires_after` (`anchor: created_at`, 1 hour to 30 days) sets `expires_at`; once it passes the
 * file is gone: a read finds it expired and removes it as a delete does (404), a listing leaves
 * it out and removes it, and the expiry sweep (expiry.ts) removes the ones nobody reads.
 */
import { invalidRequest, notFound } from "../ops/errors.js";
import type { Metrics } from "../ops/metrics.js";
import type { FileStore, StoredFile } from "../store/files.js";
import type { BlobStore } from "./blobs.js";
import { mimeOf } from "./ingest/parse.js";
import { readUpload } from "./upload.js";
import { expired, newId, page, type Clock, type ListQuery } from "./views.js";

const PURPOSES = new Set(["assistants", "batch", "fine-tune", "vision", "user_data", "evals"]);

export const fileNotFound = (id: string, param: string | null = null) => notFound(`No such File object: ${id}`, param, null);

export interface FilesApiDeps {
  records: FileStore;
  blobs: BlobStore;
  metrics: Metrics;
  maxBytes(): number;
  now: Clock;
  /** Removes a file from a vector store (record and index): the vector stores' own removal. */
  detach(vectorStoreId: string, fileId: string): Promise<void>;
}

export class FilesApi {
  constructor(private readonly deps: FilesApiDeps) {}

  async upload(owner: string, headers: Record<string, string>, body: Parameters<typeof readUpload>[1]) {
    const { fields, file } = await readUpload(headers, body, this.deps.blobs, this.deps.maxBytes());
    const discard = () => (file ? this.deps.blobs.discard(file.temp).catch(() => {}) : Promise.resolve());
    try {
      const purpose = fields.purpose;
      if (!purpose) throw invalidRequest("Missing required parameter: 'purpose'.", "purpose", "missing_required_parameter");
      if (!PURPOSES.has(purpose)) throw invalidRequest(`Invalid value for 'purpose': '${purpose}'. Expected one of ${[...PURPOSES].join(", ")}.`, "purpose", "invalid_value");
      if (!file) throw invalidRequest("Missing required parameter: 'file'.", "file", "missing_required_parameter");
      if (file.bytes === 0) throw invalidRequest("The file is empty.", "file", "empty_file");
      let mime = mimeOf(file.filename, file.mime);
      if (!mime && purpose === "assistants") {
        throw invalidRequest(`Invalid file format for file_search: '${file.filename}'. Supported: text, Markdown, code, JSON, HTML and PDF files.`, "file", "unsupported_file");
      }
      mime ??= file.mime || "application/octet-stream";
      const created = this.deps.now();
      const expiresAt = readFileExpiry(fields, created);
      const rec: StoredFile = {
        file: { id: newId("file-"), object: "file", bytes: file.bytes, created_at: created, filename: file.filename, purpose, status: "processed", ...(expiresAt === null ? {} : { expires_at: expiresAt }) },
        owner,
        mime,
      };
      await this.deps.blobs.commit(file.temp, rec.file.id);
      await this.deps.records.putFile(rec);
      this.deps.metrics.filesUploaded.inc({ purpose });
      this.deps.metrics.fileBytesUploaded.inc({ purpose }, file.bytes);
      return rec.file;
    } finally {
      await discard();
    }
  }

  /** The owner's live file, or 404 (unknown, another key's, or expired: then it is deleted). */
  async get(owner: string, id: string, param: string | null = null): Promise<StoredFile> {
    const rec = await this.deps.records.getFile(id);
    if (!rec || rec.owner !== owner) throw fileNotFound(id, param);
    if (await this.expire(rec)) throw fileNotFound(id, param);
    return rec;
  }

  /** Removes a file whose `expires_at` passed (as a delete does); whether it had. */
  async expire(rec: StoredFile): Promise<boolean> {
    if (!expired(rec.file.expires_at, this.deps.now())) return false;
    try {
      await this.remove(rec);
      this.deps.metrics.filesExpired.inc({ object: "file" });
    } catch {
      // Gone for the caller all the same; the record stays among the expired ones for the sweep to finish.
    }
    return true;
  }

  /** The sweep: removes up to `limit` expired files, whoever owns them; how many. */
  async sweep(limit: number): Promise<number> {
    let n = 0;
    for (const id of await this.deps.records.expiredFiles(this.deps.now(), limit)) {
      const rec = await this.deps.records.getFile(id);
      if (rec && (await this.expire(rec))) n++;
    }
    return n;
  }

  async list(owner: string, q: ListQuery & { purpose?: string }) {
    const all = await this.deps.records.listFiles(owner);
    const gone = await Promise.all(all.map((r) => this.expire(r)));
    const files = all.filter((r, i) => !gone[i] && (!q.purpose || r.file.purpose === q.purpose));
    const out = page(files.map((r) => r.file), q, 10_000, 10_000);
    return { ...out, object: "list" as const };
  }

  async retrieve(owner: string, id: string) {
    return (await this.get(owner, id)).file;
  }

  /** The bytes and media type of `GET /v1/files/{id}/content`. */
  async content(owner: string, id: string): Promise<{ bytes: Buffer; mime: string; filename: string }> {
    const rec = await this.get(owner, id);
    if (rec.file.purpose === "assistants") throw invalidRequest("Not allowed to download files of purpose: assistants.", null, null);
    return { bytes: await this.readBytes(rec), mime: rec.mime, filename: rec.file.filename };
  }

  async readBytes(rec: StoredFile): Promise<Buffer> {
    try {
      return await this.deps.blobs.read(rec.file.id);
    } catch {
      throw fileNotFound(rec.file.id);
    }
  }

  async delete(owner: string, id: string) {
    const rec = await this.get(owner, id);
    await this.remove(rec);
    return { id, object: "file" as const, deleted: true };
  }

  /** Out of every vector store first, then the record, then the bytes. */
  private async remove(rec: StoredFile): Promise<void> {
    for (const vs of await this.deps.records.storesHolding(rec.file.id)) await this.deps.detach(vs, rec.file.id);
    await this.deps.records.deleteFile(rec.file.id);
    await this.deps.blobs.remove(rec.file.id).catch(() => {});
  }
}

/** `expires_after[anchor]=created_at` and `expires_after[seconds]` (1 hour to 30 days) of the form. */
function readFileExpiry(fields: Record<string, string>, created: number): number | null {
  const anchor = fields["expires_after[anchor]"];
  const seconds = fields["expires_after[seconds]"];
  if (anchor === undefined && seconds === undefined) return null;
  if (anchor !== "created_at") throw invalidRequest("Invalid 'expires_after.anchor': expected 'created_at'.", "expires_after.anchor", "invalid_value");
  const n = Number(seconds);
  if (!Number.isInteger(n) || n < 3600 || n > 2_592_000) throw invalidRequest("Invalid 'expires_after.seconds': expected an integer from 3600 to 2592000.", "expires_after.seconds", "invalid_value");
  return created + n;
}
