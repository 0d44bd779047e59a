import type { Socket } from "node:net";
import type { WebSocket } from "ws";
import { ApiError, toApiError } from "../ops/errors.js";
import { MAX_JSON_DEPTH, nestingDepth } from "../http/context.js";
import { drained } from "../http/sse.js";
import { admit, estimateTokens, keyLimits, type KeyGate } from "../keys/limits.js";
import { NO_KEY, type ApiKey } from "../keys/policy.js";
import { NO_TOKENS, recordUsageOf, type TokenCount } from "../keys/usage.js";
import { withLogContext } from "../ops/log.js";
import type { WebSocketCloseReason } from "../ops/metrics.js";
import type { RequestContext, ResponsesService } from "../responses/service.js";
import { limiterDeps, usageDeps, type Runtime } from "../runtime/runtime.js";
import type { EventSink } from "../wire/sse-writer.js";
import { backgroundUnsupported, connectionLimitReached, errorEvent, invalidJson, laneQueueFull, shuttingDown, steerFailed, tooManyLanes, unknownEventType, withStreamId } from "./events.js";
import { RecentResponses } from "./recent.js";
import { endSocketSpan } from "./span.js";
import { logIds, type Span } from "../tracing/index.js";

/**
 * Close codes: 1001 going away (the connection's time limit: the SDKs treat it as recoverable and
 * reconnect), 1003 unsupported data, 1008 policy violation (key revoked), 1009 message too big,
 * 1012 service restart (shutdown: recoverable too).
 */
const GOING_AWAY = 1001;
const UNSUPPORTED_DATA = 1003;
const POLICY_VIOLATION = 1008;
const MESSAGE_TOO_BIG = 1009;
const SERVICE_RESTART = 1012;

/** Responses a connection keeps for `previous_response_id` (the newest; OpenAI keeps the last one per socket). */
const RECENT_RESPONSES = 32;
/** response.create events that may wait behind a running one on the same lane. */
const LANE_QUEUE = 32;

/** One `response.create`, parsed: the Responses body and its WebSocket envelope. */
interface CreateMessage {
  body: Record<string, unknown>;
  streamId: string | undefined;
  generate: boolean;
  bytes: number;
}

/** A `stream_id` lane: its requests run one after another (FIFO); the running one can be aborted. */
interface Lane {
  queue: CreateMessage[];
  abort: AbortController | null;
}

/**
 * One client's socket on /v1/responses. Each `response.create` is admitted against the key's
 * limits and handed to the Responses service exactly as POST /v1/responses is (stream on),
 * its events sent one JSON text message each; an error is an `error` event and the socket
 * stays usable. The connection keeps its recent responses so `store: false` turns chain.
 */
export class ResponsesSocket {
  private readonly lanes = new Map<string, Lane>();
  private readonly recent = new RecentResponses(RECENT_RESPONSES);
  private readonly limitTimer: NodeJS.Timeout;
  /** No new responses: the time limit passed, or the router is shutting down; closes when the lanes are done. */
  private ending: { code: number; reason: string; why: WebSocketCloseReason; refuse: ApiError } | null = null;
  private closeReason: WebSocketCloseReason | null = null;
  private closed = false;
  /** Answered the last ping (idle check). */
  alive = true;

  constructor(
    readonly ws: WebSocket,
    private readonly rt: Runtime,
    private readonly service: ResponsesService,
    private key: ApiKey | null,
    private readonly onClosed: (conn: ResponsesSocket, reason: WebSocketCloseReason) => void,
    /** The upgrade request's `traceparent`/`tracestate`: each response.create's span continues that trace. */
    private readonly traceHeaders: Readonly<Record<string, string | undefined>> = {},
    /** The upgrade request's allow-listed headers (OpenAI-Beta): each response.create's native upstream call carries them. */
    private readonly upstreamHeaders?: Readonly<Record<string, string>>,
  ) {
    const limitMs = rt.config.server.websocket.max_connection_duration;
    this.limitTimer = setTimeout(() => this.reachLimit(limitMs), limitMs);
    this.limitTimer.unref();
    ws.on("message", (data, isBinary) => this.onMessage(data as Buffer, isBinary));
    withCloseReasons(ws, rt);
    ws.on("pong", () => (this.alive = true));
    ws.on("error", (err: Error & { code?: string }) => {
      // ws closes the socket itself after a protocol error (1009 for a message over maxPayload).
      this.closeReason ??= err.code === "WS_ERR_UNSUPPORTED_MESSAGE_LENGTH" ? "message_too_big" : "error";
    });
    ws.on("close", () => this.onClose());
  }

