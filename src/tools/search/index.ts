/**
 * The hosted `web_search` tool's runtime: search providers behind one interface, and the pure
 * helpers that turn their results into what the model reads and what the client sees
 * (the `web_search_call` item and `url_citation` annotations). The tool loop calls this.
 */
import type { WebSearchConfig } from "../../config/schema.js";
import { BraveProvider } from "./brave.js";
import { SearxngProvider } from "./searxng.js";
import { TavilyProvider } from "./tavily.js";
import type { SearchProvider } from "./types.js";

export type { WebSearchConfig } from "../../config/schema.js";
export { codePointIndex, numberMarkers, urlCitations } from "./citations.js";
export { resultCount, resultsForModel, WEB_SEARCH_FUNCTION, webSearchCallItem } from "./output.js";
export { isWebSearchType, searchArguments, searchQueryFor, type WebSearchToolParam } from "./tool.js";
export { SearchError, type SearchFailure, type SearchProvider, type SearchQuery, type SearchResult } from "./types.js";

/** The provider `tools.web_search` names. */
export function createSearchProvider(cfg: WebSearchConfig): SearchProvider {
  switch (cfg.provider) {
    case "searxng":
      return new SearxngProvider(cfg);
    case "brave":
      return new BraveProvider(cfg);
    case "tavily":
      return new TavilyProvider(cfg);
  }
}
