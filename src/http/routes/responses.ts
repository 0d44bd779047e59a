/**
 * What src/http/routes/ holds:
 * the thin routes, one file per family: responses, compact, input tokens, conversations,
 * chat/embeddings, models (the list with each model's metadata; Codex's catalog), ops (health,
 * readiness, metrics), admin (usage)
 */
import type { Hono } from "hono";
import type { ResponsesService } from "../../responses/service.js";
import type { Runtime } from "../../runtime/runtime.js";
import type { AppEnv } from "../context.js";
import { ClientLink, includeQuery, labelModel, markServedModel, readJsonBody } from "../context.js";
import { forwardedHeaders } from "../forward-headers.js";
import { admitKey } from "../key-gate.js";
import { jsonText } from "../json.js";
import { sseResponse } from "../sse.js";
import type { SseKeepalive } from "../sse-keepalive.js";

/** /v1/responses routes: parse, call the service, serialise. Nothing else. */
export function responsesRoutes(app: Hono<AppEnv>, service: ResponsesService, rt: Runtime, keepalive?: SseKeepalive): void {
  app.post("/v1/responses", async (c) => {
    const body = await readJsonBody(c);
    const stats = c.get("stats");
    labelModel(stats, rt.config.models, body);
    const admitting = admitKey(c, rt, body);
    if (admitting) await admitting;
    const link = new ClientLink(c);
    let result;
    try {
      result = await rt.beforeDeadline(link.abort, () => service.create(body, { owner: c.get("owner"), key: c.get("apiKey"), signal: link.signal, abort: link.abort, stats, upstreamHeaders: forwardedHeaders((name) => c.req.header(name)) }));
    } catch (err) {
      link.detach();
      throw err;
    }
    stats.endpoint = result.endpoint;
    markServedModel(c, result.model);
    if (result.kind === "json") {
      link.detach();
      return jsonText(c, result.text, "Content-Type");
    }
    return sseResponse(c, result.body, keepalive);
  });

  app.get("/v1/responses/:id", async (c) => {
    if (c.req.query("stream") === "true") {
      const body = await service.streamAgain(c.req.param("id"), c.get("owner"), c.req.query("starting_after"));
      return sseResponse(c, body, keepalive);
    }
    return c.json(await service.retrieve(c.req.param("id"), c.get("owner"), includeQuery(c)));
  });

  app.post("/v1/responses/:id/cancel", async (c) => c.json(await service.cancel(c.req.param("id"), c.get("owner"))));

  app.delete("/v1/responses/:id", async (c) => c.json(await service.remove(c.req.param("id"), c.get("owner"))));

  app.get("/v1/responses/:id/input_items", async (c) =>
    c.json(
      await service.inputItems(c.req.param("id"), c.get("owner"), { after: c.req.query("after"), limit: c.req.query("limit"), order: c.req.query("order"), include: includeQuery(c) }),
    ),
  );
}