  /** Lanes with a response running or waiting. */
  get busy(): boolean {
    return this.lanes.size > 0;
  }

  /** Shutdown: no new responses; the socket closes with 1012 once the in-flight ones have ended. */
  drain(): void {
    this.endWhenIdle(SERVICE_RESTART, "server restarting", "shutdown", shuttingDown());
  }

  /** Cuts the socket (shutdown after its grace, or a client that stopped answering pings). */
  terminate(why: WebSocketCloseReason): void {
    this.closeReason ??= why;
    this.ws.terminate();
  }

  private reachLimit(limitMs: number): void {
    const err = connectionLimitReached(limitMs);
    this.send(errorEvent(err, undefined));
    this.endWhenIdle(GOING_AWAY, "connection time limit reached", "connection_limit", err);
  }

  private endWhenIdle(code: number, reason: string, why: WebSocketCloseReason, refuse: ApiError): void {
    if (this.ending || this.closed) return;
    this.ending = { code, reason, why, refuse };
    // Waiting requests never start; running ones finish (shutdown: by its deadline, with response.failed).
    for (const lane of this.lanes.values()) for (const msg of lane.queue.splice(0)) this.refuse(msg, refuse);
    this.closeIfDone();
  }

  private closeIfDone(): void {
    if (!this.ending || this.busy || this.closed) return;
    this.closeReason ??= this.ending.why;
    this.ws.close(this.ending.code, this.ending.reason);
  }

  private onMessage(data: Buffer, isBinary: boolean): void {
    if (isBinary) {
      this.closeReason ??= "binary_frame";
      this.ws.close(UNSUPPORTED_DATA, "binary messages are not supported: send JSON text messages");
      return;
    }
    let msg: CreateMessage;
    try {
      const event = parseEvent(data);
      if (event.type === "response.steer") return this.send(steerFailed(event));
      // Codex tells the server it has handled a response; nothing to answer.
      if (event.type === "response.processed") return;
      msg = parseCreate(event, data.length);
    } catch (err) {
      this.send(errorEvent(toApiError(err), streamIdOf(err)));
      this.countRefused(toApiError(err));
      return;
    }
    if (this.ending) return this.refuse(msg, this.ending.refuse);
    const laneKey = msg.streamId ?? "";
    let lane = this.lanes.get(laneKey);
    if (!lane) {
      if (this.lanes.size >= this.rt.config.server.websocket.max_lanes) return this.refuse(msg, tooManyLanes(this.rt.config.server.websocket.max_lanes));
      lane = { queue: [], abort: null };
      this.lanes.set(laneKey, lane);
    } else if (lane.queue.length >= LANE_QUEUE) {
      return this.refuse(msg, laneQueueFull(LANE_QUEUE));
    }
    lane.queue.push(msg);
    if (!lane.abort) void this.runLane(laneKey, lane);
  }

  private async runLane(laneKey: string, lane: Lane): Promise<void> {
    for (let msg = lane.queue.shift(); msg && !this.closed; msg = lane.queue.shift()) {
      lane.abort = new AbortController();
      const requestId = this.rt.ids("req");
      const span = this.rt.tracing.on ? this.rt.tracing.startRequest("response.create", (h) => this.traceHeaders[h], { "network.protocol.name": "websocket", "url.path": "/v1/responses", "router.request_id": requestId }) : undefined;
      const abort = lane.abort;
      const m = msg;
      if (span) await this.rt.tracing.within(span, () => withLogContext({ requestId, ...logIds(span) }, () => this.respond(m, abort, requestId, span)));
      else await withLogContext({ requestId }, () => this.respond(m, abort, requestId));
      lane.abort = null;
    }
    this.lanes.delete(laneKey);
    this.closeIfDone();
  }

