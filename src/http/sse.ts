import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import type { Context } from "hono";
import { webStream, type StreamBody, type TextSink } from "../wire/sse-writer.js";
import { nodeOutgoing, type NodeOutgoing } from "./context.js";
import type { KeptAlive, SseKeepalive } from "./sse-keepalive.js";
import { ended, endThisTurn, holdThisTurn } from "./turn-writes.js";
import { headersGone, waitForFirstWrite } from "./headers-wait.js";

export const SSE_HEADERS = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache",
  connection: "keep-alive",
  "x-accel-buffering": "no",
};

/**
 * A 200 text/event-stream answer. Under @hono/node-server the body writes its text to the
 * ServerResponse itself: no web ReadableStream between the router and the socket (node-server
 * reads one chunk at a time from it through promises, each chunk encoded first), and the
 * headers go out with the first events, or on their own after HEADERS_WAIT_MS without one
 * (headers-wait.ts).
 * A silent stream gets comment lines from `keepalive`.
 * Returns node-server's marker for "already sent" (the app middleware must not replace c.res
 * after this: a copy of the marker would be written again).
 */
export function sseResponse(c: Context, body: StreamBody, keepalive?: SseKeepalive): Response {
  const outgoing = nodeOutgoing(c);
  if (!outgoing) return new Response(webStream(body), { status: 200, headers: SSE_HEADERS });
  writeToNode(body, outgoing, keepalive);
  return RESPONSE_ALREADY_SENT;
}

function writeToNode(body: StreamBody, out: NodeOutgoing, keepalive: SseKeepalive | undefined): void {
  out.writeHead(200, SSE_HEADERS);
  const headers = waitForFirstWrite(out);
  let alive: KeptAlive | undefined;
  const write = (text: string | Uint8Array): boolean => {
    headersGone(headers);
    alive?.wrote();
    if (ended(out) || out.destroyed) return true;
    holdThisTurn(out);
    return out.write(text);
  };
  alive = keepalive?.watch(write, () => !ended(out) && !out.destroyed && !out.writableNeedDrain);
  const sink: TextSink = {
    write,
    ready: () => (out.destroyed || !out.writableNeedDrain ? Promise.resolve() : drained(out)),
    end: () => {
      headersGone(headers);
      alive?.done();
      if (!ended(out)) endThisTurn(out);
    },
  };
  const cancel = body.start(sink);
  // The client went away before the body's end: the body stops (and aborts its upstream call).
  // `on`: close comes once (node guards it); `once` would add a wrapper closure per stream.
  out.on("close", () => {
    headersGone(headers);
    alive?.done();
    if (!ended(out)) cancel();
  });
}

/** Resolves when a writable (a response, a socket) has drained its buffer or closed. */
export function drained(out: Pick<NodeJS.EventEmitter, "on" | "off">): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      out.off("drain", done);
      out.off("close", done);
      resolve();
    };
    out.on("drain", done);
    out.on("close", done);
  });
}
