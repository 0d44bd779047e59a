/**
 * Retrieval over vector stores: each query is embedded once, then each store is searched by
 * vector (cosine) and by full text (BM25), both inside LanceDB with the request's `filters` as
 * their where-clause, and every list is fused by reciprocal rank (fusion.ts), weighted by
 * `ranking_options.hybrid_search` (a weight of 0 skips that search; `ranker: none`: the vector
 * list alone, scored by similarity). Hits below `score_threshold` are left out. With
 * `rewrite_query`, each query is first rewritten into its search terms (rewrite.ts).
 * When the embedding model is down, a hybrid search answers from full text alone (logged),
 * rather than not at all; a vector-only one is a 503.
 */
import { ApiError, invalidRequest, isKnownError } from "../../ops/errors.js";
import type { FileStore } from "../../store/files.js";
import type { FileSearchHit, FileSearchOutcome, FileSearchQuery, RankingOptions } from "../../tools/file-search/library.js";
import { readHybridSearch } from "../../tools/file-search/tool.js";
import { SpanKind, failed, type Tracing } from "../../tracing/index.js";
import type { Logger } from "../../ops/log.js";
import type { Metrics } from "../../ops/metrics.js";
import type { Embedder } from "../ingest/embed.js";
import { checkFilter, filterSql } from "./filters.js";
import { cosineScore, reciprocalRankFusion } from "./fusion.js";
import { rewriteQuery } from "./rewrite.js";
import type { ChunkRow, VectorIndex } from "./vector-index.js";

export const MAX_RESULTS = 50;
const RANKERS = new Set(["auto", "default-2024-11-15", "none"]);

/** A search request's fields checked as OpenAI checks them (400 naming the field). */
export function checkSearch(q: Pick<FileSearchQuery, "query" | "maxNumResults" | "filters" | "rankingOptions" | "rewriteQuery">): {
  queries: string[];
  max: number;
  ranker: "hybrid" | "vector";
  threshold: number;
  /** The fusion's weights of the vector and the full-text lists (0: that search is not run). */
  weights: { embedding: number; text: number };
} {
  const raw = q.query as unknown;
  const queries = typeof raw === "string" ? [raw] : Array.isArray(raw) && raw.every((s) => typeof s === "string") ? (raw as string[]) : null;
  if (!queries || queries.length === 0 || queries.every((s) => s.trim() === "")) throw invalidRequest("Missing required parameter: 'query' (a string or an array of strings).", "query", "missing_required_parameter");
  const max = q.maxNumResults ?? 10;
  if (!Number.isInteger(max) || max < 1 || max > MAX_RESULTS) throw invalidRequest(`Invalid 'max_num_results': expected an integer from 1 to ${MAX_RESULTS}.`, "max_num_results", "invalid_value");
  checkFilter(q.filters);
  const opts = (q.rankingOptions ?? {}) as RankingOptions;
  if (typeof opts !== "object") throw invalidRequest("Invalid 'ranking_options': expected an object.", "ranking_options", "invalid_type");
  if (opts.ranker !== undefined && !RANKERS.has(opts.ranker)) throw invalidRequest("Invalid 'ranking_options.ranker': expected 'auto', 'default-2024-11-15' or 'none'.", "ranking_options.ranker", "invalid_value");
  const threshold = opts.score_threshold ?? 0;
  if (typeof threshold !== "number" || !(threshold >= 0 && threshold <= 1)) throw invalidRequest("Invalid 'ranking_options.score_threshold': expected a number from 0 to 1.", "ranking_options.score_threshold", "invalid_value");
  const hybrid = readHybridSearch(opts.hybrid_search, "ranking_options.hybrid_search");
  const ranker = opts.ranker === "none" ? "vector" : "hybrid";
  const weights = ranker === "vector" ? { embedding: 1, text: 0 } : { embedding: hybrid?.embedding_weight ?? 1, text: hybrid?.text_weight ?? 1 };
  const asked = queries.filter((s) => s.trim() !== "");
  return { queries: q.rewriteQuery ? asked.map(rewriteQuery) : asked, max, ranker, threshold, weights };
}

export interface SearchDeps {
  records: FileStore;
  index: VectorIndex;
  embedder: Embedder;
  metrics: Metrics;
  log: Logger;
  tracing: Tracing;
}

