/**
 * The client half of MCP's JSON-RPC that a router session needs, over any MCP transport (the
 * router's Streamable HTTP one, or the SDK's legacy SSE one): the `initialize` handshake,
 * `tools/list` and `tools/call`, each request bounded by its timeout and the response's signal,
 * and cancelled on the server (`notifications/cancelled`) when either ends it first. What the
 * server asks of the client is answered as the SDK's client answers it: `ping`, and "method
 * not found" for the rest (the router offers no sampling, roots or elicitation).
 *
 * It replaces the SDK's `Client`, which passed every message through zod schemas to classify
 * it, and every result through another, and compiled a new validator for each tool output
 * schema at every listing (kept by its Ajv instance for as long as the session lived: a pooled
 * session grew by each listing). Here a message is classified by its fields, a result's shape
 * is checked by hand, and an output schema is compiled once per text (`OutputSchemas`). Errors
 * are the SDK's `McpError`, with its codes and messages.
 *
 * Loaded with the SDK (session.ts), never before.
 */
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ErrorCode, InitializeResultSchema, LATEST_PROTOCOL_VERSION, McpError, SUPPORTED_PROTOCOL_VERSIONS, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import { Slots } from "../../ops/slots.js";
import { OutputSchemas, type JsonValidator } from "./output-schemas.js";

const CLIENT_INFO = { name: "responses-router", version: "1" };

/** A tool as a `tools/list` result gives it: `name` and `inputSchema` checked, the rest as sent. */
export interface RawTool {
  name: string;
  description?: unknown;
  inputSchema: Record<string, unknown>;
  outputSchema?: unknown;
  annotations?: unknown;
  execution?: { taskSupport?: unknown };
}

export interface ToolsPage {
  tools: RawTool[];
  nextCursor?: string;
}

export interface ToolResult {
  content: { type: string; text?: unknown }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/** A request awaiting its answer: settled once, by the answer, the transport, its timeout or its signal. */
class Pending {
  timer: NodeJS.Timeout | undefined;
  slot = -1;
  constructor(
    readonly client: McpRpcClient,
    readonly id: number,
    readonly resolve: (result: unknown) => void,
    readonly reject: (err: unknown) => void,
    readonly signal: AbortSignal | undefined,
    readonly timeoutMs: number,
  ) {}

  /** The signal's listener (an object, not a closure per request). */
  handleEvent(): void {
    this.client.cancel(this, this.signal!.reason);
  }
}

function onTimeout(p: Pending): void {
  p.client.cancel(p, new McpError(ErrorCode.RequestTimeout, "Request timed out", { timeout: p.timeoutMs }));
}

export class McpRpcClient {
  private nextId = 0;
  /** Not a Map: see Slots (a long-lived session's requests would keep each other alive through young collections). */
  private readonly pending = new Slots<Pending>();
  private closed = false;
  /** The compiler of this session's output schemas, made when a listed tool first has one. */
  private validator: AjvJsonSchemaValidator | undefined;
  /** The tools of the latest listing that have an output schema, and those only tasks can run. */
  private readonly outputs = new OutputSchemas((schema): JsonValidator => (this.validator ??= new AjvJsonSchemaValidator()).getValidator(schema));
  private taskOnly = new Set<string>();

  constructor(private readonly transport: Transport) {
    transport.onmessage = (message) => this.receive(message);
    transport.onclose = () => this.onClose();
    transport.onerror = () => {}; // what an error costs a request reaches it as its answer or its send's rejection
  }

  /** Starts the transport and makes the `initialize` handshake; rejects when the server cannot be used. */
  async connect(timeoutMs: number, signal: AbortSignal): Promise<void> {
    await this.transport.start();
    const raw = await this.request("initialize", { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: CLIENT_INFO }, timeoutMs, signal);
    // Once per session: the SDK's own schema says what a usable answer is.
    const init = InitializeResultSchema.safeParse(raw);
    if (!init.success) throw new Error(`The MCP server's initialize result is not valid: ${init.error.message}`);
    const version = init.data.protocolVersion;
    if (!SUPPORTED_PROTOCOL_VERSIONS.includes(version)) throw new Error(`Server's protocol version is not supported: ${version}`);
    this.transport.setProtocolVersion?.(version);
    await this.transport.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  }

  async listTools(cursor: string | undefined, timeoutMs: number, signal: AbortSignal): Promise<ToolsPage> {
    const page = toolsPage(await this.request("tools/list", cursor === undefined ? undefined : { cursor }, timeoutMs, signal));
    if (cursor === undefined) {
      this.outputs.clear();
      this.taskOnly = new Set();
    }
    for (const t of page.tools) {
      this.outputs.add(t.name, t.outputSchema);
      if (t.execution?.taskSupport === "required") this.taskOnly.add(t.name);
    }
    return page;
  }

  /** A tool's result; its structured content checked against the output schema the listing gave it. */
  async callTool(name: string, args: Record<string, unknown>, timeoutMs: number, signal: AbortSignal): Promise<ToolResult> {
    if (this.taskOnly.has(name)) throw new McpError(ErrorCode.InvalidRequest, `Tool "${name}" requires task-based execution, which the router does not run.`);
    const result = toolResult(await this.request("tools/call", { name, arguments: args }, timeoutMs, signal));
    const check = this.outputs.get(name);
    if (check && !result.isError) {
      if (!result.structuredContent) throw new McpError(ErrorCode.InvalidRequest, `Tool ${name} has an output schema but did not return structured content`);
      const verdict = check(result.structuredContent);
      if (!verdict.valid) throw new McpError(ErrorCode.InvalidParams, `Structured content does not match the tool's output schema: ${verdict.errorMessage}`);
    }
    return result;
  }

