/**
 * The tool loop's entry: `openRun` is what the service and background jobs call instead of
 * `connect`. A request with no tools the router runs takes one plain round (`connect`); one
 * with hosted tools the router runs gets a ToolLoop whose `pump` runs every round.
 */
import { ApiError } from "../../ops/errors.js";
import type { ApiKey } from "../../keys/policy.js";
import { mayUseTool } from "../../keys/policy.js";
import type { Runtime } from "../../runtime/runtime.js";
import { connect, type Connection } from "../create/execute.js";
import type { Plan } from "../create/plan.js";
import { endsWithCompactionTrigger } from "../compaction/trigger-adapter.js";
import { fetchFileUrls } from "../files/fetch-files.js";
import { readStoredFiles } from "../files/stored-files.js";
import { hostedTools, namesHostedTools, type HostedTools } from "./hosted.js";
import { ToolLoop, connectorError } from "./loop.js";
import { McpRunner } from "./mcp-runner.js";

export { hostedTools, namesHostedTools, runsClientTools } from "./hosted.js";

/** Whether this request may take the tool loop (synchronous; `hostedTools` then decides). */
export function mayRunTools(rt: Runtime, plan: Plan): boolean {
  return namesHostedTools(rt.config, plan, rt.files) && !endsWithCompactionTrigger(plan);
}

/**
 * Opens the response's upstream work: one round (no extra promise on that path), or the tool loop.
 * `resolved`: the hosted tools the caller already resolved for this plan (`hostedTools`: a client
 * server's URL is checked against DNS), so they are not resolved twice; left out, they are resolved here.
 */
export function openRun(rt: Runtime, plan: Plan, signal: AbortSignal, stream: boolean, initialStatus: "in_progress" | "queued" = "in_progress", resolved?: HostedTools | null): Promise<Connection> {
  if (!mayRunTools(rt, plan)) return connect(rt, plan, signal, stream, initialStatus);
  return openToolLoop(rt, plan, signal, stream, initialStatus, resolved);
}

async function openToolLoop(rt: Runtime, plan: Plan, signal: AbortSignal, stream: boolean, initialStatus: "in_progress" | "queued", resolved: HostedTools | null | undefined): Promise<Connection> {
  const hosted = resolved === undefined ? await hostedTools(rt.config, plan, rt.files) : resolved;
  if (!hosted) return connect(rt, plan, signal, stream, initialStatus);
  plan = await readStoredFiles(rt, await fetchFileUrls(plan, signal)); // once for every round (a background job's plan has not fetched them yet)
  const runner = new McpRunner(rt, signal);
  try {
    const loop = new ToolLoop(rt, plan, hosted, runner, signal, stream, initialStatus);
    const failure = await loop.prepare();
    if (failure) {
      if (!stream) throw connectorError(failure);
      const failed = loop.failedRun(failure);
      return { ...failed, pump: (sink, opts) => failed.pump(sink, opts).finally(() => runner.close()) };
    }
    const first = await loop.connectRound();
    return { endpoint: first.endpoint, model: first.model, pump: (sink, opts = {}) => loop.run(first, sink, opts).finally(() => runner.close()) };
  } catch (err) {
    await runner.close();
    throw err;
  }
}

/**
 * A key may use only the hosted tools its `tools` list names (tool types or MCP server labels).
 * A label grants the operator's server of that name: an `mcp` tool with its own `server_url`
 * (or `connector_id`) is the client's server whatever label it gives, so only `mcp` grants it.
 */
export function checkKeyTools(key: ApiKey | null | undefined, req: { tools?: unknown; input?: unknown }): void {
  if (!key?.tools) return;
  checkToolList(key, req.tools, "tools");
  // Tools sent as `additional_tools` input items are the request's tools too (passed through to OpenAI as they are).
  if (Array.isArray(req.input)) {
    req.input.forEach((item: { type?: unknown; tools?: unknown } | null, i) => {
      if (item?.type === "additional_tools") checkToolList(key, item.tools, `input[${i}].tools`);
    });
  }
}

function checkToolList(key: ApiKey, tools: unknown, param: string): void {
  if (!Array.isArray(tools)) return;
  tools.forEach((tool: { type?: unknown; server_label?: unknown; server_url?: unknown; connector_id?: unknown }, i) => {
    if (!tool || typeof tool.type !== "string") return;
    const byLabel = typeof tool.server_label === "string" && tool.server_url == null && tool.connector_id == null;
    if (mayUseTool(key, tool.type, byLabel ? (tool.server_label as string) : undefined)) return;
    const what =
      tool.type !== "mcp" || typeof tool.server_label !== "string" ? `tools of type '${tool.type}'`
      : byLabel ? `the MCP server '${tool.server_label}'`
      : `its own MCP server '${tool.server_label}' (a server_url or connector_id; its label does not make it the router's server of that name)`;
    throw new ApiError(403, `This API key may not use ${what}.`, { type: "permission_error", param: `${param}[${i}]`, code: "tool_not_allowed" });
  });
}
