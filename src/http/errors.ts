import type { Context } from "hono";
import { ApiError, toApiError } from "../ops/errors.js";
import { nodeOutgoing } from "./context.js";
import { writeJson } from "./json.js";
import { answered } from "./turn-writes.js";

/** The one place an error becomes an HTTP answer: status, headers, OpenAI error body. */
export function errorResponse(err: unknown): Response {
  const { status, body, headers } = errorAnswer(err);
  return new Response(body, { status, headers: { "content-type": "application/json", ...headers } });
}

/**
 * The same answer, under @hono/node-server written to the ServerResponse directly (as the JSON
 * answers, json.ts: same headers in the same order, Node's Content-Length); a Response under
 * `app.request`. The app's accounting reads the status from the ServerResponse.
 */
export function sendError(c: Context, err: unknown): Response {
  const outgoing = nodeOutgoing(c);
  if (!outgoing || answered(outgoing)) return errorResponse(err);
  const { status, body, headers } = errorAnswer(err);
  return writeJson(outgoing, status, body, "content-type", headers);
}

function errorAnswer(err: unknown): { status: number; body: string; headers: Record<string, string> } {
  const e = err instanceof ApiError ? err : toApiError(err);
  return { status: e.status === 499 ? 400 : e.status, body: JSON.stringify(e.toBody()), headers: e.headers };
}
