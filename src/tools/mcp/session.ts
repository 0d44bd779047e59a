/**
 * What src/tools/mcp/ holds:
 * MCP: one client session per server (`session.ts`: Streamable HTTP, then the SDK's legacy SSE
 * transport; headers and token sent, scrubbed from errors; the SDK is loaded with the first
 * session), the client, the router's own (`rpc-client.ts`: `initialize`, `tools/list`,
 * `tools/call` over either transport, each request bounded by its timeout and the response's
 * signal and cancelled on the server when given up, held in `ops/slots.ts` until answered;
 * messages classified by their fields and results checked by hand, not through zod; the server's
 * `ping` answered, its other requests refused; errors the SDK's `McpError`), a tool's output
 * schema compiled once per text (`output-schemas.ts`, Ajv through the SDK's validator), the
 * Streamable HTTP transport, the router's own (`http-transport.ts`: a POST per message over
 * undici's request API, the answer read as JSON or through the router's SSE parser; the session id
 * and protocol version carried, redirects followed only within the origin, an HTTP error's status
 * as the error's code, each request with an AbortController of its own, held in `ops/slots.ts`
 * until its answer is read, which the session's close aborts; no GET stream, no resumption, no
 * OAuth flow), the `server_url` guard (`guard.ts`: `allowed_urls`, internal addresses),
 * `allowed_tools`/`require_approval` (`filters.ts`), a request's servers resolved against
 * `tools.mcp` (`servers.ts`), the operator servers' sessions shared across responses (`pool.ts`,
 * held by the runtime), `check --probe` (`probe.ts`)
 */
/**
 * One connection to one MCP server: the router's own client (rpc-client.ts) over Streamable
 * HTTP (the router's own transport, `http-transport.ts`), falling back to the SDK's legacy SSE
 * transport when the server does not speak it (as OpenAI's and llama-stack's clients do).
 * Headers and the `authorization` token go on every request to the server and nowhere else:
 * errors carry the server's message with them scrubbed out.
 */
import type { McpToolCallError } from "openai/resources/responses/responses";
import { scrubSecrets } from "../../ops/secrets.js";
import { McpConnectionError, McpHttpTransport } from "./http-transport.js";
import type { McpRpcClient } from "./rpc-client.js";

export interface McpTarget {
  label: string;
  url: URL;
  headers: Record<string, string>;
  /** An OAuth access token, sent as `Authorization: Bearer`. */
  authorization?: string;
}

/** A tool as `mcp_list_tools` lists it. */
export interface ListedTool {
  name: string;
  description?: string | null;
  input_schema: unknown;
  annotations?: unknown;
}

/** `stale`: the session itself failed (expired, connection gone) before the server could run the call; a new session may retry it. */
export type CallResult = { ok: true; output: string } | { ok: false; error: McpToolCallError; message: string; stale?: boolean };

export interface CallLimits {
  timeoutMs: number;
  maxResultBytes: number;
  signal: AbortSignal;
}

/**
 * The SDK (its types, errors and SSE transport) and the client built on it, loaded when the
 * config lets MCP be used or with the first session: a router without MCP does not carry them
 * (~10 MB of modules and zod schemas). Until then no error can be one of its.
 */
let sdk: Sdk | null = null;
let loading: Promise<Sdk> | null = null;
type Sdk = typeof import("@modelcontextprotocol/sdk/client/sse.js") & typeof import("@modelcontextprotocol/sdk/types.js") & typeof import("./rpc-client.js");

/**
 * Loads the SDK ahead of the first session when the config lets MCP be used (operator servers,
 * or `allowed_urls` for clients' own), so no request waits for it (~100-250 ms here).
 */
export function preloadMcpSdk(mcp: { servers: readonly unknown[]; allowed_urls: readonly string[] }): void {
  if (loading === null && (mcp.servers.length > 0 || mcp.allowed_urls.length > 0)) loadSdk().catch(() => {});
}

function loadSdk(): Promise<Sdk> {
  loading ??= Promise.all([import("@modelcontextprotocol/sdk/client/sse.js"), import("@modelcontextprotocol/sdk/types.js"), import("./rpc-client.js")]).then(
    ([sse, types, client]) => (sdk = { ...types, ...sse, ...client }),
    (err: unknown) => {
      loading = null; // a later session tries again
      throw err;
    },
  );
  return loading;
}

export class McpSession {
  private constructor(
    private readonly client: McpRpcClient,
    private readonly secrets: string[],
  ) {}

