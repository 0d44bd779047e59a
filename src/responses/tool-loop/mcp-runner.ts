/**
 * The MCP servers of one response: a client's server gets one session, opened on first use and
 * closed when the response ends; an operator's server uses the runtime's shared session
 * (tools/mcp/pool.ts). Every listing and call is bounded by `tools.mcp.call_timeout`, counted
 * (tool_calls_total, tool_call_duration_seconds) and traced (a span each).
 */
import { McpSession, timedOut, type CallResult, type ListedTool, type McpServerSpec } from "../../tools/mcp/index.js";
import type { Runtime } from "../../runtime/runtime.js";
import { SpanKind, SpanStatusCode } from "../../tracing/index.js";

export class McpRunner {
  /** This response's own sessions; shared operator sessions come from the runtime's pool. */
  private readonly sessions = new Map<string, Promise<McpSession>>();

  constructor(
    private readonly rt: Runtime,
    private readonly signal: AbortSignal,
  ) {}

  private get limits() {
    return this.rt.config.tools.mcp;
  }

  private session(server: McpServerSpec): Promise<McpSession> {
    if (server.shared) return this.rt.mcpSessions.get(server, this.limits.call_timeout);
    let s = this.sessions.get(server.label);
    if (!s) {
      s = McpSession.open(server, this.limits.call_timeout, this.signal);
      s.catch(() => {}); // awaited by every user; a failure is theirs to report
      this.sessions.set(server.label, s);
    }
    return s;
  }

  /** The server's tools; rejects with a message naming the cause (the request then fails with 424). */
  async list(server: McpServerSpec): Promise<ListedTool[]> {
    return this.timed("mcp_list_tools", server, async () => {
      const session = await this.session(server);
      try {
        return await session.listTools(this.limits.call_timeout, this.signal);
      } catch (err) {
        if (!server.shared || this.signal.aborted) throw err;
        // A shared session may have gone stale since its last use: once more on a new one.
        this.rt.mcpSessions.drop(server, session);
        return (await this.session(server)).listTools(this.limits.call_timeout, this.signal);
      }
    }, (tools, err) => (tools ? "ok" : timedOut(err) ? "timeout" : "error"));
  }

  /** Runs one call; every failure comes back as a result with its error. */
  async call(server: McpServerSpec, tool: string, args: string): Promise<CallResult> {
    return this.timed("mcp_call", server, async () => {
      let parsed: Record<string, unknown>;
      try {
        const v: unknown = args.trim() ? JSON.parse(args) : {};
        if (!v || typeof v !== "object" || Array.isArray(v)) throw new Error("not an object");
        parsed = v as Record<string, unknown>;
      } catch {
        const message = "The tool call's arguments are not a JSON object.";
        return { ok: false, error: { type: "mcp_protocol_error", code: -32602, message }, message } satisfies CallResult;
      }
      const limits = { timeoutMs: this.limits.call_timeout, maxResultBytes: this.limits.max_result_bytes, signal: this.signal };
      for (let attempt = 0; ; attempt++) {
        let session: McpSession;
        try {
          session = await this.session(server);
        } catch (err) {
          const message = `Could not connect to MCP server '${server.label}': ${(err as Error).message}`;
          return { ok: false, error: { type: "mcp_protocol_error", code: -32000, message }, message } satisfies CallResult;
        }
        const result = await session.callTool(tool, parsed, limits);
        // A shared session that went stale is opened again once; the call had not reached the server.
        if (result.ok || !result.stale || !server.shared || attempt > 0) return result;
        this.rt.mcpSessions.drop(server, session);
      }
    }, (r) => (!r ? "error" : r.ok ? "ok" : r.error.type === "mcp_protocol_error" && r.error.code === -32001 ? "timeout" : "error"));
  }

  /** Closes this response's own sessions (the shared ones stay open). */
  async close(): Promise<void> {
    const all = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.all(all.map((s) => s.then((x) => x.close(), () => {})));
  }

  /**
   * The metric's `server` is an operator server's label, or a client server's host: labels a
   * client makes up would grow the series without bound, its hosts are bounded by allowed_urls.
   */
  private timed<T>(type: string, server: McpServerSpec, fn: () => Promise<T>, outcome: (result: T | undefined, error?: unknown) => string): Promise<T> {
    return timedTool(this.rt, type, server.operator ? server.label : server.url.host, fn, outcome, server.label);
  }
}

/**
 * One hosted tool run, counted (tool_calls_total by outcome, tool_call_duration_seconds) and traced
 * as a CLIENT span. `outcome` gets the result, or the error the run threw.
 */
export async function timedTool<T>(rt: Runtime, type: string, server: string, fn: () => Promise<T>, outcome: (result: T | undefined, error?: unknown) => string, spanName = server): Promise<T> {
  const span = rt.tracing.startChild(`${type} ${spanName}`, SpanKind.CLIENT, { "router.tool.type": type, "router.tool.server": spanName });
  const started = performance.now();
  let result: T | undefined;
  let error: unknown;
  try {
    result = await (span ? rt.tracing.within(span, fn) : fn());
    return result;
  } catch (err) {
    error = err;
    throw err;
  } finally {
    const o = outcome(result, error);
    rt.metrics.toolCalls.inc({ type, server, outcome: o });
    rt.metrics.toolCallDuration.observe({ type, server }, (performance.now() - started) / 1000);
    if (span) {
      span.setAttribute("router.tool.outcome", o);
      if (o !== "ok") span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    }
  }
}
