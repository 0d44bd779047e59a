import type { Context, Hono } from "hono";
import { ProxyService, type ProxyContext, type ProxyResult } from "../../proxy/service.js";
import type { Runtime } from "../../runtime/runtime.js";
import type { AppEnv } from "../context.js";
import { ClientLink, labelModel, markServedModel, readJsonBody } from "../context.js";
import { admitKey } from "../key-gate.js";
import { jsonText } from "../json.js";
import { sseResponse } from "../sse.js";
import type { SseKeepalive } from "../sse-keepalive.js";

/** POST /v1/chat/completions and /v1/embeddings: parse, pass through, serialise. */
export function chatRoutes(app: Hono<AppEnv>, rt: Runtime, keepalive?: SseKeepalive): void {
  const service = new ProxyService(rt);
  app.post("/v1/chat/completions", (c) => handle(c, rt, keepalive, (body, ctx) => service.chatCompletions(body, ctx)));
  app.post("/v1/embeddings", (c) => handle(c, rt, keepalive, (body, ctx) => service.embeddings(body, ctx)));
}

async function handle(c: Context<AppEnv>, rt: Runtime, keepalive: SseKeepalive | undefined, call: (body: unknown, ctx: ProxyContext) => Promise<ProxyResult>): Promise<Response> {
  const body = await readJsonBody(c);
  const stats = c.get("stats");
  labelModel(stats, rt.config.models, body);
  const admitting = admitKey(c, rt, body);
  if (admitting) await admitting;
  const link = new ClientLink(c);
  let result: ProxyResult;
  try {
    result = await rt.beforeDeadline(link.abort, () => call(body, { key: c.get("apiKey"), signal: link.signal, abort: link.abort, stats }));
  } catch (err) {
    link.detach();
    throw err;
  }
  stats.endpoint = result.endpoint;
  markServedModel(c, result.model);
  if (result.kind === "stream") return sseResponse(c, result.body, keepalive);
  link.detach();
  return jsonText(c, result.body, "content-type");
}