  /** One response.create, from admission to its last event. Never throws. */
  private async respond(msg: CreateMessage, abort: AbortController, requestId: string, span?: Span): Promise<void> {
    const started = performance.now();
    const model = configuredModel(this.rt, msg.body.model);
    const stats: { upstreamMs?: number; tokens?: TokenCount; responseId?: string } = {};
    let gate: KeyGate | null = null;
    let status = 200;
    try {
      if (msg.body.background === true) throw backgroundUnsupported();
      this.key = this.keyInForce();
      gate = await this.admit(msg);
      const ctx: RequestContext = {
        owner: this.key?.name ?? null,
        key: this.key,
        signal: abort.signal,
        abort: () => abort.abort(new DOMException("client disconnected", "AbortError")),
        stats,
        history: this.recent,
        remember: (record) => this.recent.add(record),
        upstreamHeaders: this.upstreamHeaders,
      };
      const events = msg.generate ? await this.rt.beforeDeadline(ctx.abort, () => this.service.createEvents(msg.body, ctx)) : await this.service.prepare(msg.body, ctx);
      const sink = this.sink(msg.streamId);
      await events.run(sink)
        .catch(() => {
          // run() reports its own failures as events; what is left is this socket closing.
        })
        .finally(() => sink.flush!());
    } catch (err) {
      const e = toApiError(err);
      status = e.status;
      if (!this.closed) this.send(errorEvent(e, msg.streamId));
      if (status === 401 && !this.closed) {
        // The key is gone: reconnecting shows the client the 401 at the upgrade.
        this.closeReason ??= "unauthorized";
        this.ws.close(POLICY_VIOLATION, "the API key is no longer valid");
      }
    } finally {
      this.account(msg, model, status, stats, gate, started, requestId, span);
      if (span) endSocketSpan(span, { model, status, tokens: stats.tokens, owner: this.key?.name ?? null, streamId: msg.streamId });
    }
  }

  /**
   * The socket's key as the config in force has it (a reload may change its limits or models,
   * or remove it: then 401, as HTTP answers the next request).
   */
  private keyInForce(): ApiKey | null {
    if (this.rt.config.server.api_keys.length === 0 && this.rt.keyRing.size === 0) return null;
    const current = this.key ? this.rt.keyInForce(this.key) : null;
    if (!current) throw new ApiError(401, "Incorrect API key provided.", { type: "invalid_request_error", code: "invalid_api_key" });
    return current;
  }

  private async admit(msg: CreateMessage): Promise<KeyGate | null> {
    const limits = keyLimits(this.key);
    if (!this.key || !limits) return null;
    const { gate } = await admit(limiterDeps(this.rt), this.key, limits, this.rt.ids("req"), estimateTokens(msg.bytes, msg.body));
    return gate;
  }

  /** What the HTTP shell does when a request is over: settle the key's gate, record usage, count it, list it for the console. */
  private account(msg: CreateMessage, model: string, status: number, stats: { upstreamMs?: number; tokens?: TokenCount; responseId?: string }, gate: KeyGate | null, started: number, requestId: string, span: Span | undefined): void {
    const { tokens, upstreamMs } = stats;
    gate?.settleOutcome(tokens, status < 400);
    const used = tokens ?? NO_TOKENS;
    const keyName = this.key?.name ?? NO_KEY;
    if (model && status < 400) recordUsageOf(usageDeps(this.rt), keyName, model, 1, used);
    this.rt.metrics.responses.inc({ transport: "websocket", model, status: String(status) });
    const seconds = (performance.now() - started) / 1000;
    if (upstreamMs !== undefined) this.rt.metrics.overhead.observe({ route: "/v1/responses" }, Math.max(0, seconds - upstreamMs / 1000));
    if (msg.generate) {
      // The console's requests page lists a socket's responses beside the HTTP ones (a warm-up generates nothing).
      this.rt.recent.record(requestId, "WS", "/v1/responses", model, keyName, status, seconds * 1000, used.input, used.output, stats.responseId ?? "", false, span ? span.spanContext().traceId : "");
    }
    const chained = typeof msg.body.previous_response_id === "string" || undefined;
    this.rt.log.info({ transport: "websocket", route: "/v1/responses", model: model || undefined, streamId: msg.streamId, warmup: !msg.generate || undefined, chained, status, ms: Math.round(seconds * 1000) }, "websocket response");
  }

