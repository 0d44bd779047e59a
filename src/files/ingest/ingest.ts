/**
 * Indexing a vector store's file, as a job: read the bytes, parse, chunk, embed (in batches,
 * each call retried), write the chunks to the index, then mark the store's file `completed`
 * with its `usage_bytes`. The job runs on the store's own queue (`Stores.fileJobs`): in Redis
 * mode BullMQ's, so a restart or a dead instance hands it to another instance (re-running it is
 * harmless: the index replaces a file's chunks); in memory mode an in-process queue.
 *
 * Whatever goes wrong ends the file `failed` with `last_error` (`invalid_file`: unreadable;
 * `unsupported_file`: a type file_search does not read; `server_error`: the embedding model or
 * the index, after the retries), never `in_progress`: a job the queue gives up on (stalled
 * too often, dropped at a memory-mode shutdown) is marked failed through `onAbandoned`.
 */
import type { Logger } from "../../ops/log.js";
import type { Metrics } from "../../ops/metrics.js";
import type { FileStore, VectorStoreFileRecord } from "../../store/files.js";
import { jobAbortKind, type JobContext, type JobQueue } from "../../store/types.js";
import { failed, type Tracing, type TraceCarrier } from "../../tracing/index.js";
import type { BlobStore } from "../blobs.js";
import { chunkText } from "./chunk.js";
import type { Embedder } from "./embed.js";
import { ParseError, parseFile, readable } from "./parse.js";
import type { VectorIndex } from "../retrieval/vector-index.js";

export interface IndexingDeps {
  records: FileStore;
  blobs: BlobStore;
  index: VectorIndex;
  embedder: Embedder;
  jobs: JobQueue;
  metrics: Metrics;
  log: Logger;
  tracing: Tracing;
  /** Texts per embeddings call and attempts per call (tools.file_search). */
  settings(): { batch: number; attempts: number };
  /** Milliseconds before the n-th retry (tests make it 0). */
  backoffMs?: (attempt: number) => number;
}

interface IndexingPayload {
  vectorStoreId: string;
  fileId: string;
  trace?: TraceCarrier;
}

type LastError = NonNullable<VectorStoreFileRecord["last_error"]>;

class IndexingError extends Error {
  constructor(readonly code: LastError["code"], message: string) {
    super(message);
  }
}

/** The job id of a store's file: BullMQ's ids may not hold `:`. */
export function indexingJobId(vectorStoreId: string, fileId: string): string {
  return `${vectorStoreId}.${fileId}`;
}

export class Indexer {
  constructor(private readonly deps: IndexingDeps) {}

  /** Queues the indexing of a store's file (already recorded `in_progress`). */
  async enqueue(vectorStoreId: string, fileId: string): Promise<void> {
    const payload: IndexingPayload = { vectorStoreId, fileId, trace: this.deps.tracing.carrier() };
    await this.deps.jobs.enqueue({ responseId: indexingJobId(vectorStoreId, fileId), payload });
  }

  cancel(vectorStoreId: string, fileId: string): Promise<void> {
    return this.deps.jobs.cancel(indexingJobId(vectorStoreId, fileId));
  }

  start(concurrency: number): void {
    this.deps.jobs.start((job, signal) => this.run(job, signal), concurrency, {
      onRedelivered: async () => "run",
      onAbandoned: async (jobId, reason) => {
        const [vectorStoreId, fileId] = jobId.split(".");
        if (vectorStoreId && fileId) await this.fail(vectorStoreId, fileId, new IndexingError("server_error", `Indexing was abandoned: ${reason}`));
      },
    });
  }

  private async run(job: JobContext, signal: AbortSignal): Promise<void> {
    const { vectorStoreId, fileId, trace } = job.payload as IndexingPayload;
    const span = this.deps.tracing.startJob("file_search ingest", trace, { "router.vector_store.id": vectorStoreId, "router.file.id": fileId, "router.job.attempt": job.attempt });
    const work = () => this.index(vectorStoreId, fileId, signal);
    try {
      const chunks = await (span ? this.deps.tracing.within(span, work) : work());
      span?.setAttribute("router.file_search.chunks", chunks);
    } catch (err) {
      if (span) failed(span, err);
      const kind = jobAbortKind(signal);
      // Going back to the queue for another instance: leave the file in_progress for it.
      if (kind === "handed_back") throw err;
      if (kind === "cancelled") {
        await this.deps.records.updateStoreFile(vectorStoreId, fileId, { status: "cancelled" }).catch(() => {});
        this.deps.metrics.filesIndexed.inc({ outcome: "cancelled" });
        return;
      }
      const cause = err instanceof IndexingError ? err : new IndexingError("server_error", kind === "shutdown" ? "The router shut down while indexing the file." : `Indexing failed: ${(err as Error)?.message ?? err}`);
      await this.fail(vectorStoreId, fileId, cause);
    } finally {
      span?.end();
    }
  }

