/**
 * The MCP Streamable HTTP client transport the router's sessions speak: one POST per JSON-RPC
 * message over undici's request API, the answer read as JSON or as an event stream through
 * the router's own SSE parser, each message handed to the session's client as it arrives.
 *
 * It replaces the SDK's transport, which wraps every answer in WHATWG Headers, a Response and
 * two TransformStreams (a TextDecoderStream, whose close alone builds an Error and its stack
 * trace): that was most of the router's CPU for an MCP call. Kept from the SDK's transport:
 * the server's `mcp-session-id` and the negotiated `mcp-protocol-version` on every later
 * request, redirects followed only within the server's origin (and for a POST only 307/308,
 * which keep the method), a send that fails rejecting with the HTTP status as `code` (404 on a
 * session: the server forgot it). Added: a DELETE of the session when it closes (the SDK's
 * leaves that to its caller), and an answer stream that ends unanswered fails its request at
 * once. What it leaves out: the optional GET stream for messages the server starts (the router needs
 * none between its calls), resuming an answer stream that broke (the call fails and the model is
 * told), and OAuth flows (the operator's token goes as a header).
 */
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { Agent, request, type Dispatcher } from "undici";
import { Slots } from "../../ops/slots.js";
import { SseParser, type SseFrame } from "../../wire/sse-parser.js";

let agent: Agent | undefined;

/** One keep-alive agent for every MCP server (made on first use; undici unrefs idle sockets, so it never holds the process open). */
function mcpAgent(): Agent {
  return (agent ??= new Agent({ keepAliveTimeout: 30_000 }));
}

/** The server answered a message with an HTTP error (`code`: its status; 404 on a session: the session is gone). */
export class McpHttpError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = "McpHttpError";
  }
}

/** The server could not be reached, or the connection broke before it answered: a new session may try again. */
export class McpConnectionError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "McpConnectionError";
  }
}

const MAX_REDIRECTS = 5;
/** How long a closing session's DELETE may take. */
const TERMINATE_TIMEOUT_MS = 5_000;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const ACCEPT = "application/json, text/event-stream";
/** JSON-RPC's internal error: an answer the server could not give. */
const INTERNAL_ERROR = -32603;
/** As much of an error answer's body as goes into its message. */
const ERROR_TEXT_CHARS = 1_000;

