/**
 * The tools the router runs (MCP, web search, file search) as the model sees them: plain function
 * tools. A model is shown `{server_label}__{tool}` for an MCP tool, `web_search` for the web
 * search and `file_search` for the search over the router's vector stores; the items that record
 * a run (`mcp_call`, `web_search_call`, `file_search_call`) are replayed to it as the
 * function call it made and the output it got, so a later round or turn (on any kind) sees
 * what happened. Pure: no I/O.
 */
import type { Item } from "../wire/types.js";
import { joinedToolName } from "./chat/tool-names.js";

/** The function name a model calls an MCP server's tool by. */
export function hostedFunctionName(serverLabel: string, tool: string): string {
  return joinedToolName(serverLabel, tool);
}

/** The function name a model calls the web search by. */
export const WEB_SEARCH_FUNCTION_NAME = "web_search";

/** The function name a model calls the file search by. */
export const FILE_SEARCH_FUNCTION_NAME = "file_search";

/** Item types that record the router's (or OpenAI's) tool runs. */
export const HOSTED_RUN_ITEMS = new Set(["mcp_call", "mcp_list_tools", "mcp_approval_request", "mcp_approval_response", "web_search_call", "file_search_call"]);

/** One file search result as a `file_search_call` item keeps it (OpenAI's `ResponseFileSearchToolCall.Result`). */
export interface FileSearchResultView {
  file_id?: string;
  filename?: string;
  score?: number;
  text?: string;
}

/**
 * What the model reads of a file search: the results numbered from `first` (the numbers a
 * `[n]` citation in its answer names), each with its file's name and id and the text found.
 */
export function fileSearchResultsText(results: readonly FileSearchResultView[], first = 1): string {
  if (results.length === 0) return "The file search found no results.";
  const lines = ["File search results (cite a result by its number in brackets, e.g. [1]):"];
  results.forEach((r, i) => {
    lines.push("", `[${first + i}] ${r.filename ?? "file"} (file_id: ${r.file_id ?? "unknown"})`);
    if (r.text) lines.push(r.text);
  });
  return lines.join("\n");
}

/** Ids of approval requests the client refused (an `mcp_approval_response` with `approve: false`). */
export function refusedApprovals(items: readonly Item[]): Set<string> {
  const out = new Set<string>();
  for (const it of items) if (it.type === "mcp_approval_response" && it.approve === false && typeof it.approval_request_id === "string") out.add(it.approval_request_id);
  return out;
}

/**
 * One hosted-run item as the model's function call and its output, or [] for what the model
 * never asked for (a tool listing, an approval still pending or approved: the approved call
 * is its own `mcp_call`). `outputs` overrides the output text by item id (the loop's own
 * search results, fuller than what the item keeps).
 */
export function hostedItemAsCall(item: Item, refused: ReadonlySet<string>, outputs?: ReadonlyMap<string, string>): Item[] {
  const id = typeof item.id === "string" ? item.id : "";
  const pair = (name: string, args: string, output: string): Item[] => [
    { type: "function_call", id: `${id}_call`, call_id: id, name, arguments: args, status: "completed" },
    { type: "function_call_output", id: `${id}_output`, call_id: id, output: outputs?.get(id) ?? output },
  ];
  // An MCP call and a refused approval request are both the model's call of the server's tool.
  const mcpPair = (output: string) => pair(hostedFunctionName(String(item.server_label ?? ""), String(item.name ?? "")), typeof item.arguments === "string" ? item.arguments : "{}", output);
  switch (item.type) {
    case "mcp_call":
      return mcpPair(mcpCallOutput(item));
    case "mcp_approval_request":
      return refused.has(id) ? mcpPair("The user did not approve this call; it was not run.") : [];
    case "web_search_call": {
      const action = item.action as { type?: string; query?: unknown; sources?: { url?: string }[] } | undefined;
      if (action?.type !== "search" || typeof action.query !== "string") return [];
      const urls = (action.sources ?? []).map((s) => s.url).filter((u): u is string => typeof u === "string");
      const output = item.status === "failed" ? "The web search failed." : urls.length ? `Search results:\n${urls.join("\n")}` : `Searched the web for: ${action.query}`;
      return pair(WEB_SEARCH_FUNCTION_NAME, JSON.stringify({ query: action.query }), output);
    }
    case "file_search_call": {
      const queries = Array.isArray(item.queries) ? (item.queries as unknown[]).filter((q): q is string => typeof q === "string") : [];
      const results = Array.isArray(item.results) ? (item.results as FileSearchResultView[]) : null;
      const output =
        item.status === "failed" ? "The file search failed."
        : item.status === "incomplete" ? "The file search was not run."
        : results ? fileSearchResultsText(results)
        : `Searched the files for: ${queries.join("; ")}`;
      return pair(FILE_SEARCH_FUNCTION_NAME, JSON.stringify({ query: queries.join(" ") }), output);
    }
    default:
      return [];
  }
}

/** What the model is told an MCP call came to. */
export function mcpCallOutput(item: Item): string {
  if (typeof item.output === "string" && item.status !== "failed") return item.output;
  const error = item.error as { message?: unknown; content?: unknown } | string | null | undefined;
  if (typeof error === "string") return `Error: ${error}`;
  if (error && typeof error.message === "string") return `Error: ${error.message}`;
  if (error && error.content !== undefined) return `Error: ${contentText(error.content)}`;
  if (item.status === "incomplete") return "The call was not run.";
  return typeof item.output === "string" ? item.output : "";
}

function contentText(content: unknown): string {
  if (!Array.isArray(content)) return JSON.stringify(content);
  return content.map((p: { type?: string; text?: unknown }) => (p?.type === "text" && typeof p.text === "string" ? p.text : JSON.stringify(p))).join("\n");
}

/** The hosted-run items a translator outside the tool loop replays (a `web_search_call` keeps no results to replay; a `file_search_call` keeps its results). */
export const REPLAYED_RUN_ITEMS: ReadonlySet<string> = new Set([...HOSTED_RUN_ITEMS].filter((t) => t !== "web_search_call"));

/**
 * Items with every hosted-run record replaced by the model's view of it (function call +
 * output). `refused`: the refused approvals of the whole conversation, when `items` is a part of it.
 * `types`: the hosted-run item types to replace (default: all); others pass unchanged.
 *
 * The outputs wait until the model's turn ends: the calls of one turn (hosted, and the client's
 * own function calls beside them) stay together, then their outputs follow. A model that made
 * two calls at once sees one assistant turn with both, as it made them (Anthropic requires it
 * while thinking: the last assistant turn must start with its thinking block).
 */
export function hostedItemsForModel(items: readonly Item[], opts: { refused?: ReadonlySet<string>; outputs?: ReadonlyMap<string, string>; types?: ReadonlySet<string> } = {}): Item[] {
  const types = opts.types ?? HOSTED_RUN_ITEMS;
  if (!items.some((it) => types.has(it.type as string))) return items as Item[];
  const refused = opts.refused ?? refusedApprovals(items);
  const outputs = opts.outputs;
  const out: Item[] = [];
  let held: Item[] = [];
  const flush = () => {
    if (held.length) out.push(...held);
    held = [];
  };
  for (const it of items) {
    if (types.has(it.type as string)) {
      const pair = hostedItemAsCall(it, refused, outputs);
      if (pair.length === 0) continue;
      out.push(pair[0]!);
      held.push(pair[1]!);
      continue;
    }
    // The client's own calls of the same turn join it; anything else ends the turn.
    if (it.type !== "function_call" && it.type !== "custom_tool_call") flush();
    out.push(it);
  }
  flush();
  return out;
}
