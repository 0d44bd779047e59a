import type { ResponseFunctionWebSearch, ResponseItem, ResponseOutputItem, ResponseOutputText } from "openai/resources/responses/responses";
import { describe, expect, expectTypeOf, it } from "vitest";
import {
  isWebSearchType,
  resultCount,
  resultsForModel,
  searchArguments,
  searchQueryFor,
  urlCitations,
  WEB_SEARCH_FUNCTION,
  webSearchCallItem,
  type SearchResult,
} from "../../src/tools/search/index.js";
import { allowedDomains, hostAllowed, normalizeDomain, plainText, withSiteFilter } from "../../src/tools/search/results.js";

const results: SearchResult[] = [
  { url: "https://llama-stack.readthedocs.io/en/latest/", title: "Llama Stack docs", snippet: "Build AI applications." },
  { url: "https://github.com/meta-llama/llama-stack", title: "llama-stack on GitHub", snippet: "" },
  { url: "https://en.wikipedia.org/wiki/Llama_(language_model)", title: "Llama (language model)", snippet: "A family of LLMs." },
];

/** The text an annotation spans, counted in code points as its indices are. */
const spanned = (text: string, c: ResponseOutputText.URLCitation) => [...text].slice(c.start_index, c.end_index).join("");

describe("resultCount", () => {
  it("maps search_context_size to results per search (medium when unset, as OpenAI defaults)", () => {
    expect([resultCount("low"), resultCount("medium"), resultCount("high"), resultCount(undefined)]).toEqual([3, 5, 10, 5]);
  });
});

describe("WEB_SEARCH_FUNCTION", () => {
  it("is a function tool with one required string argument, query", () => {
    expect(WEB_SEARCH_FUNCTION.name).toBe("web_search");
    expect(WEB_SEARCH_FUNCTION.description.length).toBeGreaterThan(20);
    expect(WEB_SEARCH_FUNCTION.parameters).toEqual({
      type: "object",
      properties: { query: { type: "string", description: expect.any(String) } },
      required: ["query"],
      additionalProperties: false,
    });
  });
});

describe("resultsForModel", () => {
  it("numbers the results from 1 with title, URL and snippet (no snippet line when empty)", () => {
    expect(resultsForModel(results)).toBe(
      [
        "Web search results (cite a result by its URL or by its number in brackets, e.g. [1]):",
        "",
        "[1] Llama Stack docs",
        "URL: https://llama-stack.readthedocs.io/en/latest/",
        "Build AI applications.",
        "",
        "[2] llama-stack on GitHub",
        "URL: https://github.com/meta-llama/llama-stack",
        "",
        "[3] Llama (language model)",
        "URL: https://en.wikipedia.org/wiki/Llama_(language_model)",
        "A family of LLMs.",
      ].join("\n"),
    );
  });

  it("says so when nothing was found", () => {
    expect(resultsForModel([])).toBe("The web search found no results.");
  });
});

describe("webSearchCallItem", () => {
  it("is typed by the openai package as a web_search_call output item", () => {
    expectTypeOf(webSearchCallItem).returns.toEqualTypeOf<ResponseFunctionWebSearch>();
    const item: ResponseOutputItem = webSearchCallItem("ws_1", "q", results, true, "completed");
    const asInput: ResponseItem = webSearchCallItem("ws_1", "q", results, false, "completed");
    expect(item.type).toBe(asInput.type);
  });

  it("lists the sources only when asked (include: web_search_call.action.sources)", () => {
    expect(webSearchCallItem("ws_abc", "llama stack", results, false, "completed")).toEqual({
      id: "ws_abc",
      type: "web_search_call",
      status: "completed",
      action: { type: "search", query: "llama stack" },
    });
    expect(webSearchCallItem("ws_abc", "llama stack", results, true, "completed")).toEqual({
      id: "ws_abc",
      type: "web_search_call",
      status: "completed",
      action: {
        type: "search",
        query: "llama stack",
        sources: results.map((r) => ({ type: "url", url: r.url })),
      },
    });
  });

  it("a failed search is a failed item, with an empty source list when sources are asked for", () => {
    expect(webSearchCallItem("ws_f", "x", [], true, "failed")).toEqual({ id: "ws_f", type: "web_search_call", status: "failed", action: { type: "search", query: "x", sources: [] } });
    expect(JSON.stringify(webSearchCallItem("ws_f", "x", [], false, "failed"))).toBe('{"type":"web_search_call","id":"ws_f","status":"failed","action":{"type":"search","query":"x"}}');
  });
});

