import type { Hono } from "hono";
import type { CompactService } from "../../responses/compaction/compact-service.js";
import type { Runtime } from "../../runtime/runtime.js";
import type { AppEnv } from "../context.js";
import { forwardedHeaders } from "../forward-headers.js";
import { ClientLink, labelModel, markServedModel, readJsonBody } from "../context.js";
import { admitKey } from "../key-gate.js";

/** POST /v1/responses/compact: admitted and limited like any inference request. */
export function compactRoutes(app: Hono<AppEnv>, service: CompactService, rt: Runtime): void {
  app.post("/v1/responses/compact", async (c) => {
    const body = await readJsonBody(c);
    const stats = c.get("stats");
    labelModel(stats, rt.config.models, body);
    const admitting = admitKey(c, rt, body);
    if (admitting) await admitting;
    const link = new ClientLink(c);
    try {
      const out = await rt.beforeDeadline(link.abort, () => service.compact(body, { owner: c.get("owner"), key: c.get("apiKey"), signal: link.signal, stats, upstreamHeaders: forwardedHeaders((name) => c.req.header(name)) }));
      stats.endpoint = out.endpoint;
      markServedModel(c, out.model);
      return c.json(out.result);
    } finally {
      link.detach();
    }
  });
}