export class McpHttpTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  sessionId?: string;
  private protocolVersion?: string;
  private readonly headers: Record<string, string> = {};
  /** Aborted when the session closes (its reason is the requests'); no request listens on it. */
  private readonly controller = new AbortController();
  /**
   * A controller of its own for each request until its answer is read, which `close` aborts. One
   * long-lived signal for all of them kept, in its listener list's removed nodes, every request
   * that had listened on it: once such a node was old, each young-generation collection found
   * every later request alive through it, and went on doing so for other routes' requests after
   * the MCP traffic stopped (BENCHMARKS.md, "What we learnt", round 20).
   */
  private readonly inFlight = new Slots<AbortController>();

  constructor(
    private readonly url: URL,
    headers: Readonly<Record<string, string>>,
  ) {
    // Lower-cased: the transport's own headers below must replace an operator's spelling, never go twice.
    for (const name in headers) this.headers[name.toLowerCase()] = headers[name]!;
  }

  async start(): Promise<void> {}

  setProtocolVersion(version: string): void {
    this.protocolVersion = version;
  }

  async send(message: JSONRPCMessage | JSONRPCMessage[]): Promise<void> {
    const request = this.track();
    let res: Dispatcher.ResponseData;
    try {
      res = await this.post(JSON.stringify(message), request.signal);
    } catch (err) {
      request.done();
      // No answer: the connection could not be made or broke before the server answered.
      throw this.reported(this.controller.signal.aborted ? (err as Error) : new McpConnectionError(`The MCP server could not be reached: ${describe(err)}`, { cause: err }));
    }
    let streaming = false;
    try {
      const session = res.headers["mcp-session-id"];
      if (typeof session === "string" && session.length > 0) this.sessionId = session;
      if (res.statusCode < 200 || res.statusCode > 299) throw await this.failure(res);
      // Notifications and responses are answered 202 without a body; only a request gets messages back.
      const asked = requestIds(message);
      if (res.statusCode === 202 || asked.length === 0) return void res.body.dump().catch(() => {});
      const type = mediaType(res.headers["content-type"]);
      if (type === "text/event-stream") {
        streaming = true;
        return this.readEvents(res.body, asked, request.done);
      }
      if (type === "application/json") return this.deliver(await res.body.json());
      void res.body.dump().catch(() => {});
      throw new McpHttpError(-1, `The MCP server answered with an unexpected content type: ${type || "none"}`);
    } catch (err) {
      // The server answered: whatever broke after that is no reason to run the call again elsewhere.
      throw this.reported(err instanceof McpHttpError || this.controller.signal.aborted ? (err as Error) : new McpHttpError(-1, `The MCP server's answer could not be read: ${describe(err)}`));
    } finally {
      if (!streaming) request.done();
    }
  }

  /** A request's signal (aborted already when the session is closed), and `done` once its answer is read. */
  private track(): { signal: AbortSignal; done: () => void } {
    const controller = new AbortController();
    if (this.controller.signal.aborted) controller.abort(this.controller.signal.reason);
    const slot = this.inFlight.add(controller);
    let open = true;
    return {
      signal: controller.signal,
      done: () => {
        if (!open) return;
        open = false;
        this.inFlight.remove(slot);
      },
    };
  }

  private reported(err: Error): Error {
    this.onerror?.(err);
    return err;
  }

  async close(): Promise<void> {
    if (!this.controller.signal.aborted) {
      const reason = new Error("The MCP session was closed.");
      this.controller.abort(reason);
      this.inFlight.forEach((request) => request.abort(reason));
      // As the protocol asks of a client done with a session: the server may let go of it now.
      if (this.sessionId !== undefined) void this.terminate(this.sessionId);
    }
    this.onclose?.();
  }

  /** DELETE with the session's id; whatever the answer (405: the server keeps sessions until they expire), nothing waits for it. */
  private async terminate(session: string): Promise<void> {
    const headers: Record<string, string> = { ...this.headers, "mcp-session-id": session };
    if (this.protocolVersion !== undefined) headers["mcp-protocol-version"] = this.protocolVersion;
    try {
      const res = await request(this.url, { method: "DELETE", headers, signal: AbortSignal.timeout(TERMINATE_TIMEOUT_MS), dispatcher: mcpAgent() });
      await res.body.dump();
    } catch {
      // The session expires on the server by itself.
    }
  }

  /** The POST, following a redirect that stays within the server's origin and keeps the method. */
  private async post(body: string, signal: AbortSignal): Promise<Dispatcher.ResponseData> {
    let url = this.url;
    for (let hops = 0; ; hops++) {
      const res = await request(url, { method: "POST", headers: this.requestHeaders(), body, signal, dispatcher: mcpAgent() });
      const next = hops < MAX_REDIRECTS && (res.statusCode === 307 || res.statusCode === 308) ? redirectTarget(url, res.headers.location) : null;
      if (!next || !sameOrigin(url, next)) return res;
      await res.body.dump().catch(() => {});
      url = next;
    }
  }

  private requestHeaders(): Record<string, string> {
    const headers: Record<string, string> = { ...this.headers, "content-type": "application/json", accept: ACCEPT };
    if (this.sessionId !== undefined) headers["mcp-session-id"] = this.sessionId;
    if (this.protocolVersion !== undefined) headers["mcp-protocol-version"] = this.protocolVersion;
    return headers;
  }

  /** The error a non-2xx answer rejects the send with: its status, and its text (or where an unfollowed redirect pointed). */
  private async failure(res: Dispatcher.ResponseData): Promise<McpHttpError> {
    const text = (await res.body.text().catch(() => "")).slice(0, ERROR_TEXT_CHARS);
    const target = REDIRECT_STATUSES.has(res.statusCode) ? redirectTarget(this.url, res.headers.location) : null;
    if (target) {
      target.username = target.password = target.search = target.hash = "";
      return new McpHttpError(res.statusCode, `The MCP server redirected to ${target.href}, which was not followed (only redirects within its origin are).`);
    }
    return new McpHttpError(res.statusCode, `The MCP server answered HTTP ${res.statusCode}${text ? `: ${text}` : ""}`);
  }

  /**
   * An event stream's `message` events, each handed on as it arrives. A request the stream ends
   * (or breaks) without answering gets an error answer then, rather than waiting out its timeout;
   * not a ConnectionClosed one, which would run the call again on a new session. `done` when the
   * stream is over, however it ended.
   */
  private readEvents(body: Dispatcher.ResponseData["body"], asked: (string | number)[], done: () => void): void {
    const parser = new SseParser();
    const open = new Set(asked);
    const onFrame = (frame: SseFrame): void => {
      if (frame.data.length === 0 || (frame.event !== undefined && frame.event !== "message")) return;
      let message: unknown;
      try {
        message = JSON.parse(frame.data);
      } catch {
        this.onerror?.(new Error(`The MCP server sent an event that is not JSON: ${frame.data.slice(0, 200)}`));
        return;
      }
      const id = (message as { id?: unknown } | null)?.id;
      if ((typeof id === "string" || typeof id === "number") && !("method" in (message as object))) open.delete(id);
      this.deliver(message);
    };
    const unanswered = (why: string) => {
      for (const id of open) this.onmessage?.({ jsonrpc: "2.0", id, error: { code: INTERNAL_ERROR, message: why } });
      open.clear();
    };
    body.on("data", (chunk: Buffer) => parser.push(chunk, onFrame));
    body.on("end", () => {
      parser.end(onFrame);
      unanswered("The MCP server's event stream ended before it answered.");
    });
    body.on("error", (err: Error) => {
      if (this.controller.signal.aborted) return;
      this.onerror?.(new McpConnectionError(`The MCP server's event stream broke: ${describe(err)}`, { cause: err }));
      unanswered(`The MCP server's event stream broke before it answered: ${describe(err)}`);
    });
    body.on("close", done);
  }

  /** A JSON answer: one message or a batch. The session's client checks each message's shape itself. */
  private deliver(data: unknown): void {
    if (Array.isArray(data)) for (const m of data) this.onmessage?.(m as JSONRPCMessage);
    else this.onmessage?.(data as JSONRPCMessage);
  }
}