  /** Connects (Streamable HTTP, else SSE); rejects with a message fit for the client when neither works. */
  static async open(target: McpTarget, timeoutMs: number, signal: AbortSignal): Promise<McpSession> {
    const { McpRpcClient, SSEClientTransport } = await loadSdk();
    const headers: Record<string, string> = { ...target.headers };
    if (target.authorization) headers.Authorization = `Bearer ${target.authorization}`;
    const secrets = [...Object.values(target.headers), target.authorization ?? ""];
    let first: unknown;
    const streamable = new McpRpcClient(new McpHttpTransport(target.url, headers));
    try {
      await bounded(streamable.connect(timeoutMs, signal), timeoutMs);
      return new McpSession(streamable, secrets);
    } catch (err) {
      await streamable.close().catch(() => {});
      if (signal.aborted) throw err;
      first = err;
    }
    const sse = new McpRpcClient(new SSEClientTransport(target.url, { requestInit: { headers } }));
    try {
      // The SSE transport's start (waiting for the server's `endpoint` event) is no request: only this bounds it.
      await bounded(sse.connect(timeoutMs, signal), timeoutMs);
      return new McpSession(sse, secrets);
    } catch (err) {
      await sse.close().catch(() => {});
      // The Streamable HTTP failure says more (the SSE attempt on a modern server mostly fails with 404/405).
      const message = scrubSecrets(describe(first ?? err), secrets);
      throw timedOut(first ?? err) ? new McpTimeout(message) : new Error(message);
    }
  }

  async listTools(timeoutMs: number, signal: AbortSignal): Promise<ListedTool[]> {
    const tools: ListedTool[] = [];
    let cursor: string | undefined;
    try {
      do {
        const page = await this.client.listTools(cursor, timeoutMs, signal);
        for (const t of page.tools) tools.push({ name: t.name, description: (t.description as string | undefined) ?? null, input_schema: t.inputSchema, annotations: t.annotations ?? null });
        cursor = page.nextCursor;
      } while (cursor);
    } catch (err) {
      throw new Error(scrubSecrets(describe(err), this.secrets));
    }
    return tools;
  }

  /** Calls a tool; every failure (the tool's own error, a protocol error, a timeout, a result too big) is a result, never a throw. */
  async callTool(name: string, args: Record<string, unknown>, limits: CallLimits): Promise<CallResult> {
    let result;
    try {
      result = await this.client.callTool(name, args, limits.timeoutMs, limits.signal);
    } catch (err) {
      const message = scrubSecrets(describe(err), this.secrets);
      const stale = !limits.signal.aborted && isStale(err);
      if (isMcpError(err)) return { ok: false, error: { type: "mcp_protocol_error", code: err.code, message }, message, stale };
      const code = (err as { code?: unknown }).code;
      if (typeof code === "number" && code >= 400) return { ok: false, error: { type: "http_error", code, message }, message, stale };
      return { ok: false, error: { type: "mcp_protocol_error", code: -32603, message }, message, stale };
    }
    const text = contentText(result.content, result.structuredContent);
    if (Buffer.byteLength(text, "utf8") > limits.maxResultBytes) {
      const message = `The tool's result is larger than the router's limit of ${limits.maxResultBytes} bytes (tools.mcp.max_result_bytes).`;
      return { ok: false, error: { type: "mcp_protocol_error", code: -32603, message }, message };
    }
    if (result.isError === true) return { ok: false, error: { type: "mcp_tool_execution_error", content: result.content }, message: text || "The tool reported an error." };
    return { ok: true, output: text };
  }

  async close(): Promise<void> {
    await this.client.close().catch(() => {});
  }
}

/** A step the server did not answer within the router's limit (tools.mcp.call_timeout). */
export class McpTimeout extends Error {}

/** Whether an MCP failure was the router's time limit (outcome `timeout` in the tool metrics), not an answer. */
export function timedOut(err: unknown): boolean {
  return err instanceof McpTimeout || (isMcpError(err) && err.code === sdk!.ErrorCode.RequestTimeout);
}

function bounded<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new McpTimeout(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/** An error of the SDK's own (a JSON-RPC error, its timeout, a closed connection). */
function isMcpError(err: unknown): err is InstanceType<Sdk["McpError"]> {
  return sdk !== null && err instanceof sdk.McpError;
}

/** A session the server no longer knows (HTTP 404), a closed connection, or a request that could not be sent. */
export function isStale(err: unknown): boolean {
  if (isMcpError(err)) return err.code === sdk!.ErrorCode.ConnectionClosed;
  if (err instanceof McpConnectionError) return true;
  if (err instanceof TypeError) return true; // the legacy SSE transport's fetch failed: the connection could not be made or was gone
  return (err as { code?: unknown }).code === 404;
}

/** The text the model and the `mcp_call.output` get: the text parts joined, other parts as JSON. */
function contentText(content: { type: string; text?: unknown }[], structured: unknown): string {
  if (content.length === 0 && structured !== undefined) return JSON.stringify(structured);
  return content.map((part) => (part.type === "text" && typeof part.text === "string" ? part.text : JSON.stringify(part))).join("\n");
}

function describe(err: unknown): string {
  if (err instanceof Error) return err.message || err.name;
  return String(err);
}

