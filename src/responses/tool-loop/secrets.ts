/**
 * An MCP tool's `headers` and `authorization` are credentials for its server: a background
 * job's payload, which waits in the job store (Redis in a shared deployment) until an
 * instance runs it, keeps them sealed (AES-256-GCM with the router's compaction key, the
 * secret every instance shares) and the job opens them when it runs.
 */
import type { RouterConfig } from "../../config/load.js";
import type { CreateResponseRequest, JsonObject } from "../../wire/types.js";
import { openSealed, sealerFor } from "../compaction/compaction-key.js";

const SEALED = "router_sealed_credentials";

function hasSecrets(tool: JsonObject): boolean {
  return tool?.type === "mcp" && (tool.headers != null || tool.authorization != null);
}

/** The request with each MCP tool's credentials sealed into one field. */
export function sealToolSecrets(cfg: RouterConfig, req: CreateResponseRequest): CreateResponseRequest {
  if (!Array.isArray(req.tools) || !req.tools.some(hasSecrets)) return req;
  const sealer = sealerFor(cfg);
  const tools = req.tools.map((tool) => {
    if (!hasSecrets(tool)) return tool;
    const { headers, authorization, ...rest } = tool;
    return { ...rest, [SEALED]: sealer.seal(JSON.stringify({ headers: headers ?? null, authorization: authorization ?? null })) };
  });
  return { ...req, tools };
}

/** The request with the credentials back in place; one that cannot be opened (the key changed) is left out. */
export function openToolSecrets(cfg: RouterConfig, req: CreateResponseRequest): CreateResponseRequest {
  if (!Array.isArray(req.tools) || !req.tools.some((t) => typeof t?.[SEALED] === "string")) return req;
  const tools = req.tools.map((tool) => {
    const sealed = tool?.[SEALED];
    if (typeof sealed !== "string") return tool;
    const { [SEALED]: _sealed, ...rest } = tool;
    const text = openSealed(cfg, sealed);
    if (text === null) return rest;
    const { headers, authorization } = JSON.parse(text) as { headers: unknown; authorization: unknown };
    const out: JsonObject = { ...rest };
    if (headers != null) out.headers = headers;
    if (authorization != null) out.authorization = authorization;
    return out;
  });
  return { ...req, tools };
}
