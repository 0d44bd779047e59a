/**
 * The request's `file_search` tool (OpenAI's `FileSearchTool`) as the router runs it: checked
 * when the request arrives (400s as OpenAI words them), then turned into the `FileSearchQuery`
 * each of the model's calls runs against the `FileLibrary`. Pure: no I/O.
 */
import type { FileSearchTool } from "openai/resources/responses/responses";
import { invalidRequest } from "../../ops/errors.js";
import type { AttributeFilter, FileSearchQuery, HybridSearchWeights } from "./library.js";

export type FileSearchToolParam = FileSearchTool;

/** OpenAI's default `max_num_results` for the Responses tool, and its bounds. */
export const DEFAULT_MAX_RESULTS = 10;
const MAX_RESULTS = 50;

const COMPARISONS = new Set(["eq", "ne", "gt", "gte", "lt", "lte", "in", "nin"]);

export function isFileSearchType(type: unknown): boolean {
  return type === "file_search";
}

/** The tool checked field by field; `param` names it in the request (`tools[2]`). */
export function checkFileSearchTool(tool: Record<string, unknown>, param: string): FileSearchToolParam {
  const ids = tool.vector_store_ids;
  if (!Array.isArray(ids) || ids.length === 0 || !ids.every((id) => typeof id === "string" && id !== "")) {
    throw invalidRequest("The file_search tool needs 'vector_store_ids': a non-empty array of vector store ids.", `${param}.vector_store_ids`, ids === undefined ? "missing_required_parameter" : "invalid_value");
  }
  const max = tool.max_num_results;
  if (max !== undefined && max !== null && (typeof max !== "number" || !Number.isInteger(max) || max < 1 || max > MAX_RESULTS)) {
    throw invalidRequest(`Invalid 'max_num_results': expected an integer between 1 and ${MAX_RESULTS}.`, `${param}.max_num_results`, "invalid_value");
  }
  if (tool.filters != null) checkFilter(tool.filters, `${param}.filters`);
  const ranking = tool.ranking_options as { ranker?: unknown; score_threshold?: unknown; hybrid_search?: unknown } | undefined | null;
  if (ranking != null) {
    if (typeof ranking !== "object") throw invalidRequest("Invalid 'ranking_options': expected an object.", `${param}.ranking_options`, "invalid_type");
    const t = ranking.score_threshold;
    if (t !== undefined && (typeof t !== "number" || t < 0 || t > 1)) throw invalidRequest("Invalid 'score_threshold': expected a number between 0 and 1.", `${param}.ranking_options.score_threshold`, "invalid_value");
    if (ranking.ranker !== undefined && typeof ranking.ranker !== "string") throw invalidRequest("Invalid 'ranker': expected a string.", `${param}.ranking_options.ranker`, "invalid_type");
    readHybridSearch(ranking.hybrid_search, `${param}.ranking_options.hybrid_search`);
  }
  return tool as unknown as FileSearchToolParam;
}

/**
 * `ranking_options.hybrid_search` checked (the tool's and a vector store search's): both weights
 * present, finite, non-negative and not both 0; absent or null: null (equal weights).
 */
export function readHybridSearch(raw: unknown, param: string): HybridSearchWeights | null {
  if (raw === undefined || raw === null) return null;
  if (typeof raw !== "object" || Array.isArray(raw)) throw invalidRequest(`Invalid '${param}': expected an object with 'embedding_weight' and 'text_weight'.`, param, "invalid_type");
  const w = raw as Record<string, unknown>;
  for (const key of ["embedding_weight", "text_weight"] as const) {
    const v = w[key];
    if (v === undefined || v === null) throw invalidRequest(`Missing required parameter: '${param}.${key}'.`, `${param}.${key}`, "missing_required_parameter");
    if (typeof v !== "number" || !Number.isFinite(v) || v < 0) throw invalidRequest(`Invalid '${param}.${key}': expected a number of 0 or more.`, `${param}.${key}`, "invalid_value");
  }
  const weights = { embedding_weight: w.embedding_weight as number, text_weight: w.text_weight as number };
  if (weights.embedding_weight === 0 && weights.text_weight === 0) throw invalidRequest(`Invalid '${param}': 'embedding_weight' and 'text_weight' cannot both be 0.`, param, "invalid_value");
  return weights;
}

function checkFilter(f: unknown, param: string): void {
  const filter = f as { type?: unknown; key?: unknown; value?: unknown; filters?: unknown };
  if (!filter || typeof filter !== "object") throw invalidRequest("Invalid 'filters': expected a comparison or compound filter.", param, "invalid_type");
  if (filter.type === "and" || filter.type === "or") {
    if (!Array.isArray(filter.filters)) throw invalidRequest("A compound filter needs 'filters': an array of filters.", `${param}.filters`, "invalid_value");
    filter.filters.forEach((sub, i) => checkFilter(sub, `${param}.filters[${i}]`));
    return;
  }
  if (!COMPARISONS.has(filter.type as string)) {
    throw invalidRequest(`Invalid filter type '${String(filter.type)}': expected one of ${[...COMPARISONS, "and", "or"].join(", ")}.`, `${param}.type`, "invalid_value");
  }
  if (typeof filter.key !== "string" || filter.key === "") throw invalidRequest("A comparison filter needs 'key': the attribute to compare.", `${param}.key`, "invalid_value");
  const v = filter.value;
  const scalar = (x: unknown) => typeof x === "string" || typeof x === "number" || typeof x === "boolean";
  const ok = filter.type === "in" || filter.type === "nin" ? Array.isArray(v) && v.every((x) => typeof x === "string" || typeof x === "number") : scalar(v);
  if (!ok) throw invalidRequest(`Invalid 'value' for a '${String(filter.type)}' filter.`, `${param}.value`, "invalid_value");
}

/** The query one call of the model runs: the request's stores, result count, filters and ranking. */
export function fileSearchQueryFor(tool: FileSearchToolParam, owner: string, query: string, signal?: AbortSignal): FileSearchQuery {
  const q: FileSearchQuery = { owner, vectorStoreIds: tool.vector_store_ids, query, maxNumResults: tool.max_num_results ?? DEFAULT_MAX_RESULTS };
  if (tool.filters) q.filters = tool.filters as AttributeFilter;
  const r = tool.ranking_options;
  if (r && (r.ranker !== undefined || r.score_threshold !== undefined || r.hybrid_search)) {
    q.rankingOptions = {};
    if (r.ranker !== undefined) q.rankingOptions.ranker = r.ranker;
    if (r.score_threshold !== undefined) q.rankingOptions.score_threshold = r.score_threshold;
    if (r.hybrid_search) q.rankingOptions.hybrid_search = r.hybrid_search;
  }
  if (signal) q.signal = signal;
  return q;
}
