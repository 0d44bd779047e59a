/**
 * What src/tools/search/ holds:
 * the hosted `web_search` tool: one `SearchProvider` per search API (`searxng.ts`, `brave.ts`,
 * `tavily.ts`, made by `createSearchProvider` from `tools.web_search`) over one HTTP call with
 * timeout, abort and key scrubbing (`http.ts`); the domain filter and result cleaning
 * (`results.ts`), location parameters (`location.ts`), and the pure helpers for the loop: the
 * function the model sees and the text it reads (`output.ts`), the `web_search_call` item,
 * `url_citation` annotations (`citations.ts`), the request's tool as a `SearchQuery` and the
 * model's call as its query (`tool.ts`)
 */
import type { WebSearchPreviewTool, WebSearchTool } from "openai/resources/responses/responses";
import { resultCount } from "./output.js";
import type { SearchQuery } from "./types.js";

/** A request's web search tool, either generation of it. */
export type WebSearchToolParam = WebSearchTool | WebSearchPreviewTool;

/** `web_search`, `web_search_preview` and their dated variants (`web_search_2025_08_26`, `web_search_preview_2025_03_11`, later ones). */
const WEB_SEARCH_TYPE = /^web_search(?:_preview)?(?:_\d{4}_\d{2}_\d{2})?$/;

export function isWebSearchType(type: unknown): boolean {
  return typeof type === "string" && WEB_SEARCH_TYPE.test(type);
}

/** The SearchQuery for one query the model asked for, with the request's tool settings (context size, domains, location). */
export function searchQueryFor(tool: WebSearchToolParam, query: string): SearchQuery {
  const q: SearchQuery = { query, count: resultCount(tool.search_context_size) };
  const domains = "filters" in tool ? tool.filters?.allowed_domains : undefined;
  if (domains && domains.length > 0) q.allowedDomains = domains;
  const loc = tool.user_location;
  if (loc) {
    const location: NonNullable<SearchQuery["userLocation"]> = {};
    if (loc.country) location.country = loc.country;
    if (loc.city) location.city = loc.city;
    if (loc.region) location.region = loc.region;
    if (loc.timezone) location.timezone = loc.timezone;
    if (Object.keys(location).length > 0) q.userLocation = location;
  }
  return q;
}

/**
 * The query of the model's call of WEB_SEARCH_FUNCTION: `{"query": "..."}` as asked, and what
 * small models write instead (a JSON string, `queries: [...]`, plain text). Null when there is no query.
 */
export function searchArguments(args: string): string | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch {
    const text = args.trim();
    return text && !/^[{[]/.test(text) ? text : null;
  }
  let query: unknown = parsed;
  if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) {
    const o = parsed as { query?: unknown; queries?: unknown };
    query = o.query ?? (Array.isArray(o.queries) ? o.queries[0] : undefined);
  }
  return typeof query === "string" && query.trim() ? query.trim() : null;
}
