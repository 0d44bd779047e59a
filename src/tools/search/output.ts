import type { ResponseFunctionWebSearch } from "openai/resources/responses/responses";
import { WEB_SEARCH_FUNCTION_NAME } from "../../translate/hosted-calls.js";
import type { SearchResult } from "./types.js";

/** Results per search for the web_search tool's `search_context_size` (OpenAI's default is medium). */
export function resultCount(contextSize: "low" | "medium" | "high" | undefined): number {
  return contextSize === "low" ? 3 : contextSize === "high" ? 10 : 5;
}

/**
 * The function tool a model that cannot run hosted tools is given in place of `web_search`;
 * its one argument is the query the router then searches for. Its name is the one a replayed
 * `web_search_call` is shown as (translate/hosted-calls.ts).
 */
export const WEB_SEARCH_FUNCTION: { name: string; description: string; parameters: Record<string, unknown> } = {
  name: WEB_SEARCH_FUNCTION_NAME,
  description:
    "Search the web for current information. Returns numbered results with title, URL and snippet; cite the results you use by their URL or number, e.g. [1].",
  parameters: {
    type: "object",
    properties: { query: { type: "string", description: "The search query, as you would type it into a search engine." } },
    required: ["query"],
    additionalProperties: false,
  },
};

/** The function output the model reads: the results numbered from 1, the numbers urlCitations resolves `[n]` against. */
export function resultsForModel(results: SearchResult[]): string {
  if (results.length === 0) return "The web search found no results.";
  const lines = ["Web search results (cite a result by its URL or by its number in brackets, e.g. [1]):"];
  results.forEach((r, i) => {
    lines.push("", `[${i + 1}] ${r.title}`, `URL: ${r.url}`);
    if (r.snippet) lines.push(r.snippet);
  });
  return lines.join("\n");
}

/**
 * The `web_search_call` output item. Its sources (every result's URL) are listed only when the
 * request includes `web_search_call.action.sources`, as OpenAI does.
 */
export function webSearchCallItem(
  id: string,
  query: string,
  results: SearchResult[],
  withSources: boolean,
  status: "completed" | "failed",
): ResponseFunctionWebSearch {
  const action: ResponseFunctionWebSearch.Search = { type: "search", query };
  if (withSources) action.sources = results.map((r) => ({ type: "url", url: r.url }));
  return { type: "web_search_call", id, status, action };
}
