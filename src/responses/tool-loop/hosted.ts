/**
 * Which of a request's tools the router runs itself. Operator-defined MCP servers (named by
 * `server_label` alone) always; a client's MCP server (by `server_url`) when the model's
 * `hosted_tools` is `run`, or unset and its pool has an endpoint that is not `kind: openai`
 * (chat and anthropic backends are given function tools; an openai endpoint would run the
 * tool itself, so an all-openai pool passes it through). What is left
 * goes to the endpoint's adapter as before (passed through, dropped or refused). Web search
 * (`web_search`, `web_search_preview`, dated variants) is run the same way as a client's MCP
 * server, when `tools.web_search` configures a provider; without one it is left as it was.
 * File search (`file_search`) is run by the router whenever it keeps files (`Runtime.files`),
 * on every kind and whatever `hosted_tools` says: the vector stores are the router's, which no
 * backend (OpenAI included) can see. Its stores are checked before any upstream call (404 for
 * an unknown or another key's store, as OpenAI answers). Without a library it is left as it was.
 */
import type { RouterConfig } from "../../config/load.js";
import { resolveServer, operatorServer, type McpServerSpec } from "../../tools/mcp/index.js";
import { createSearchProvider, isWebSearchType, type SearchProvider, type WebSearchToolParam } from "../../tools/search/index.js";
import { checkFileSearchTool, isFileSearchType, type FileLibrary, type FileSearchToolParam } from "../../tools/file-search/index.js";
import { fileOwner } from "../files/stored-files.js";
import { invalidRequest } from "../../ops/errors.js";
import type { JsonObject } from "../../wire/types.js";
import type { Plan } from "../create/plan.js";

export interface HostedTools {
  /** The MCP servers the router runs for this request, in request order. */
  servers: McpServerSpec[];
  /** The web search the router runs (the request's first web search tool), or null. */
  webSearch: { tool: WebSearchToolParam; provider: SearchProvider } | null;
  /** The file search the router runs (the request's `file_search` tool), its stores checked, or null. */
  fileSearch: { tool: FileSearchToolParam; library: FileLibrary; owner: string } | null;
  /** The request's other tools, left to the endpoint's adapter. */
  rest: JsonObject[];
}

/** One provider per loaded config (a reload builds a new one). */
const providers = new WeakMap<object, SearchProvider>();

function providerFor(cfg: RouterConfig): SearchProvider | null {
  const ws = cfg.tools.web_search;
  if (!ws) return null;
  let p = providers.get(ws);
  if (!p) providers.set(ws, (p = createSearchProvider(ws)));
  return p;
}

/** Whether the router runs the client-named hosted tools of this plan's model. */
export function runsClientTools(cfg: RouterConfig, plan: Pick<Plan, "modelCfg" | "targets">): boolean {
  const mode = plan.modelCfg.hosted_tools;
  if (mode === "run") return true;
  if (mode !== undefined) return false;
  return plan.targets.some((t) => {
    const kind = cfg.endpoints.find((e) => e.name === t.endpoint)?.kind;
    return kind !== undefined && kind !== "openai";
  });
}

/** Whether the request names a tool the router may run (a cheap, synchronous first look: most requests name none). */
export function namesHostedTools(cfg: RouterConfig, plan: Pick<Plan, "req">, files: FileLibrary | null = null): boolean {
  const tools = plan.req.tools;
  if (!Array.isArray(tools)) return false;
  const search = cfg.tools.web_search !== undefined;
  return tools.some((t) => t?.type === "mcp" || (search && isWebSearchType(t?.type)) || (files !== null && isFileSearchType(t?.type)));
}

/** The tools the router runs for this request, or null when it runs none (one plain round). */
export async function hostedTools(cfg: RouterConfig, plan: Pick<Plan, "req" | "modelCfg" | "targets" | "owner">, files: FileLibrary | null = null): Promise<HostedTools | null> {
  if (!namesHostedTools(cfg, plan, files)) return null;
  const tools = plan.req.tools!;
  const search = cfg.tools.web_search !== undefined;
  const mcp = cfg.tools.mcp;
  const client = runsClientTools(cfg, plan);
  const servers: McpServerSpec[] = [];
  const rest: JsonObject[] = [];
  const labels = new Set<string>();
  let webSearch: HostedTools["webSearch"] = null;
  let fileSearch: HostedTools["fileSearch"] = null;
  for (let i = 0; i < tools.length; i++) {
    const tool = tools[i]!;
    if (files && isFileSearchType(tool?.type)) {
      if (fileSearch) throw invalidRequest("Only one file_search tool may be given.", `tools[${i}]`, "invalid_value");
      fileSearch = { tool: checkFileSearchTool(tool, `tools[${i}]`), library: files, owner: fileOwner(plan) };
      continue;
    }
    if (client && search && isWebSearchType(tool?.type)) {
      webSearch ??= { tool: tool as unknown as WebSearchToolParam, provider: providerFor(cfg)! };
      continue;
    }
    const ours = tool?.type === "mcp" && (operatorServer(tool, mcp) !== undefined || (client && tool.connector_id == null));
    if (!ours) {
      rest.push(tool);
      continue;
    }
    const spec = await resolveServer(tool, `tools[${i}]`, mcp);
    if (labels.has(spec.label)) throw invalidRequest(`Two mcp tools use the server_label '${spec.label}': labels must be unique.`, `tools[${i}].server_label`, "invalid_value");
    labels.add(spec.label);
    servers.push(spec);
  }
  if (fileSearch) await fileSearch.library.assertVectorStores(fileSearch.owner, fileSearch.tool.vector_store_ids);
  return servers.length || webSearch || fileSearch ? { servers, webSearch, fileSearch, rest } : null;
}
