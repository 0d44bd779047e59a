import type { WebSearchConfig } from "../../config/schema.js";
import { callProvider, endpointUrl, withLocationFallback } from "./http.js";
import { asciiHeader, braveCountry } from "./location.js";
import { allowedDomains, cleanResults, withSiteFilter } from "./results.js";
import { SearchError, type SearchProvider, type SearchQuery, type SearchResult } from "./types.js";

const BRAVE_API = "https://api.search.brave.com";
/** Brave's largest `count`. */
const MAX_COUNT = 20;

/** The Brave Search API (`GET /res/v1/web/search`, key in `X-Subscription-Token`). */
export class BraveProvider implements SearchProvider {
  readonly name = "brave";
  private readonly endpoint: URL;

  constructor(private readonly cfg: WebSearchConfig) {
    if (!cfg.api_key) throw new Error("tools.web_search: provider brave needs an api_key");
    this.endpoint = endpointUrl(cfg.url ?? BRAVE_API, "/res/v1/web/search");
  }

  async search(q: SearchQuery, signal: AbortSignal): Promise<SearchResult[]> {
    const domains = allowedDomains(q);
    const country = braveCountry(q);
    // Brave's location headers (X-Loc-*) refine local results; names that are not ASCII are left out.
    const loc = q.userLocation;
    const locHeaders: Record<string, string> = {};
    const city = asciiHeader(loc?.city);
    const region = asciiHeader(loc?.region);
    const timezone = asciiHeader(loc?.timezone);
    if (country) locHeaders["x-loc-country"] = country;
    if (city) locHeaders["x-loc-city"] = city;
    if (region) locHeaders["x-loc-state-name"] = region;
    if (timezone) locHeaders["x-loc-timezone"] = timezone;
    const located = country !== undefined || Object.keys(locHeaders).length > 0;

    const body = await withLocationFallback(located, (withLocation) => {
      const url = new URL(this.endpoint);
      url.searchParams.set("q", withSiteFilter(q.query, domains));
      url.searchParams.set("count", String(Math.max(1, Math.min(q.count, MAX_COUNT))));
      if (withLocation && country) url.searchParams.set("country", country);
      const headers: Record<string, string> = { accept: "application/json", "x-subscription-token": this.cfg.api_key!, ...(withLocation ? locHeaders : {}) };
      return callProvider({ provider: this.name, url, method: "GET", headers, timeoutMs: this.cfg.timeout, secret: this.cfg.api_key, signal });
    });
    const web = (body as { web?: { results?: unknown } })?.web;
    // An answer without `web` is a search that found no web pages (Brave leaves the section out).
    if (web !== undefined && !Array.isArray(web?.results)) throw new SearchError(this.name, "invalid", "web search provider brave answered without a web.results list");
    const results = (web?.results ?? []) as { url?: unknown; title?: unknown; description?: unknown }[];
    return cleanResults(
      results.map((r) => ({ url: r?.url, title: r?.title, snippet: r?.description })),
      q,
      domains,
    );
  }
}
