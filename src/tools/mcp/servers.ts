/** The MCP servers one request names, resolved against `tools.mcp` (operator servers, URL guard). */
import type { RouterConfig } from "../../config/load.js";
import { invalidRequest } from "../../ops/errors.js";
import type { JsonObject } from "../../wire/types.js";
import type { AllowedTools, RequireApproval } from "./filters.js";
import { checkServerUrl, type Resolver } from "./guard.js";
import type { McpTarget } from "./session.js";

export type McpConfig = RouterConfig["tools"]["mcp"];

/** One server the router will talk to for this request. */
export interface McpServerSpec extends McpTarget {
  /** Every filter applies (the operator's and the client's). */
  allowed: AllowedTools[];
  approval: RequireApproval;
  description?: string;
  /** Defined in router.yaml (run on every kind), not named by URL by the client. */
  operator: boolean;
  /** An operator server the client adds nothing to (no headers of its own): its session is shared across responses. */
  shared: boolean;
}

/** An `mcp` tool naming an operator-defined server: a `server_label` the config knows, and no URL or connector of its own. */
export function operatorServer(tool: JsonObject, cfg: McpConfig): McpConfig["servers"][number] | undefined {
  if (tool.type !== "mcp" || tool.server_url != null || tool.connector_id != null) return undefined;
  return cfg.servers.find((s) => s.label === tool.server_label);
}

function clientFilter(tool: JsonObject): AllowedTools {
  return (tool.allowed_tools ?? null) as AllowedTools;
}

/**
 * The spec for an `mcp` tool the router runs. A client URL must pass the guard (400 naming
 * `tools[i].server_url`); a label without a URL must name an operator server.
 */
export async function resolveServer(tool: JsonObject, at: string, cfg: McpConfig, resolve?: Resolver): Promise<McpServerSpec> {
  const label = tool.server_label;
  if (typeof label !== "string" || !label) throw invalidRequest("An mcp tool needs a 'server_label'.", `${at}.server_label`, "missing_required_parameter");
  const op = operatorServer(tool, cfg);
  if (op) {
    const clientHeaders = stringRecord(tool.headers);
    return {
      label,
      url: new URL(op.url),
      // The client cannot replace the operator's credentials; it may add headers of its own.
      headers: { ...clientHeaders, ...op.headers },
      allowed: [op.allowed_tools ?? null, clientFilter(tool)],
      approval: (tool.require_approval ?? op.require_approval) as RequireApproval,
      description: typeof tool.server_description === "string" ? tool.server_description : op.description,
      operator: true,
      shared: Object.keys(clientHeaders).length === 0,
    };
  }
  if (typeof tool.server_url !== "string" || !tool.server_url) {
    const known = cfg.servers.map((s) => `'${s.label}'`).join(", ");
    throw invalidRequest(
      `The mcp tool '${label}' has no server_url and names no MCP server this router defines${known ? ` (defined: ${known})` : ""}.`,
      `${at}.server_url`,
      "missing_required_parameter",
    );
  }
  const url = await checkServerUrl(tool.server_url, cfg.allowed_urls, `${at}.server_url`, resolve);
  return {
    label,
    url,
    headers: stringRecord(tool.headers),
    authorization: typeof tool.authorization === "string" && tool.authorization ? tool.authorization : undefined,
    allowed: [clientFilter(tool)],
    approval: (tool.require_approval ?? null) as RequireApproval,
    description: typeof tool.server_description === "string" ? tool.server_description : undefined,
    operator: false,
    shared: false,
  };
}

function stringRecord(v: unknown): Record<string, string> {
  if (!v || typeof v !== "object") return {};
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(v as Record<string, unknown>)) if (typeof val === "string") out[k] = val;
  return out;
}