describe("urlCitations", () => {
  it("cites a bare result URL, with exact indices and the result's title", () => {
    const text = "See https://github.com/meta-llama/llama-stack. It is open source.";
    expect(urlCitations(text, results)).toEqual([
      { type: "url_citation", url: "https://github.com/meta-llama/llama-stack", title: "llama-stack on GitHub", start_index: 4, end_index: 45 },
    ]);
    expect(text.slice(4, 45)).toBe("https://github.com/meta-llama/llama-stack");
  });

  it("a markdown link to a result is cited over the whole link, parentheses in the URL included", () => {
    const text = "Docs: [the docs](https://llama-stack.readthedocs.io/en/latest/) and ([Wikipedia](https://en.wikipedia.org/wiki/Llama_(language_model))).";
    const cites = urlCitations(text, results);
    expect(cites).toEqual([
      { type: "url_citation", url: results[0]!.url, title: "Llama Stack docs", start_index: 6, end_index: 63 },
      { type: "url_citation", url: results[2]!.url, title: "Llama (language model)", start_index: 69, end_index: 134 },
    ]);
    expect(cites.map((c) => spanned(text, c))).toEqual(["[the docs](https://llama-stack.readthedocs.io/en/latest/)", "[Wikipedia](https://en.wikipedia.org/wiki/Llama_(language_model))"]);
  });

  it("cites [n] markers as result n, [1, 3] as both, and ignores numbers with no result", () => {
    const text = "Llama Stack builds apps [1]. It has docs [1, 3] and no [4] or [0].";
    const cites = urlCitations(text, results);
    expect(cites.map((c) => [c.url, c.start_index, c.end_index])).toEqual([
      [results[0]!.url, 24, 27],
      [results[0]!.url, 41, 47],
      [results[2]!.url, 41, 47],
    ]);
    expect(cites.map((c) => spanned(text, c))).toEqual(["[1]", "[1, 3]", "[1, 3]"]);
  });

  it("matches a URL spelled without its trailing slash or with another host case, and drops sentence punctuation", () => {
    const text = "From https://LLAMA-STACK.readthedocs.io/en/latest, and (https://github.com/meta-llama/llama-stack/).";
    const cites = urlCitations(text, results);
    expect(cites.map((c) => [c.url, spanned(text, c)])).toEqual([
      [results[0]!.url, "https://LLAMA-STACK.readthedocs.io/en/latest"],
      [results[1]!.url, "https://github.com/meta-llama/llama-stack/"],
    ]);
  });

  it("cites nothing that is not a result: other URLs, markdown links elsewhere, bracketed words", () => {
    expect(urlCitations("See https://example.com and [this](https://example.org) [note] [x1].", results)).toEqual([]);
    expect(urlCitations("Answer [1]", [])).toEqual([]);
    expect(urlCitations("In code, `items[1]` and\n```js\nf(x)[2];\n```\nindex arrays; ```\nunclosed[3]", results)).toEqual([]);
    expect(urlCitations("Two sources[1][2].", results).map((c) => [c.url, c.start_index, c.end_index])).toEqual([
      [results[0]!.url, 11, 14],
      [results[1]!.url, 14, 17],
    ]);
    expect(urlCitations("", results)).toEqual([]);
  });

  it("counts indices in code points, so text after an emoji is spanned right", () => {
    const text = "🦙 Llamas: https://github.com/meta-llama/llama-stack 🦙 [3]";
    const cites = urlCitations(text, results);
    expect(cites.map((c) => [c.start_index, c.end_index])).toEqual([
      [10, 51],
      [54, 57],
    ]);
    expect(cites.map((c) => spanned(text, c))).toEqual(["https://github.com/meta-llama/llama-stack", "[3]"]);
  });

  it("each occurrence of a URL is its own citation, in text order", () => {
    const url = results[1]!.url;
    const text = `[2] first, then ${url}, then [repo](${url}).`;
    const cites = urlCitations(text, results);
    expect(cites.map((c) => spanned(text, c))).toEqual(["[2]", url, `[repo](${url})`]);
    expect(cites.every((c) => c.url === url && c.title === "llama-stack on GitHub")).toBe(true);
  });
});

