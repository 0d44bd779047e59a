import type { SearchQuery, SearchResult } from "./types.js";

/**
 * A domain of `filters.allowed_domains` as a bare host: lower case, without scheme, path,
 * port, `*.` or a trailing dot ("https://www.Example.com/x" -> "www.example.com"). Empty when nothing is left.
 */
export function normalizeDomain(domain: string): string {
  return domain
    .trim()
    .toLowerCase()
    .replace(/^[a-z][a-z0-9+.-]*:\/\//, "")
    .replace(/[/?#].*$/, "")
    .replace(/:\d+$/, "")
    .replace(/^\*\./, "")
    .replace(/\.$/, "");
}

/** The allowed domains worth filtering on (normalised, deduplicated); an empty list means no filter. */
export function allowedDomains(q: SearchQuery): string[] {
  return [...new Set((q.allowedDomains ?? []).map(normalizeDomain).filter(Boolean))];
}

/** A URL's host is one of the domains or a subdomain of one (as OpenAI's filter allows subdomains). */
export function hostAllowed(url: string, domains: string[]): boolean {
  if (domains.length === 0) return true;
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase().replace(/\.$/, "");
  } catch {
    return false;
  }
  return domains.some((d) => host === d || host.endsWith(`.${d}`));
}

/** The query with a `site:` filter for providers that search with operators (SearXNG, Brave). */
export function withSiteFilter(query: string, domains: string[]): string {
  if (domains.length === 0) return query;
  const sites = domains.map((d) => `site:${d}`);
  return `${query} ${sites.length === 1 ? sites[0] : `(${sites.join(" OR ")})`}`;
}

/**
 * What a provider answered, made fit for the model and the client: http(s) URLs only, each once,
 * on an allowed domain (the provider-side filter is not trusted alone), titles and snippets as
 * plain text, at most `q.count` of them.
 */
export function cleanResults(raw: readonly { url?: unknown; title?: unknown; snippet?: unknown }[], q: SearchQuery, domains: string[]): SearchResult[] {
  const out: SearchResult[] = [];
  const seen = new Set<string>();
  for (const r of raw) {
    if (out.length >= q.count) break;
    if (typeof r?.url !== "string" || !/^https?:\/\//i.test(r.url) || seen.has(r.url)) continue;
    if (!hostAllowed(r.url, domains)) continue;
    seen.add(r.url);
    out.push({ url: r.url, title: plainText(r.title) || r.url, snippet: plainText(r.snippet) });
  }
  return out;
}

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: " ", "#39": "'" };

/** Providers highlight matches with HTML (Brave's `<strong>`): tags dropped, common entities decoded, whitespace collapsed. */
export function plainText(value: unknown): string {
  if (typeof value !== "string") return "";
  return value
    .replace(/<[^>]*>/g, "")
    .replace(/&(#x[0-9a-f]+|#\d+|[a-z]+[0-9]*);/gi, (m, name: string) => {
      const lower = name.toLowerCase();
      if (ENTITIES[lower] !== undefined) return ENTITIES[lower];
      const code = lower.startsWith("#x") ? parseInt(lower.slice(2), 16) : lower.startsWith("#") ? parseInt(lower.slice(1), 10) : NaN;
      return Number.isInteger(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : m;
    })
    .replace(/\s+/g, " ")
    .trim();
}
