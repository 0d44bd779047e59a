/** What the model asked to search for, with the request's web_search tool settings applied. */
export interface SearchQuery {
  query: string;
  /** How many results to return at most (see resultCount). */
  count: number;
  /** `filters.allowed_domains`: only results on these hosts or their subdomains. */
  allowedDomains?: string[];
  /** `user_location` of the web_search tool (country: ISO 3166-1 alpha-2). */
  userLocation?: { country?: string; city?: string; region?: string; timezone?: string };
}

export interface SearchResult {
  url: string;
  title: string;
  snippet: string;
}

/** One search backend. `name` is the provider's kind as configured (metrics and logs name it). */
export interface SearchProvider {
  readonly name: string;
  /** Resolves with at most `q.count` results; rejects with a SearchError, or with the signal's reason once it aborts. */
  search(q: SearchQuery, signal: AbortSignal): Promise<SearchResult[]>;
}

export type SearchFailure = "status" | "timeout" | "network" | "invalid";

/**
 * A search that failed at the provider. The message names the provider and what went wrong,
 * never its key (an echoed key is scrubbed out of whatever the provider answered).
 */
export class SearchError extends Error {
  constructor(
    readonly provider: string,
    readonly failure: SearchFailure,
    message: string,
    /** The provider's HTTP status, for `status` failures. */
    readonly status?: number,
  ) {
    super(message);
    this.name = "SearchError";
  }
}