describe("domain filter and result text", () => {
  it("normalises allowed domains to bare hosts", () => {
    expect(["https://www.Example.com/path?x", "example.org.", "*.example.net", "http://host:8080", "  "].map(normalizeDomain)).toEqual([
      "www.example.com",
      "example.org",
      "example.net",
      "host",
      "",
    ]);
    expect(allowedDomains({ query: "q", count: 1, allowedDomains: ["a.com", "A.com", ""] })).toEqual(["a.com"]);
  });

  it("allows the domain and its subdomains, not a host that merely ends with its letters", () => {
    const d = ["example.com"];
    expect(["https://example.com/", "https://a.b.example.com/x", "https://badexample.com/", "https://example.com.evil.org/", "not a url"].map((u) => hostAllowed(u, d))).toEqual([
      true,
      true,
      false,
      false,
      false,
    ]);
    expect(hostAllowed("https://anything.org", [])).toBe(true);
  });

  it("builds site: filters", () => {
    expect(withSiteFilter("q", [])).toBe("q");
    expect(withSiteFilter("q", ["a.com"])).toBe("q site:a.com");
    expect(withSiteFilter("q", ["a.com", "b.org"])).toBe("q (site:a.com OR site:b.org)");
  });

  it("plain text: tags dropped, entities decoded, whitespace collapsed; non-strings are empty", () => {
    expect(plainText("<strong>Fast</strong>&amp;safe &lt;tags&gt; &#39;x&#39; &unknown; \n\t end")).toBe("Fast&safe <tags> 'x' &unknown; end");
    expect(plainText(undefined)).toBe("");
    expect(plainText(42)).toBe("");
  });
});

describe("the request's web search tool", () => {
  it("recognises web_search, web_search_preview and their dated variants", () => {
    expect(["web_search", "web_search_2025_08_26", "web_search_preview", "web_search_preview_2025_03_11", "web_search_preview_2026_01_01"].every(isWebSearchType)).toBe(true);
    expect(["web_search_call", "file_search", "web_searchx", "function", undefined, 1].some(isWebSearchType)).toBe(false);
  });

  it("builds the SearchQuery from search_context_size, filters.allowed_domains and user_location", () => {
    expect(searchQueryFor({ type: "web_search" }, "q")).toEqual({ query: "q", count: 5 });
    expect(
      searchQueryFor(
        {
          type: "web_search",
          search_context_size: "high",
          filters: { allowed_domains: ["pubmed.ncbi.nlm.nih.gov"] },
          user_location: { type: "approximate", country: "GB", city: "London", region: null, timezone: "Europe/London" },
        },
        "q",
      ),
    ).toEqual({ query: "q", count: 10, allowedDomains: ["pubmed.ncbi.nlm.nih.gov"], userLocation: { country: "GB", city: "London", timezone: "Europe/London" } });
    expect(searchQueryFor({ type: "web_search_preview", search_context_size: "low", user_location: { type: "approximate" } }, "q")).toEqual({ query: "q", count: 3 });
    expect(searchQueryFor({ type: "web_search", filters: { allowed_domains: [] }, user_location: null }, "q")).toEqual({ query: "q", count: 5 });
  });

  it("reads the query of the model's web_search call, however a small model wrote it", () => {
    expect(searchArguments('{"query": " llama stack "}')).toBe("llama stack");
    expect(searchArguments('{"queries": ["a", "b"]}')).toBe("a");
    expect(searchArguments('"just a string"')).toBe("just a string");
    expect(searchArguments("plain words")).toBe("plain words");
    expect(["", "{}", '{"query": ""}', '{"query": 3}', "[1]", '{"q": "x"', "null"].map(searchArguments)).toEqual([null, null, null, null, null, null, null]);
  });
});
