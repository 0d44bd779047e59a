import type { WebSearchConfig } from "../../config/schema.js";
import { callProvider, endpointUrl, withLocationFallback } from "./http.js";
import { searxngLanguage } from "./location.js";
import { allowedDomains, cleanResults, withSiteFilter } from "./results.js";
import { SearchError, type SearchProvider, type SearchQuery, type SearchResult } from "./types.js";

/**
 * SearXNG's JSON API (`GET {url}/search?q=...&format=json`), self-hosted; the instance must list
 * `json` in `search.formats` of its settings.yml (it answers 403 otherwise).
 */
export class SearxngProvider implements SearchProvider {
  readonly name = "searxng";
  private readonly endpoint: URL;

  constructor(private readonly cfg: WebSearchConfig) {
    if (!cfg.url) throw new Error("tools.web_search: provider searxng needs a url");
    this.endpoint = endpointUrl(cfg.url, "/search");
  }

  async search(q: SearchQuery, signal: AbortSignal): Promise<SearchResult[]> {
    const domains = allowedDomains(q);
    const language = searxngLanguage(q);
    const body = await withLocationFallback(language !== undefined, (located) => {
      const url = new URL(this.endpoint);
      url.searchParams.set("q", withSiteFilter(q.query, domains));
      url.searchParams.set("format", "json");
      if (located && language) url.searchParams.set("language", language);
      const headers: Record<string, string> = { accept: "application/json" };
      if (this.cfg.api_key) headers.authorization = `Bearer ${this.cfg.api_key}`;
      return callProvider({ provider: this.name, url, method: "GET", headers, timeoutMs: this.cfg.timeout, secret: this.cfg.api_key, signal }).catch((err: unknown) => {
        if (err instanceof SearchError && err.status === 403) {
          throw new SearchError(this.name, "status", `${err.message} (does the SearXNG instance list json in search.formats of its settings.yml?)`, 403);
        }
        throw err;
      });
    });
    const results = (body as { results?: unknown })?.results;
    if (!Array.isArray(results)) throw new SearchError(this.name, "invalid", "web search provider searxng answered without a results list");
    return cleanResults(
      results.map((r: { url?: unknown; title?: unknown; content?: unknown }) => ({ url: r?.url, title: r?.title, snippet: r?.content })),
      q,
      domains,
    );
  }
}
