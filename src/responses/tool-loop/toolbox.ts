/**
 * The hosted tools as the model sees them: one plain function tool per MCP tool (named by
 * hosted-calls.ts), one for the web search and one for the file search, and the way back from a function name the model called to the server
 * and tool the router runs.
 */
import { isAllowed, needsApproval, type ListedTool, type McpServerSpec } from "../../tools/mcp/index.js";
import { WEB_SEARCH_FUNCTION, type SearchProvider, type WebSearchToolParam } from "../../tools/search/index.js";
import { FILE_SEARCH_FUNCTION, type FileLibrary, type FileSearchToolParam } from "../../tools/file-search/index.js";
import { hostedFunctionName } from "../../translate/hosted-calls.js";
import type { JsonObject } from "../../wire/types.js";

export interface McpFunction {
  kind: "mcp";
  name: string;
  server: McpServerSpec;
  tool: ListedTool;
  /** A call waits for the client's `mcp_approval_response` instead of running. */
  approval: boolean;
}

export interface SearchFunction {
  kind: "web_search";
  name: string;
  tool: WebSearchToolParam;
  provider: SearchProvider;
  approval: false;
}

export interface FileSearchFunction {
  kind: "file_search";
  name: string;
  tool: FileSearchToolParam;
  library: FileLibrary;
  owner: string;
  approval: false;
}

export type HostedFunction = McpFunction | SearchFunction | FileSearchFunction;

export class Toolbox {
  private readonly byName = new Map<string, HostedFunction>();
  private readonly defs: JsonObject[] = [];

  /** `taken`: the client's own function names, which keep theirs. */
  constructor(private readonly taken: Set<string>) {}

  /** Adds a server's listed tools that its filters allow. */
  addServer(server: McpServerSpec, tools: readonly ListedTool[]): void {
    for (const tool of tools) {
      if (!server.allowed.every((f) => isAllowed(f, tool))) continue;
      const name = this.freeName(hostedFunctionName(server.label, tool.name));
      this.byName.set(name, { kind: "mcp", name, server, tool, approval: needsApproval(server.approval, tool) });
      const about = [tool.description, server.description ? `(MCP server '${server.label}': ${server.description})` : `(MCP server '${server.label}')`].filter(Boolean).join(" ");
      this.defs.push({ type: "function", name, description: about, parameters: schemaOf(tool.input_schema), strict: false });
    }
  }

  /** The web search as the function the model calls with a query. */
  addWebSearch(tool: WebSearchToolParam, provider: SearchProvider): void {
    const name = this.freeName(WEB_SEARCH_FUNCTION.name);
    this.byName.set(name, { kind: "web_search", name, tool, provider, approval: false });
    this.defs.push({ type: "function", name, description: WEB_SEARCH_FUNCTION.description, parameters: WEB_SEARCH_FUNCTION.parameters, strict: false });
  }

  /** The file search as the function the model calls with a query. */
  addFileSearch(tool: FileSearchToolParam, library: FileLibrary, owner: string): void {
    const name = this.freeName(FILE_SEARCH_FUNCTION.name);
    this.byName.set(name, { kind: "file_search", name, tool, library, owner, approval: false });
    this.defs.push({ type: "function", name, description: FILE_SEARCH_FUNCTION.description, parameters: FILE_SEARCH_FUNCTION.parameters, strict: false });
  }

  get(name: unknown): HostedFunction | undefined {
    return typeof name === "string" ? this.byName.get(name) : undefined;
  }

  /** The function for a server's tool (an approved call named by label and tool). */
  find(serverLabel: string, tool: string): McpFunction | undefined {
    for (const fn of this.byName.values()) if (fn.kind === "mcp" && fn.server.label === serverLabel && fn.tool.name === tool) return fn;
    return undefined;
  }

  /** The function tools for the model. */
  functions(): JsonObject[] {
    return this.defs;
  }

  private freeName(base: string): string {
    let name = base;
    for (let n = 2; this.taken.has(name) || this.byName.has(name); n++) name = `${base.slice(0, 60)}_${n}`;
    return name;
  }
}

/** An MCP input schema as a function's parameters (an object schema, whatever the server sent). */
function schemaOf(schema: unknown): JsonObject {
  if (schema && typeof schema === "object" && !Array.isArray(schema)) return { type: "object", properties: {}, ...(schema as JsonObject) };
  return { type: "object", properties: {} };
}
