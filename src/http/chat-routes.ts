import type { Context, Hono } from "hono";
import { PassthroughService, type PassthroughContext, type PassthroughResult } from "../passthrough/service.js";
import type { Runtime } from "../runtime.js";
import type { AppEnv } from "./context.js";
import { readJsonBody } from "./context.js";
import { SSE_HEADERS } from "./sse.js";

/** POST /v1/chat/completions and /v1/embeddings: parse, pass through, serialise. */
export function chatRoutes(app: Hono<AppEnv>, rt: Runtime): void {
  const service = new PassthroughService(rt);
  app.post("/v1/chat/completions", (c) => handle(c, rt, (body, ctx) => service.chatCompletions(body, ctx)));
  app.post("/v1/embeddings", (c) => handle(c, rt, (body, ctx) => service.embeddings(body, ctx)));
}

async function handle(c: Context<AppEnv>, rt: Runtime, call: (body: unknown, ctx: PassthroughContext) => Promise<PassthroughResult>): Promise<Response> {
  const body = await readJsonBody(c);
  const stats = c.get("stats");
  const model = (body as { model?: unknown } | null)?.model;
  // Only configured names become metric labels: a client must not be able to mint series.
  if (typeof model === "string" && Object.hasOwn(rt.config.models, model)) stats.model = model;
  // A client that goes away aborts the upstream call (a stream's body is also cancelled then).
  const upstream = new AbortController();
  const client = c.req.raw.signal;
  const onClientGone = () => upstream.abort(client.reason);
  client.addEventListener("abort", onClientGone, { once: true });
  let result: PassthroughResult;
  try {
    result = await call(body, { signal: upstream.signal, abort: () => upstream.abort(new DOMException("client disconnected", "AbortError")), stats });
  } catch (err) {
    client.removeEventListener("abort", onClientGone);
    throw err;
  }
  stats.endpoint = result.endpoint;
  if (result.kind === "stream") return new Response(result.body, { status: 200, headers: SSE_HEADERS });
  client.removeEventListener("abort", onClientGone);
  return new Response(result.body, { status: 200, headers: { "content-type": "application/json" } });
}
