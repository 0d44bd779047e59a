import type { WebSearchConfig } from "../../config/schema.js";
import { callProvider, endpointUrl, withLocationFallback } from "./http.js";
import { tavilyCountry } from "./location.js";
import { allowedDomains, cleanResults } from "./results.js";
import { SearchError, type SearchProvider, type SearchQuery, type SearchResult } from "./types.js";

const TAVILY_API = "https://api.tavily.com";
/** Tavily's largest `max_results`. */
const MAX_COUNT = 20;

/** The Tavily search API (`POST /search`, key as a Bearer token and in the body; domains by `include_domains`). */
export class TavilyProvider implements SearchProvider {
  readonly name = "tavily";
  private readonly endpoint: URL;

  constructor(private readonly cfg: WebSearchConfig) {
    if (!cfg.api_key) throw new Error("tools.web_search: provider tavily needs an api_key");
    this.endpoint = endpointUrl(cfg.url ?? TAVILY_API, "/search");
  }

  async search(q: SearchQuery, signal: AbortSignal): Promise<SearchResult[]> {
    const domains = allowedDomains(q);
    const country = tavilyCountry(q);
    const body = await withLocationFallback(country !== undefined, (withLocation) => {
      // The key goes both ways Tavily reads it: the Bearer header (current) and `api_key` in the body (older API and compatible servers).
      const request: Record<string, unknown> = {
        api_key: this.cfg.api_key,
        query: q.query,
        topic: "general",
        search_depth: "basic",
        max_results: Math.max(1, Math.min(q.count, MAX_COUNT)),
      };
      if (domains.length > 0) request.include_domains = domains;
      // Tavily takes a country only with topic "general" (set above).
      if (withLocation && country) request.country = country;
      return callProvider({
        provider: this.name,
        url: this.endpoint,
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json", authorization: `Bearer ${this.cfg.api_key}` },
        body: JSON.stringify(request),
        timeoutMs: this.cfg.timeout,
        secret: this.cfg.api_key,
        signal,
      });
    });
    const results = (body as { results?: unknown })?.results;
    if (!Array.isArray(results)) throw new SearchError(this.name, "invalid", "web search provider tavily answered without a results list");
    return cleanResults(
      results.map((r: { url?: unknown; title?: unknown; content?: unknown }) => ({ url: r?.url, title: r?.title, snippet: r?.content })),
      q,
      domains,
    );
  }
}