  private async fail(vectorStoreId: string, fileId: string, err: IndexingError): Promise<void> {
    this.deps.log.warn({ vector_store_id: vectorStoreId, file_id: fileId, code: err.code, err: err.message }, "a vector store file failed to index");
    const updated = await this.deps.records.updateStoreFile(vectorStoreId, fileId, { status: "failed", last_error: { code: err.code, message: err.message } }).catch(() => null);
    if (!updated) return;
    this.deps.metrics.filesIndexed.inc({ outcome: "failed" });
    this.deps.metrics.indexingFailures.inc({ code: err.code });
  }

  /** Indexes the file; resolves with its chunk count. */
  private async index(vectorStoreId: string, fileId: string, signal: AbortSignal): Promise<number> {
    const { records, blobs, index } = this.deps;
    const attached = await records.getStoreFile(vectorStoreId, fileId);
    // Detached or cancelled meanwhile: nothing to do.
    if (!attached || attached.file.status !== "in_progress") return 0;
    const stored = await records.getFile(fileId);
    if (!stored) throw new IndexingError("invalid_file", "The file was deleted before it could be indexed.");
    if (!readable(stored.mime)) throw new IndexingError("unsupported_file", `Files of type ${stored.mime} are not supported for file_search.`);
    let bytes: Buffer;
    try {
      bytes = await blobs.read(fileId);
    } catch (err) {
      throw new IndexingError("server_error", `The file's bytes could not be read: ${(err as Error).message}`);
    }
    let text: string;
    try {
      text = await parseFile(bytes, stored.mime);
    } catch (err) {
      throw new IndexingError("invalid_file", err instanceof ParseError ? err.message : `The file could not be parsed: ${(err as Error).message}`);
    }
    const chunks = await chunkText(text, attached.file.chunking_strategy);
    if (chunks.length === 0) throw new IndexingError("invalid_file", "The file contains no text to index.");
    signal.throwIfAborted();
    const vectors = await this.embedAll(chunks.map((c) => c.text), signal);
    signal.throwIfAborted();
    await index.addFile(vectorStoreId, fileId, stored.file.filename, chunks.map((c, i) => ({ text: c.text, vector: vectors[i]! })), attached.file.attributes);
    const usage = chunks.reduce((sum, c) => sum + Buffer.byteLength(c.text) + 4 * vectors[0]!.length, 0);
    const done = await records.updateStoreFile(vectorStoreId, fileId, { status: "completed", usage_bytes: usage, last_error: null });
    // Detached while it was indexed: its chunks go too.
    if (!done) await index.removeFile(vectorStoreId, fileId);
    else {
      this.deps.metrics.filesIndexed.inc({ outcome: "completed" });
      this.deps.metrics.chunksIndexed.inc(chunks.length);
    }
    return chunks.length;
  }

  /** Every text's vector, in batches; each call tried `attempts` times with a growing pause. */
  private async embedAll(texts: string[], signal: AbortSignal): Promise<number[][]> {
    const { batch, attempts } = this.deps.settings();
    const out: number[][] = [];
    for (let at = 0; at < texts.length; at += batch) {
      const part = texts.slice(at, at + batch);
      for (let attempt = 1; ; attempt++) {
        try {
          const { vectors, tokens } = await this.deps.embedder.embed(part, signal);
          this.deps.metrics.embeddingTokens.inc({ use: "index" }, tokens);
          out.push(...vectors);
          break;
        } catch (err) {
          signal.throwIfAborted();
          if (attempt >= attempts) throw new IndexingError("server_error", `The embedding model failed: ${(err as Error)?.message ?? err}`);
          await sleep(this.deps.backoffMs?.(attempt) ?? 500 * 2 ** (attempt - 1), signal);
        }
      }
    }
    return out;
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (ms <= 0) return resolve();
    const t = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
