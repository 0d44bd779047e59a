import { afterEach, describe, expect, it } from "vitest";
import { buildConfig } from "../../src/config/load.js";
import { createSearchProvider, SearchError, type SearchProvider, type SearchQuery, type WebSearchConfig } from "../../src/tools/search/index.js";
import { startMockSearch, type MockSearch, type SearchReply, type SearchRequest } from "../helpers/mock-search.js";

/** tools.web_search as router.yaml gives it, parsed by the real config loader. */
function webSearch(raw: Record<string, unknown>): WebSearchConfig {
  const cfg = buildConfig({ endpoints: [{ name: "a", url: "http://127.0.0.1:9/v1", kind: "chat" }], models: { m: { endpoints: ["a"] } }, tools: { web_search: raw } }, "t", {});
  return cfg.tools!.web_search!;
}

const KEY = "sk-search-SECRET-123456";
const signal = () => new AbortController().signal;
const q = (over: Partial<SearchQuery> = {}): SearchQuery => ({ query: "llama stack", count: 5, ...over });

let mock: MockSearch | undefined;
afterEach(async () => {
  await mock?.close();
  mock = undefined;
});

async function serve(reply: (req: SearchRequest) => SearchReply): Promise<MockSearch> {
  mock = await startMockSearch(reply);
  return mock;
}

/** The error a search rejects with (the test fails if it resolves). */
async function failure(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error("the search did not fail");
}

const searxngResults = (n: number, host = "example.com") =>
  Array.from({ length: n }, (_, i) => ({ url: `https://${host}/page${i + 1}`, title: `Page ${i + 1}`, content: `About page ${i + 1}`, engine: "duckduckgo" }));