/** The ids of the requests among what was sent (notifications and responses have none to answer). */
function requestIds(message: JSONRPCMessage | JSONRPCMessage[]): (string | number)[] {
  const ids: (string | number)[] = [];
  for (const m of Array.isArray(message) ? message : [message]) if ("method" in m && "id" in m && m.id !== undefined) ids.push(m.id);
  return ids;
}

/** A Content-Type's media type, lower-cased, without its parameters. */
function mediaType(value: string | string[] | undefined): string {
  const v = Array.isArray(value) ? value[0] : value;
  if (!v) return "";
  const semi = v.indexOf(";");
  return (semi === -1 ? v : v.slice(0, semi)).trim().toLowerCase();
}

function redirectTarget(from: URL, location: string | string[] | undefined): URL | null {
  const loc = Array.isArray(location) ? location[0] : location;
  if (!loc) return null;
  try {
    return new URL(loc, from);
  } catch {
    return null;
  }
}

/** Same scheme, host and port, and no credentials added: a redirect elsewhere could lead the operator's headers to another server. */
function sameOrigin(from: URL, to: URL): boolean {
  if ((to.username || to.password) && (to.username !== from.username || to.password !== from.password)) return false;
  return from.protocol === to.protocol && from.hostname === to.hostname && from.port === to.port;
}

function describe(err: unknown): string {
  if (err instanceof Error) return (err.cause instanceof Error ? err.cause.message : "") || err.message || err.name;
  return String(err);
}