  async close(): Promise<void> {
    await this.transport.close();
    this.onClose(); // a transport that does not report its own close
  }

  private request(method: string, params: Record<string, unknown> | undefined, timeoutMs: number, signal: AbortSignal | undefined): Promise<unknown> {
    signal?.throwIfAborted();
    if (this.closed) return Promise.reject(new McpError(ErrorCode.ConnectionClosed, "Connection closed"));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const p = new Pending(this, id, resolve, reject, signal, timeoutMs);
      p.slot = this.pending.add(p);
      p.timer = setTimeout(onTimeout, timeoutMs, p);
      signal?.addEventListener("abort", p, { once: true });
      const message: JSONRPCMessage = params === undefined ? { jsonrpc: "2.0", id, method } : { jsonrpc: "2.0", id, method, params };
      this.transport.send(message).catch((err: unknown) => this.settle(p, err, false));
    });
  }

  /** Ends a request the router gave up on, and tells the server (its answer, if it comes, is dropped). */
  cancel(p: Pending, reason: unknown): void {
    if (p.slot === -1) return;
    this.settle(p, reason, false);
    if (!this.closed) this.transport.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: p.id, reason: String(reason) } }).catch(() => {});
  }

  private settle(p: Pending, value: unknown, ok: boolean): void {
    if (p.slot === -1) return;
    this.pending.remove(p.slot);
    p.slot = -1;
    clearTimeout(p.timer);
    p.signal?.removeEventListener("abort", p);
    if (ok) p.resolve(value);
    else p.reject(value);
  }

  private receive(message: unknown): void {
    if (message === null || typeof message !== "object" || Array.isArray(message)) return;
    const m = message as { id?: unknown; method?: unknown; result?: unknown; error?: unknown };
    if (typeof m.method === "string") {
      // A request of the server's own (a notification needs nothing from the router).
      if (typeof m.id === "string" || typeof m.id === "number") this.answer(m.id, m.method);
      return;
    }
    const id = typeof m.id === "number" ? m.id : typeof m.id === "string" ? Number(m.id) : Number.NaN;
    const p = this.pending.find((q) => q.id === id);
    if (!p) return;
    if (m.result !== undefined) return this.settle(p, m.result, true);
    const e = m.error as { code?: unknown; message?: unknown; data?: unknown } | null | undefined;
    if (e && typeof e === "object" && typeof e.code === "number") return this.settle(p, McpError.fromError(e.code, typeof e.message === "string" ? e.message : "", e.data), false);
    this.settle(p, new McpError(ErrorCode.InternalError, "The MCP server's answer has neither a result nor an error."), false);
  }

  private answer(id: string | number, method: string): void {
    const reply: JSONRPCMessage = method === "ping" ? { jsonrpc: "2.0", id, result: {} } : { jsonrpc: "2.0", id, error: { code: ErrorCode.MethodNotFound, message: "Method not found" } };
    this.transport.send(reply).catch(() => {});
  }

  private onClose(): void {
    if (this.closed) return;
    this.closed = true;
    const gone = new McpError(ErrorCode.ConnectionClosed, "Connection closed");
    this.pending.forEach((p) => this.settle(p, gone, false));
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

function invalid(method: string, what: string): McpError {
  return new McpError(ErrorCode.InvalidParams, `The MCP server's ${method} result is not valid: ${what}`);
}

/** A `tools/list` result, checked: an array of tools, each named and with an input schema. */
function toolsPage(r: unknown): ToolsPage {
  if (!isObject(r) || !Array.isArray(r.tools)) throw invalid("tools/list", "it has no tools array.");
  const tools = r.tools as unknown[];
  for (let i = 0; i < tools.length; i++) {
    const t = tools[i];
    if (!isObject(t) || typeof t.name !== "string") throw invalid("tools/list", `tools[${i}] has no name.`);
    if (!isObject(t.inputSchema)) throw invalid("tools/list", `the tool '${t.name}' has no inputSchema object.`);
  }
  const next = r.nextCursor;
  if (next !== undefined && typeof next !== "string") throw invalid("tools/list", "its nextCursor is not a string.");
  return { tools: tools as RawTool[], nextCursor: next };
}

/** A `tools/call` result, checked: content parts with a type (none: an empty list), structured content an object. */
function toolResult(r: unknown): ToolResult {
  if (!isObject(r)) throw invalid("tools/call", "it is not an object.");
  const content = r.content ?? [];
  if (!Array.isArray(content)) throw invalid("tools/call", "its content is not an array.");
  for (let i = 0; i < content.length; i++) {
    const part: unknown = content[i];
    if (!isObject(part) || typeof part.type !== "string") throw invalid("tools/call", `content[${i}] has no type.`);
  }
  if (r.structuredContent !== undefined && !isObject(r.structuredContent)) throw invalid("tools/call", "its structuredContent is not an object.");
  if (r.isError !== undefined && typeof r.isError !== "boolean") throw invalid("tools/call", "its isError is not a boolean.");
  return { content: content as ToolResult["content"], structuredContent: r.structuredContent as Record<string, unknown> | undefined, isError: r.isError as boolean | undefined };
}
