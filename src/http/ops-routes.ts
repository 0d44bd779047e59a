import type { Hono } from "hono";
import { notFound } from "../errors.js";
import { mayUseModel, visibleModels } from "../keys/policy.js";
import type { Runtime } from "../runtime.js";
import type { AppEnv } from "./context.js";

/** Health, readiness, metrics and the model list. */
export function opsRoutes(app: Hono<AppEnv>, rt: Runtime): void {
  app.get("/healthz", (c) => c.json({ status: "ok" }));

  app.get("/readyz", async (c) => {
    const cfg = rt.config;
    const problems: string[] = [];
    let storeOk = true;
    try {
      storeOk = await rt.stores.responses.ping();
    } catch {
      storeOk = false;
    }
    if (!storeOk) problems.push(`store (${rt.stores.kind}) is unreachable`);
    const models: Record<string, { healthy: string[]; unhealthy: string[] }> = {};
    for (const [model, targets] of cfg.targets) {
      const healthy: string[] = [];
      const unhealthy: string[] = [];
      for (const t of targets) (rt.pool.get(t.endpoint)?.health.state() === "cooldown" ? unhealthy : healthy).push(t.endpoint);
      models[model] = { healthy, unhealthy };
      if (healthy.length === 0) problems.push(`model ${model}: every endpoint is cooling down (${unhealthy.join(", ")})`);
    }
    const ready = problems.length === 0;
    return c.json({ status: ready ? "ready" : "not_ready", config: cfg.source, store: { kind: rt.stores.kind, reachable: storeOk }, models, problems }, ready ? 200 : 503);
  });

  app.get("/metrics", async (c) => {
    // The `queued` series of the background gauge is the queue's own count (shared in Redis mode), read at scrape time.
    const waiting = await rt.stores.jobs.waitingCount().catch(() => null);
    if (waiting !== null) rt.metrics.backgroundActive.set({ status: "queued" }, waiting);
    const text = await rt.metrics.registry.metrics();
    return c.body(text, 200, { "content-type": rt.metrics.registry.contentType });
  });

  // Each key sees only the models it may call; another key's model is "does not exist".
  app.get("/v1/models", (c) => c.json({ object: "list", data: visibleModels(rt.config, c.get("apiKey")).map((id) => modelObject(id)) }));

  app.get("/v1/models/:model{.+}", (c) => {
    const id = c.req.param("model");
    if (!Object.hasOwn(rt.config.models, id) || !mayUseModel(c.get("apiKey"), id)) throw notFound(`The model '${id}' does not exist`, "model", "model_not_found");
    return c.json(modelObject(id));
  });
}

const STARTED = Math.floor(Date.now() / 1000);
function modelObject(id: string) {
  return { id, object: "model", created: STARTED, owned_by: "responses-router" };
}