describe("SearXNG provider", () => {
  it("GETs {url}/search with q and format=json, and maps results to at most `count`", async () => {
    const m = await serve(() => ({ json: { query: "llama stack", results: searxngResults(8) } }));
    const p = createSearchProvider(webSearch({ provider: "searxng", url: m.url }));
    expect(p.name).toBe("searxng");
    const results = await p.search(q({ count: 3 }), signal());
    expect(results).toEqual([
      { url: "https://example.com/page1", title: "Page 1", snippet: "About page 1" },
      { url: "https://example.com/page2", title: "Page 2", snippet: "About page 2" },
      { url: "https://example.com/page3", title: "Page 3", snippet: "About page 3" },
    ]);
    expect(m.requests).toHaveLength(1);
    const req = m.requests[0]!;
    expect(req.method).toBe("GET");
    expect(req.path).toBe("/search");
    expect(req.query.get("q")).toBe("llama stack");
    expect(req.query.get("format")).toBe("json");
    expect(req.query.has("language")).toBe(false);
    expect(req.headers.authorization).toBeUndefined();
  });

  it("keeps a base path, accepts a url that already ends in /search, and sends a configured key as Bearer", async () => {
    const m = await serve(() => ({ json: { results: [] } }));
    await createSearchProvider(webSearch({ provider: "searxng", url: `${m.url}/searx/`, api_key: KEY })).search(q(), signal());
    await createSearchProvider(webSearch({ provider: "searxng", url: `${m.url}/searx/search` })).search(q(), signal());
    expect(m.requests.map((r) => r.path)).toEqual(["/searx/search", "/searx/search"]);
    expect(m.requests[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
  });

  it("filters by allowed domains: site: operators upstream, and drops what the provider returned off them", async () => {
    const m = await serve(() => ({
      json: {
        results: [
          { url: "https://evil.com/a", title: "Off", content: "x" },
          { url: "https://docs.example.com/b", title: "Sub", content: "y" },
          { url: "https://notexample.com/c", title: "Suffix only", content: "z" },
          { url: "https://example.org/d", title: "Org", content: "w" },
          { url: "ftp://example.com/e", title: "Not http", content: "v" },
        ],
      },
    }));
    const p = createSearchProvider(webSearch({ provider: "searxng", url: m.url }));
    const results = await p.search(q({ allowedDomains: ["https://Example.com/", "example.org"] }), signal());
    expect(results.map((r) => r.url)).toEqual(["https://docs.example.com/b", "https://example.org/d"]);
    expect(m.requests[0]!.query.get("q")).toBe("llama stack (site:example.com OR site:example.org)");

    await p.search(q({ allowedDomains: ["example.com"] }), signal());
    expect(m.requests[1]!.query.get("q")).toBe("llama stack site:example.com");
  });

  it("sends the user's country as SearXNG's language, and searches again without it when SearXNG refuses it", async () => {
    const m = await serve((req) => (req.query.has("language") ? { status: 400, text: "Invalid value \"de-DE\" for parameter language" } : { json: { results: searxngResults(1) } }));
    const p = createSearchProvider(webSearch({ provider: "searxng", url: m.url }));
    const results = await p.search(q({ userLocation: { country: "de", city: "Berlin" } }), signal());
    expect(results).toHaveLength(1);
    expect(m.requests.map((r) => r.query.get("language"))).toEqual(["de-DE", null]);
  });

  it("explains a 403 (the json format is off on the instance)", async () => {
    const m = await serve(() => ({ status: 403, text: "<html>Forbidden</html>", contentType: "text/html" }));
    const err = await failure(createSearchProvider(webSearch({ provider: "searxng", url: m.url })).search(q(), signal()));
    expect(err).toBeInstanceOf(SearchError);
    expect(err.message).toBe("web search provider searxng answered HTTP 403 (does the SearXNG instance list json in search.formats of its settings.yml?)");
    expect((err as SearchError).status).toBe(403);
  });

  it("an answer that is not JSON, or has no results list, is an invalid answer", async () => {
    let answer: SearchReply = { text: "not json" };
    const m = await serve(() => answer);
    const p = createSearchProvider(webSearch({ provider: "searxng", url: m.url }));
    let err = (await failure(p.search(q(), signal()))) as SearchError;
    expect([err.failure, err.message]).toEqual(["invalid", "web search provider searxng answered with something that is not JSON"]);
    answer = { json: { error: "nope" } };
    err = (await failure(p.search(q(), signal()))) as SearchError;
    expect([err.failure, err.message]).toEqual(["invalid", "web search provider searxng answered without a results list"]);
  });

  it("turns HTML snippets into plain text, skips duplicate URLs, and titles an untitled result by its URL", async () => {
    const m = await serve(() => ({
      json: {
        results: [
          { url: "https://a.example/1", title: "A &amp; B", content: "<b>bold</b>\n  and&nbsp;more &#8212; &#x2014;" },
          { url: "https://a.example/1", title: "dup", content: "dup" },
          { url: "https://a.example/2", content: null },
          { title: "no url" },
        ],
      },
    }));
    const results = await createSearchProvider(webSearch({ provider: "searxng", url: m.url })).search(q(), signal());
    expect(results).toEqual([
      { url: "https://a.example/1", title: "A & B", snippet: "bold and more \u2014 \u2014" },
      { url: "https://a.example/2", title: "https://a.example/2", snippet: "" },
    ]);
  });
});

describe("Brave provider", () => {
  const braveAnswer = {
    type: "search",
    web: {
      type: "search",
      results: [
        { title: "The <strong>Llama</strong> Stack", url: "https://llama-stack.readthedocs.io/", description: "Build <strong>AI</strong> apps", extra_snippets: ["x"] },
        { title: "GitHub", url: "https://github.com/meta-llama/llama-stack", description: "Repo" },
      ],
    },
  };

  it("GETs /res/v1/web/search with the key in X-Subscription-Token, count, country and location headers", async () => {
    const m = await serve(() => ({ json: braveAnswer }));
    const p = createSearchProvider(webSearch({ provider: "brave", url: m.url, api_key: KEY }));
    expect(p.name).toBe("brave");
    const results = await p.search(q({ count: 10, userLocation: { country: "us", city: "San Francisco", region: "California", timezone: "America/Los_Angeles" } }), signal());
    expect(results).toEqual([
      { url: "https://llama-stack.readthedocs.io/", title: "The Llama Stack", snippet: "Build AI apps" },
      { url: "https://github.com/meta-llama/llama-stack", title: "GitHub", snippet: "Repo" },
    ]);
    const req = m.requests[0]!;
    expect(req.method).toBe("GET");
    expect(req.path).toBe("/res/v1/web/search");
    expect(Object.fromEntries(req.query)).toEqual({ q: "llama stack", count: "10", country: "US" });
    expect(req.headers["x-subscription-token"]).toBe(KEY);
    expect(req.headers.authorization).toBeUndefined();
    expect(req.headers.accept).toBe("application/json");
    expect(req.headers["x-loc-country"]).toBe("US");
    expect(req.headers["x-loc-city"]).toBe("San Francisco");
    expect(req.headers["x-loc-state-name"]).toBe("California");
    expect(req.headers["x-loc-timezone"]).toBe("America/Los_Angeles");
  });

  it("caps count at Brave's 20, leaves out a country Brave does not take and names that are not ASCII, and filters domains", async () => {
    const m = await serve(() => ({ json: braveAnswer }));
    const p = createSearchProvider(webSearch({ provider: "brave", url: m.url, api_key: KEY }));
    const results = await p.search(q({ count: 50, allowedDomains: ["github.com"], userLocation: { country: "IS", city: "Reykjavík" } }), signal());
    expect(results.map((r) => r.url)).toEqual(["https://github.com/meta-llama/llama-stack"]);
    const req = m.requests[0]!;
    expect(Object.fromEntries(req.query)).toEqual({ q: "llama stack site:github.com", count: "20" });
    expect(req.headers["x-loc-city"]).toBeUndefined();
    expect(req.headers["x-loc-country"]).toBeUndefined();
  });

  it("an answer without a web section is no results", async () => {
    const m = await serve(() => ({ json: { type: "search", query: { original: "zzz" } } }));
    expect(await createSearchProvider(webSearch({ provider: "brave", url: m.url, api_key: KEY })).search(q(), signal())).toEqual([]);
  });

  it("searches again without the location when Brave answers 422 to it", async () => {
    const m = await serve((req) =>
      req.query.has("country") ? { status: 422, json: { type: "ErrorResponse", error: { code: "VALIDATION", detail: "Unable to validate request parameter(s)", status: 422 } } } : { json: braveAnswer },
    );
    const results = await createSearchProvider(webSearch({ provider: "brave", url: m.url, api_key: KEY })).search(q({ userLocation: { country: "GB" } }), signal());
    expect(results).toHaveLength(2);
    expect(m.requests.map((r) => [r.query.get("country"), r.headers["x-loc-country"]])).toEqual([
      ["GB", "GB"],
      [null, undefined],
    ]);
  });

  it("a 401 names Brave's own message and never the key, even when the answer echoes it", async () => {
    const m = await serve(() => ({ status: 401, json: { type: "ErrorResponse", error: { code: "SUBSCRIPTION_TOKEN_INVALID", detail: `The provided subscription token ${KEY} is invalid.`, status: 401 } } }));
    const err = (await failure(createSearchProvider(webSearch({ provider: "brave", url: m.url, api_key: KEY })).search(q(), signal()))) as SearchError;
    expect(err).toBeInstanceOf(SearchError);
    expect([err.provider, err.failure, err.status]).toEqual(["brave", "status", 401]);
    expect(err.message).toBe("web search provider brave answered HTTP 401: The provided subscription token [redacted] is invalid.");
  });
});

describe("Tavily provider", () => {
  const tavilyAnswer = {
    query: "llama stack",
    results: [
      { title: "Llama Stack", url: "https://llama-stack.readthedocs.io/en/latest/", content: "Llama Stack standardizes...", score: 0.9 },
      { title: "News", url: "https://news.example.com/x", content: "n", score: 0.5 },
    ],
    response_time: 1.1,
  };

  it("POSTs /search with the key as a Bearer token (and in the body) and the query, count, domains and country in the body", async () => {
    const m = await serve(() => ({ json: tavilyAnswer }));
    const p = createSearchProvider(webSearch({ provider: "tavily", url: m.url, api_key: KEY }));
    expect(p.name).toBe("tavily");
    const results = await p.search(q({ count: 3, allowedDomains: ["readthedocs.io"], userLocation: { country: "US" } }), signal());
    expect(results).toEqual([{ url: "https://llama-stack.readthedocs.io/en/latest/", title: "Llama Stack", snippet: "Llama Stack standardizes..." }]);
    const req = m.requests[0]!;
    expect(req.method).toBe("POST");
    expect(req.path).toBe("/search");
    expect(req.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(req.headers["content-type"]).toBe("application/json");
    expect(req.body).toEqual({ api_key: KEY, query: "llama stack", topic: "general", search_depth: "basic", max_results: 3, include_domains: ["readthedocs.io"], country: "united states" });
  });

  it("without domains or location the body carries neither; count is capped at 20", async () => {
    const m = await serve(() => ({ json: tavilyAnswer }));
    await createSearchProvider(webSearch({ provider: "tavily", url: m.url, api_key: KEY })).search(q({ count: 40 }), signal());
    expect(m.requests[0]!.body).toEqual({ api_key: KEY, query: "llama stack", topic: "general", search_depth: "basic", max_results: 20 });
  });

  it("searches again without the country when Tavily refuses it", async () => {
    const m = await serve((req) => (req.body.country ? { status: 400, json: { detail: { error: "Invalid country" } } } : { json: tavilyAnswer }));
    const results = await createSearchProvider(webSearch({ provider: "tavily", url: m.url, api_key: KEY })).search(q({ userLocation: { country: "CZ" } }), signal());
    expect(results).toHaveLength(2);
    expect(m.requests.map((r) => r.body.country)).toEqual(["czechia", undefined]);
  });

  it("an error status carries Tavily's own message; a 400 without a location is not retried", async () => {
    const m = await serve(() => ({ status: 400, json: { detail: { error: "Query is too long." } } }));
    const err = (await failure(createSearchProvider(webSearch({ provider: "tavily", url: m.url, api_key: KEY })).search(q(), signal()))) as SearchError;
    expect(err.message).toBe("web search provider tavily answered HTTP 400: Query is too long.");
    expect(m.requests).toHaveLength(1);
  });
});

describe("every provider: time limit, abort, failures and the key", () => {
  const configs = (url: string): Record<string, unknown>[] => [
    { provider: "searxng", url, api_key: KEY, timeout: "150ms" },
    { provider: "brave", url, api_key: KEY, timeout: "150ms" },
    { provider: "tavily", url, api_key: KEY, timeout: "150ms" },
  ];

  it.each(["headers", "body"] as const)("a provider that stops answering (%s) fails with a timeout after tools.web_search.timeout", async (hang) => {
    const m = await serve(() => ({ hang }));
    for (const raw of configs(m.url)) {
      const err = (await failure(createSearchProvider(webSearch(raw)).search(q(), signal()))) as SearchError;
      expect(err).toBeInstanceOf(SearchError);
      expect([err.failure, err.message]).toEqual(["timeout", `web search provider ${raw.provider} did not answer within 150 ms`]);
    }
  });

  it("the caller's abort ends the call with the signal's reason, not a SearchError", async () => {
    const m = await serve(() => ({ hang: "headers" }));
    for (const [i, raw] of configs(m.url).entries()) {
      const p: SearchProvider = createSearchProvider(webSearch({ ...raw, timeout: "30s" }));
      const ac = new AbortController();
      const reason = new Error("client went away");
      const search = p.search(q(), ac.signal);
      await waitFor(() => m.requests.length === i + 1);
      expect(m.requests).toHaveLength(i + 1);
      ac.abort(reason);
      expect(await failure(search)).toBe(reason);
    }
    await waitFor(() => m.aborted === 3);
    expect(m.aborted).toBe(3);
  });

  it("a config built in code takes its timeout as milliseconds or a duration, and defaults it when missing", async () => {
    const m = await serve((req) => (req.query.get("q") === "slow" ? { hang: "headers" } : { json: { results: searxngResults(1) } }));
    const bare = { provider: "searxng", url: m.url } as WebSearchConfig;
    expect(await createSearchProvider(bare).search(q(), signal())).toHaveLength(1);
    const asText = { provider: "searxng", url: m.url, timeout: "120ms" } as unknown as WebSearchConfig;
    expect((await failure(createSearchProvider(asText).search(q({ query: "slow" }), signal()))).message).toBe("web search provider searxng did not answer within 120 ms");
  });

  it("a signal aborted before the call sends nothing", async () => {
    const m = await serve(() => ({ json: { results: [] } }));
    const ac = new AbortController();
    ac.abort();
    const err = await failure(createSearchProvider(webSearch({ provider: "searxng", url: m.url })).search(q(), ac.signal));
    expect(err.name).toBe("AbortError");
    expect(m.requests).toHaveLength(0);
  });

  it("a provider that cannot be reached is a network failure naming its host", async () => {
    const m = await startMockSearch();
    const url = m.url;
    await m.close();
    for (const raw of configs(url)) {
      const err = (await failure(createSearchProvider(webSearch(raw)).search(q(), signal()))) as SearchError;
      expect(err.failure).toBe("network");
      expect(err.message).toContain(`web search provider ${raw.provider} (${new URL(url).host}) could not be reached`);
      expect(err.message).toContain("ECONNREFUSED");
    }
  });

  it("no failure message ever holds the key, whatever the provider echoes", async () => {
    let n = 0;
    const echoes: SearchReply[] = [
      { status: 401, json: { error: { message: `bad key ${KEY}` } } },
      { status: 429, json: { detail: { error: `rate limited for ${KEY}` } } },
      { status: 500, text: `internal error, key=${KEY}` },
      { status: 502, json: { message: KEY } },
    ];
    const m = await serve(() => echoes[n++ % echoes.length]!);
    const messages: string[] = [];
    for (let i = 0; i < echoes.length; i++) {
      for (const raw of configs(m.url)) messages.push((await failure(createSearchProvider(webSearch(raw)).search(q(), signal()))).message);
    }
    expect(messages).toHaveLength(12);
    for (const msg of messages) {
      expect(msg).not.toContain(KEY);
      expect(msg).toMatch(/^web search provider (searxng|brave|tavily) answered HTTP (401|429|500|502)/);
    }
    expect(messages.some((msg) => msg.includes("[redacted]"))).toBe(true);
  });

  it("credentials in a configured URL become Basic auth and never reach a message", async () => {
    const m = await serve(() => ({ status: 500, text: "" }));
    const url = m.url.replace("http://", "http://user:pa%24%24@");
    const err = await failure(createSearchProvider(webSearch({ provider: "searxng", url })).search(q(), signal()));
    expect(m.requests[0]!.headers.authorization).toBe(`Basic ${Buffer.from("user:pa$$").toString("base64")}`);
    expect(err.message).toBe("web search provider searxng answered HTTP 500");
  });
});

async function waitFor(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 400 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
}

describe("from search to what the client sees", () => {
  it("a SearXNG search through the helpers the tool loop uses: query from the tool, model text, item with sources, citations", async () => {
    const { isWebSearchType, resultsForModel, searchArguments, searchQueryFor, urlCitations, webSearchCallItem } = await import("../../src/tools/search/index.js");
    const m = await serve(() => ({
      json: {
        results: [
          { url: "https://docs.example.com/llama", title: "Llama docs", content: "How to run <b>Llama</b>." },
          { url: "https://elsewhere.org/x", title: "Elsewhere", content: "Off the allowed domains." },
          { url: "https://example.com/blog", title: "Blog", content: "News." },
        ],
      },
    }));
    const tool = { type: "web_search_preview_2025_03_11" as const, search_context_size: "low" as const, user_location: { type: "approximate" as const, country: "FR" } };
    expect(isWebSearchType(tool.type)).toBe(true);
    const query = searchArguments('{"query":"run llama"}')!;
    const withDomains = { ...searchQueryFor(tool, query), allowedDomains: ["example.com"] };
    const results = await createSearchProvider(webSearch({ provider: "searxng", url: m.url })).search(withDomains, signal());

    expect(Object.fromEntries(m.requests[0]!.query)).toEqual({ q: "run llama site:example.com", format: "json", language: "fr-FR" });
    expect(resultsForModel(results)).toBe(
      "Web search results (cite a result by its URL or by its number in brackets, e.g. [1]):\n\n[1] Llama docs\nURL: https://docs.example.com/llama\nHow to run Llama.\n\n[2] Blog\nURL: https://example.com/blog\nNews.",
    );
    expect(webSearchCallItem("ws_1", query, results, true, "completed")).toEqual({
      id: "ws_1",
      type: "web_search_call",
      status: "completed",
      action: { type: "search", query: "run llama", sources: [{ type: "url", url: "https://docs.example.com/llama" }, { type: "url", url: "https://example.com/blog" }] },
    });
    const answer = "Install it as the docs say [1]; see also [the blog](https://example.com/blog).";
    expect(urlCitations(answer, results)).toEqual([
      { type: "url_citation", url: "https://docs.example.com/llama", title: "Llama docs", start_index: 27, end_index: 30 },
      { type: "url_citation", url: "https://example.com/blog", title: "Blog", start_index: 41, end_index: 77 },
    ]);
  });

  it("searches run side by side on one provider (parallel tool calls in a round)", async () => {
    const m = await serve((req) => ({ json: { results: [{ url: `https://example.com/${encodeURIComponent(req.query.get("q")!)}`, title: req.query.get("q"), content: "" }] } }));
    const p = createSearchProvider(webSearch({ provider: "searxng", url: m.url }));
    const all = await Promise.all(["a", "b", "c"].map((query) => p.search(q({ query }), signal())));
    expect(all.map((r) => r[0]!.title)).toEqual(["a", "b", "c"]);
    expect(m.requests).toHaveLength(3);
  });

  it("a redirect is not followed: it is an error status", async () => {
    const m = await serve((req) => (req.path === "/search" ? { status: 302, text: "" } : { json: { results: searxngResults(1) } }));
    const err = (await failure(createSearchProvider(webSearch({ provider: "searxng", url: m.url })).search(q(), signal()))) as SearchError;
    expect([err.failure, err.status, err.message]).toEqual(["status", 302, "web search provider searxng answered HTTP 302"]);
    expect(m.requests).toHaveLength(1);
  });
});
