import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import type { Context } from "hono";
import { webStream, type StreamBody, type TextSink } from "../sse-writer.js";
import { nodeOutgoing, type NodeOutgoing } from "./context.js";

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
 * headers go out with the first events when they are written in the same turn of the event
 * loop (response.created; a native upstream's first read when it came with its headers),
 * else on their own at the end of that turn. Returns node-server's marker for
 * "already sent" (the app middleware must not replace c.res after this: a copy of the marker
 * would be written again).
 */
export function sseResponse(c: Context, body: StreamBody): Response {
  const outgoing = nodeOutgoing(c);
  if (!outgoing) return new Response(webStream(body), { status: 200, headers: SSE_HEADERS });
  writeToNode(body, outgoing);
  return RESPONSE_ALREADY_SENT;
}

function writeToNode(body: StreamBody, out: NodeOutgoing): void {
  out.writeHead(200, SSE_HEADERS);
  const sink: TextSink = {
    write: (text) => (out.writableEnded || out.destroyed ? true : out.write(text)),
    ready: () => (out.destroyed || !out.writableNeedDrain ? Promise.resolve() : drained(out)),
    end: () => {
      if (!out.writableEnded) out.end();
    },
  };
  const cancel = body.start(sink);
  // The client went away before the body's end: the body stops (and aborts its upstream call).
  out.once("close", () => {
    if (!out.writableEnded) cancel();
  });
  // Nothing written yet: the headers go on their own once this turn of the event loop is over
  // (by then an upstream body that came with its headers has been written, and they share a write).
  if (!out.headersSent) setImmediate(flushHeaders, out);
}

function flushHeaders(out: NodeOutgoing): void {
  if (!out.headersSent && !out.writableEnded && !out.destroyed) out.flushHeaders();
}

function drained(out: NodeOutgoing): Promise<void> {
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
