/**
 * What src/ws/ holds:
 * `GET /v1/responses` with `Upgrade: websocket` (the `ws` library on the same HTTP server): auth
 * before the upgrade, one `ResponsesSocket` per connection (`stream_id` lanes run FIFO, per-key
 * admission per `response.create`, the connection's recent responses as a history source for
 * `store: false` chaining, time limit, pings, shutdown with 1012); calls
 * `ResponsesService.createEvents`/`prepare` and sends each event as one JSON text message
 */
/**
 * The path of a WebSocket request:
 * `GET /v1/responses` with `Upgrade: websocket` never reaches the Hono app: `ws/server.ts` takes
 * the Node server's `upgrade` event, authenticates with `http/auth.ts` (a refusal is the HTTP
 * error written on the raw socket) and hands the socket to the `ws` library. Each
 * `response.create` message then takes steps 2-8 through `ws/connection.ts`: admission (`keys/`),
 * `ResponsesService.createEvents` (or `prepare` for `generate: false`) with the connection's
 * recent responses as an extra history source for the planner, and an `EventSink` that sends each
 * event as one text message. The service is the same one HTTP calls; `create` wraps the same event
 * producer in its SSE body.
 */
import { STATUS_CODES, type IncomingMessage, type Server } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer } from "ws";
import { ApiError, notFound, toApiError } from "../ops/errors.js";
import { authenticate } from "../http/auth.js";
import { forwardedHeaders } from "../http/forward-headers.js";
import type { ApiKey } from "../keys/policy.js";
import type { ResponsesService } from "../responses/service.js";
import type { Runtime } from "../runtime/runtime.js";
import { ResponsesSocket } from "./connection.js";
import { shuttingDown } from "./events.js";

export const RESPONSES_PATH = "/v1/responses";

/** The open sockets, for shutdown. */
export interface ResponsesSockets {
  /** Stops taking sockets and responses; idle sockets close now with 1012, busy ones once their responses end. */
  drain(): void;
  /** Cuts whatever is still open (the shutdown grace is over). */
  terminate(): void;
  readonly open: number;
}

/**
 * Serves `GET /v1/responses` with `Upgrade: websocket` on the router's HTTP server (the
 * `ws` library, upgraded by hand so auth runs first: a bad key gets the same 401 body as
 * HTTP, before any WebSocket exists). Any other upgrade gets the HTTP answer it would get.
 */
export function serveResponsesSockets(server: Server, rt: Runtime, service: ResponsesService): ResponsesSockets {
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, clientTracking: false });
  const open = new Set<ResponsesSocket>();
  let draining = false;

  // One timer for every socket: each tick drops the sockets that did not answer the last ping
  // and pings the others. A reload's new ping_interval applies from the next tick.
  let every = rt.config.server.websocket.ping_interval;
  const ping = () => {
    for (const conn of open) {
      if (!conn.alive) conn.terminate("ping_timeout");
      else {
        conn.alive = false;
        conn.ws.ping();
      }
    }
    if (rt.config.server.websocket.ping_interval !== every) {
      every = rt.config.server.websocket.ping_interval;
      clearInterval(pinger);
      pinger = setInterval(ping, every).unref();
    }
  };
  let pinger = setInterval(ping, every).unref();

  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on("error", () => socket.destroy());
    let found: ApiKey | null | Promise<ApiKey | null>;
    try {
      const path = (req.url ?? "/").split("?")[0];
      if (path !== RESPONSES_PATH || req.method !== "GET" || req.headers.upgrade?.toLowerCase() !== "websocket") {
        throw notFound(`Invalid URL (${req.method} ${path})`, null, "unknown_url");
      }
      if (draining || rt.phase !== "serving") throw shuttingDown();
      found = authenticate(rt.config, req.headers.authorization, rt.keyRing);
    } catch (err) {
      return refuse(socket, toApiError(err));
    }
    // A token this instance did not know yet (a key made a moment ago on another one).
    if (found instanceof Promise) found.then((key) => accept(req, socket, head, key), (err: unknown) => refuse(socket, toApiError(err)));
    else accept(req, socket, head, found);
  });

  const accept = (req: IncomingMessage, socket: Duplex, head: Buffer, key: ApiKey | null): void => {
    // maxPayload is read per upgrade: a reload's new limit applies to the next socket.
    (wss.options as { maxPayload?: number }).maxPayload = rt.config.server.websocket.max_message_bytes;
    wss.handleUpgrade(req, socket, head, (ws) => {
      const conn = new ResponsesSocket(ws, rt, service, key, (c, reason) => {
        open.delete(c);
        rt.metrics.websocketConnections.set(open.size);
        rt.metrics.websocketCloses.inc({ reason });
        rt.log.info({ transport: "websocket", reason }, "websocket closed");
      }, traceHeadersOf(req), forwardedHeaders((name) => req.headers[name]));
      open.add(conn);
      rt.metrics.websocketConnections.set(open.size);
      // The client's OpenAI-Beta (Codex sends responses_websockets=<date>): what a socket said it speaks.
      rt.log.info({ transport: "websocket", key: key?.name, beta: req.headers["openai-beta"] }, "websocket opened");
      if (draining) conn.drain();
    });
  };

  return {
    drain() {
      draining = true;
      clearInterval(pinger);
      for (const conn of open) conn.drain();
    },
    terminate() {
      for (const conn of open) conn.terminate("shutdown");
    },
    get open() {
      return open.size;
    },
  };
}

/** An HTTP answer on the raw socket of a refused upgrade: the same status, headers and body as over HTTP. */
function refuse(socket: Duplex, err: ApiError): void {
  const status = err.status === 499 ? 400 : err.status;
  const body = JSON.stringify(err.toBody());
  let head = `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ""}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n`;
  for (const [name, value] of Object.entries(err.headers)) head += `${name}: ${value}\r\n`;
  socket.end(`${head}\r\n${body}`);
}

/** The trace context the client sent with the upgrade (only read when tracing is on). */
function traceHeadersOf(req: IncomingMessage): Record<string, string | undefined> {
  const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
  return { traceparent: one(req.headers.traceparent), tracestate: one(req.headers.tracestate) };
}