/** Searches stores the caller has already checked exist and are the owner's. */
export async function searchStores(deps: SearchDeps, q: FileSearchQuery): Promise<FileSearchOutcome> {
  const checked = checkSearch(q);
  const filter = checkFilter(q.filters);
  const started = performance.now();
  const span = deps.tracing.startChild("file_search search", SpanKind.INTERNAL, { "router.file_search.stores": q.vectorStoreIds.length, "router.file_search.ranker": checked.ranker });
  const run = async (): Promise<FileSearchOutcome> => {
    const signal = q.signal ?? new AbortController().signal;
    const { weights } = checked;
    let vectors: number[][] | null = null;
    let embeddingTokens = 0;
    try {
      if (weights.embedding > 0) {
        const embedded = await deps.embedder.embed(checked.queries, signal);
        vectors = embedded.vectors;
        embeddingTokens = embedded.tokens;
        deps.metrics.embeddingTokens.inc({ use: "query" }, embeddingTokens);
      }
    } catch (err) {
      if (weights.text === 0 || signal.aborted) throw asUnavailable(err);
      deps.log.warn({ err: (err as Error)?.message }, "file_search: the embedding model failed; answering from full-text search alone");
    }
    const fetch = Math.max(checked.max * 2, 20);
    const where = filter ? (columns: ReadonlySet<string>) => filterSql(filter, columns) : undefined;
    const perStore = await Promise.all(
      q.vectorStoreIds.map(async (vectorStoreId) => {
        const lists: ChunkRow[][] = [];
        const listWeights: number[] = [];
        for (let i = 0; i < checked.queries.length; i++) {
          if (vectors) lists.push(await deps.index.search(vectorStoreId, { vector: vectors[i], where, limit: fetch })), listWeights.push(weights.embedding);
          if (weights.text > 0) lists.push(await deps.index.search(vectorStoreId, { text: checked.queries[i], where, limit: fetch })), listWeights.push(weights.text);
        }
        const ranked =
          checked.ranker === "vector"
            ? dedupe(lists.flat().map((row) => ({ item: row, score: cosineScore(row._distance ?? 2) })))
            : reciprocalRankFusion(lists, (row) => row.id, listWeights);
        return ranked.map((r) => ({ ...r, vectorStoreId }));
      }),
    );
    const best = perStore.flat().filter((r) => r.score >= checked.threshold).sort((a, b) => b.score - a.score).slice(0, checked.max);
    // Attributes as they are now (an update does not wait for the index); a file detached while
    // its chunks were being removed is no hit.
    const attached = new Map<string, { attributes: FileSearchHit["attributes"] } | null>();
    for (const r of best) {
      const key = `${r.vectorStoreId}\u0000${r.item.file_id}`;
      if (!attached.has(key)) attached.set(key, (await deps.records.getStoreFile(r.vectorStoreId, r.item.file_id))?.file ?? null);
    }
    const hits: FileSearchHit[] = [];
    for (const r of best) {
      const file = attached.get(`${r.vectorStoreId}\u0000${r.item.file_id}`);
      if (!file) continue;
      hits.push({ file_id: r.item.file_id, filename: r.item.filename, score: round(r.score), attributes: file.attributes ?? null, content: [{ type: "text", text: r.item.text }], vector_store_id: r.vectorStoreId });
    }
    span?.setAttribute("router.file_search.results", hits.length);
    return { hits, queries: checked.queries, embeddingTokens };
  };
  try {
    return await (span ? deps.tracing.within(span, run) : run());
  } catch (err) {
    if (span) failed(span, err);
    throw err;
  } finally {
    span?.end();
    deps.metrics.fileSearchDuration.observe({ ranker: checked.ranker }, (performance.now() - started) / 1000);
  }
}

/** The best score of each chunk (several queries may find it). */
function dedupe<T extends { item: ChunkRow; score: number }>(ranked: T[]): T[] {
  const best = new Map<string, T>();
  for (const r of ranked) {
    const seen = best.get(r.item.id);
    if (!seen || seen.score < r.score) best.set(r.item.id, r);
  }
  return [...best.values()].sort((a, b) => b.score - a.score);
}

function round(score: number): number {
  return Math.round(score * 1e6) / 1e6;
}

function asUnavailable(err: unknown): unknown {
  if (isKnownError(err)) return err;
  return new ApiError(503, `The embedding model is unavailable: ${(err as Error)?.message ?? err}`, { type: "server_error", code: "embedding_model_unavailable" });
}
