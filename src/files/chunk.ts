/**
 * Chunking as OpenAI does it: `static` windows of `max_chunk_size_tokens` tokens, each starting
 * `max - overlap` tokens after the one before (so neighbours share `chunk_overlap_tokens`), and
 * `auto` = static 800/400. Tokens are counted by a real tokenizer, js-tiktoken with o200k_base
 * (the encoding of OpenAI's current models), loaded once, on the first file. Pure but for that.
 */
import { Tiktoken } from "js-tiktoken/lite";
import o200k from "js-tiktoken/ranks/o200k_base";
import { invalidRequest } from "../ops/errors.js";
import type { ChunkingStrategyRecord } from "../store/files.js";

export const AUTO_CHUNKING = { type: "static", static: { max_chunk_size_tokens: 800, chunk_overlap_tokens: 400 } } as const satisfies ChunkingStrategyRecord;

let encoder: Tiktoken | null = null;
function tokenizer(): Tiktoken {
  return (encoder ??= new Tiktoken(o200k));
}

export function countTokens(text: string): number {
  return tokenizer().encode(text).length;
}

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
export function chunkText(text: string, strategy: ChunkingStrategyRecord): Chunk[] {
  const { max_chunk_size_tokens: max, chunk_overlap_tokens: overlap } = strategy.type === "static" ? strategy.static : AUTO_CHUNKING.static;
  const enc = tokenizer();
  const tokens = enc.encode(text);
  const chunks: Chunk[] = [];
  const step = Math.max(1, max - overlap);
  for (let start = 0; start < tokens.length; start += step) {
    const window = tokens.slice(start, start + max);
    const piece = enc.decode(window).trim();
    if (piece) chunks.push({ text: piece, tokens: window.length });
    if (start + max >= tokens.length) break;
  }
  return chunks;
}