  private refuse(msg: CreateMessage, err: ApiError): void {
    this.send(errorEvent(err, msg.streamId));
    this.countRefused(err, configuredModel(this.rt, msg.body.model));
  }

  private countRefused(err: ApiError, model = ""): void {
    this.rt.metrics.responses.inc({ transport: "websocket", model, status: String(err.status) });
  }

  /**
   * The service's events, one text message each, tagged with the lane when it has one. The
   * messages of one upstream chunk go out in one socket write: the TCP socket is corked at
   * the chunk's first event and uncorked at its flush (ws corks each frame the same way).
   */
  private sink(streamId: string | undefined): EventSink {
    const socket = (this.ws as unknown as { _socket?: Socket })._socket;
    let corked = false;
    return {
      send: (_type, data) => {
        if (!corked && socket) {
          socket.cork();
          corked = true;
        }
        this.send(withStreamId(data, streamId));
      },
      flush: () => {
        if (!corked) return;
        corked = false;
        socket!.uncork();
      },
      // ws writes each frame to the socket (no compression here): its buffer is the client's backlog.
      backlog: () => (socket && socket.writableNeedDrain && !this.closed ? drained(socket) : null),
    };
  }

  private send(message: string): void {
    if (!this.closed) this.ws.send(message);
  }

  private onClose(): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.limitTimer);
    // The client went away (or the socket was cut): running upstream calls stop and free their slots.
    for (const lane of this.lanes.values()) {
      lane.queue.length = 0;
      lane.abort?.abort(new DOMException("client disconnected", "AbortError"));
    }
    this.recent.clear();
    this.onClosed(this, this.closeReason ?? "client");
  }
}

/** A message as a JSON object, or an ApiError naming what is wrong with it. */
function parseEvent(data: Buffer): Record<string, unknown> {
  let event: unknown;
  try {
    event = JSON.parse(data.toString("utf8"));
  } catch {
    throw invalidJson();
  }
  if (event === null || typeof event !== "object" || Array.isArray(event)) throw invalidJson();
  if (nestingDepth(event, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) {
    throw new ApiError(400, `The message is nested more than ${MAX_JSON_DEPTH} levels deep.`, { type: "invalid_request_error", code: "nesting_too_deep" });
  }
  return event as Record<string, unknown>;
}

/** A `response.create` event, or an ApiError naming what is wrong with it. */
function parseCreate(event: Record<string, unknown>, bytes: number): CreateMessage {
  const { type, stream_id: streamId, generate, stream: _implicit, ...body } = event;
  if (streamId !== undefined && typeof streamId !== "string") {
    throw new ApiError(400, `Invalid type for 'stream_id': expected a string, but got ${typeof streamId}.`, { type: "invalid_request_error", param: "stream_id", code: "invalid_type" });
  }
  if (type !== "response.create") throw tagged(unknownEventType(type), streamId);
  if (generate !== undefined && typeof generate !== "boolean") {
    throw tagged(new ApiError(400, `Invalid type for 'generate': expected a boolean, but got ${typeof generate}.`, { type: "invalid_request_error", param: "generate", code: "invalid_type" }), streamId);
  }
  return { body, streamId, generate: generate !== false, bytes };
}

/** An error about a message that named its lane: the error event goes to that lane. */
function tagged(err: ApiError, streamId: string | undefined): ApiError {
  return Object.assign(err, { streamId });
}

function streamIdOf(err: unknown): string | undefined {
  return (err as { streamId?: string }).streamId;
}

/** Only configured model names become metric labels. */
function configuredModel(rt: Runtime, model: unknown): string {
  return typeof model === "string" && Object.hasOwn(rt.config.models, model) ? model : "";
}

/**
 * The `ws` library closes a socket itself on a protocol error (1009 for a message over
 * maxPayload) with no reason; the close frame then says why, as every other close here does.
 */
function withCloseReasons(ws: WebSocket, rt: Runtime): void {
  const close = ws.close.bind(ws);
  ws.close = (code?: number, reason?: string | Buffer) => {
    if (code === MESSAGE_TOO_BIG && !reason) reason = `message too big: the limit is ${rt.config.server.websocket.max_message_bytes} bytes`;
    close(code, reason);
  };
}
