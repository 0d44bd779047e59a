/**
 * Chunking as OpenAI does it: `static` windows of `max_chunk_size_tokens` tokens, each starting
 * `max - overlap` tokens after the one before (so neighbours share `chunk_overlap_tokens`), and
 * `auto` = static 800/400. Tokens are counted by a real tokenizer, js-tiktoken with o200k_base
 * (the encoding of OpenAI's current models), on a worker thread of its own (chunk-worker.ts),
 * made on the first file and kept: building the tokenizer and encoding a long file would
 * otherwise stall the event loop every request runs on.
 */
import { Worker } from "node:worker_threads";
import { invalidRequest } from "../../ops/errors.js";
import type { ChunkingStrategyRecord } from "../../store/files.js";

export const AUTO_CHUNKING = { type: "static", static: { max_chunk_size_tokens: 800, chunk_overlap_tokens: 400 } } as const satisfies ChunkingStrategyRecord;

/** A request's `chunking_strategy` (absent or `auto`: 800/400) checked as OpenAI checks it. */
export function readChunkingStrategy(raw: unknown, param = "chunking_strategy"): ChunkingStrategyRecord {
  if (raw === undefined || raw === null) return AUTO_CHUNKING;
  const s = raw as { type?: unknown; static?: { max_chunk_size_tokens?: unknown; chunk_overlap_tokens?: unknown } };
  if (typeof raw !== "object" || (s.type !== "auto" && s.type !== "static")) throw invalidRequest(`Invalid '${param}.type': expected 'auto' or 'static'.`, `${param}.type`, "invalid_value");
  if (s.type === "auto") return AUTO_CHUNKING;
  const max = s.static?.max_chunk_size_tokens;
  const overlap = s.static?.chunk_overlap_tokens;
  if (typeof max !== "number" || !Number.isInteger(max) || max < 100 || max > 4096) {
    throw invalidRequest(`Invalid '${param}.static.max_chunk_size_tokens': expected an integer from 100 to 4096.`, `${param}.static.max_chunk_size_tokens`, "invalid_value");
  }
  if (typeof overlap !== "number" || !Number.isInteger(overlap) || overlap < 0 || overlap > max / 2) {
    throw invalidRequest(`Invalid '${param}.static.chunk_overlap_tokens': expected an integer from 0 to half of max_chunk_size_tokens.`, `${param}.static.chunk_overlap_tokens`, "invalid_value");
  }
  return { type: "static", static: { max_chunk_size_tokens: max, chunk_overlap_tokens: overlap } };
}

export interface Chunk {
  text: string;
  tokens: number;
}

/** The text's chunks under a strategy (`other`, a strategy OpenAI reports for old files, chunks as `auto`). */
export function chunkText(text: string, strategy: ChunkingStrategyRecord): Promise<Chunk[]> {
  const { max_chunk_size_tokens: max, chunk_overlap_tokens: overlap } = strategy.type === "static" ? strategy.static : AUTO_CHUNKING.static;
  return tokenizerThread().chunk(text, max, overlap);
}

/** The worker thread and the requests waiting for it, answered in order. */
class TokenizerThread {
  private readonly worker: Worker;
  private readonly waiting = new Map<number, { resolve(c: Chunk[]): void; reject(e: Error): void }>();
  private next = 0;

  constructor() {
    // Under the tests the sources are .ts (Node strips the types); built, they are .js.
    const file = import.meta.url.endsWith(".ts") ? "./chunk-worker.ts" : "./chunk-worker.js";
    this.worker = new Worker(new URL(file, import.meta.url));
    this.worker.unref();
    this.worker.on("message", (m: { id: number; chunks?: Chunk[]; error?: string }) => {
      const w = this.waiting.get(m.id);
      this.waiting.delete(m.id);
      if (this.waiting.size === 0) this.worker.unref();
      if (m.error !== undefined) w?.reject(new Error(m.error));
      else w?.resolve(m.chunks ?? []);
    });
    this.worker.on("error", (err) => this.fail(err));
    this.worker.on("exit", () => this.fail(new Error("the tokenizer thread exited")));
  }

  private fail(err: Error): void {
    if (thread === this) thread = null;
    for (const w of this.waiting.values()) w.reject(err);
    this.waiting.clear();
  }

  chunk(text: string, max: number, overlap: number): Promise<Chunk[]> {
    const id = ++this.next;
    // Held while it works: the process does not end under a file being chunked.
    this.worker.ref();
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.worker.postMessage({ id, text, max, overlap });
    });
  }
}

let thread: TokenizerThread | null = null;
function tokenizerThread(): TokenizerThread {
  return (thread ??= new TokenizerThread());
}
