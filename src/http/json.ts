import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import type { Context } from "hono";
import { nodeOutgoing, type NodeOutgoing } from "./context.js";
import { endThisTurn } from "./turn-writes.js";

/**
 * A 200 JSON answer of the hot routes, its body already serialised. Under @hono/node-server it
 * is written to the ServerResponse itself (`writeJson`: status, one header, the body), not
 * built as a Response that node-server takes apart again; the headers the middleware and the
 * route set on the ServerResponse (x-request-id, x-router-model) go with it.
 * `contentTypeHeader` is the header's name as it appears on the wire today ("Content-Type"
 * from `c.json`, "content-type" from the chat pass-through's Response), so the bytes stay the
 * same. Tests that call `app.request` get the same answer as a Response. Returns node-server's
 * marker for "already sent".
 */
export function jsonText(c: Context, text: string, contentTypeHeader: "Content-Type" | "content-type"): Response {
  const outgoing = nodeOutgoing(c);
  if (!outgoing) return c.body(text, 200, { [contentTypeHeader]: "application/json" });
  return writeJson(outgoing, 200, text, contentTypeHeader);
}

/**
 * Writes a JSON answer to the ServerResponse: status, content-type, then `headers` (after the
 * ones already set there, x-request-id, x-router-model), and `end` at the end of the turn
 * (turn-writes.ts; Node sets Content-Length then, from the body). From here on the answer is
 * decided: `answered(out)` is true and the app's accounting reads its status from `out`.
 */
export function writeJson(out: NodeOutgoing, status: number, text: string, contentTypeHeader: string, headers?: Record<string, string>): Response {
  out.statusCode = status;
  out.setHeader(contentTypeHeader, "application/json");
  if (headers) for (const name in headers) out.setHeader(name, headers[name]!);
  endThisTurn(out, text);
  return RESPONSE_ALREADY_SENT;
}
