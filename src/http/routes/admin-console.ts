import type { Hono } from "hono";
import { ApiError, notFound } from "../../ops/errors.js";
import { redactTree } from "../../ops/secrets.js";
import type { Runtime } from "../../runtime/runtime.js";
import type { AppEnv } from "../context.js";
import { requireAdmin } from "./admin.js";

/**
 * What the console (/ui/) reads besides keys and usage, for admin keys, as JSON: this
 * instance's counters over time, its endpoints' live state, its recent requests and one
 * stored response, its background jobs, and the effective config with every secret redacted.
 * Each is this instance's view (what its /metrics and /health/backends say).
 */
export function adminConsoleRoutes(app: Hono<AppEnv>, rt: Runtime): void {
  app.get("/v1/admin/metrics", async (c) => {
    requireAdmin(c, rt, "metrics.read");
    return c.json({ object: "admin.metrics", interval_ms: rt.history.intervalMs, totals: await rt.history.totals(), data: rt.history.series() });
  });

  app.get("/v1/admin/endpoints", async (c) => {
    requireAdmin(c, rt, "health.read");
    const endpoints = [...rt.pool.all()].map((ep) => {
      const probe = rt.lastProbes.get(ep.name);
      return {
        name: ep.name,
        kind: ep.config.kind,
        url: redactTree(ep.config.url) as string,
        state: ep.health.state(),
        in_flight: ep.inFlight,
        max_concurrency: ep.config.max_concurrency,
        cooldown_remaining_ms: ep.health.retryAfterMs(),
        last_probe: probe ? { at: Math.floor(probe.at / 1000), ok: probe.ok, detail: probe.detail } : null,
      };
    });
    const models = [...rt.config.targets].map(([model, targets]) => ({ model, endpoints: targets.map((t) => t.endpoint) }));
    return c.json({ object: "admin.endpoints", probe_interval_ms: rt.config.routing.health.probe_interval ?? null, endpoints, models });
  });

  app.get("/v1/admin/requests", (c) => {
    requireAdmin(c, rt, "requests.read");
    return c.json({ object: "list", data: rt.recent.list().map(requestView) });
  });

  // One stored response with its input, for any owner (the admin reads every key's).
  app.get("/v1/admin/responses/:id", async (c) => {
    requireAdmin(c, rt, "requests.read");
    const id = c.req.param("id");
    const rec = await rt.stores.responses.get(id).catch((err: unknown) => {
      rt.metrics.storeErrors.inc({ store: "responses", op: "get" });
      throw new ApiError(503, `The router's response store is unavailable: ${(err as Error).message}`, { type: "server_error", code: "store_unavailable" });
    });
    if (!rec) throw notFound(`No stored response with id '${id}' (it was made with store: false, or has expired).`, "id", "response_not_found");
    const trace = rt.recent.list().find((r) => r.responseId === id)?.traceId || null;
    return c.json({ object: "admin.response", id, key: rec.owner, endpoint: rec.endpoint ?? null, trace_id: trace, input: rec.input, response: rec.response });
  });

  app.get("/v1/admin/jobs", async (c) => {
    requireAdmin(c, rt, "jobs.read");
    const waiting = await rt.stores.jobs.waitingCount().catch(() => null);
    const running = (await rt.metrics.backgroundActive.get()).values.find((v) => v.labels.status === "in_progress")?.value ?? 0;
    // The background responses this instance accepted lately, with their stored status now.
    const recent = rt.recent.list().filter((r) => r.background && r.responseId);
    const jobs = await Promise.all(
      recent.map(async (r) => {
        const rec = await rt.stores.responses.get(r.responseId).catch(() => null);
        return { id: r.responseId, key: r.key, model: r.model, created_at: Math.floor(r.at / 1000), status: rec?.response.status ?? "unknown" };
      }),
    );
    return c.json({ object: "admin.jobs", store: rt.stores.kind, waiting, running_here: running, data: jobs });
  });

  app.get("/v1/admin/config", (c) => {
    requireAdmin(c, rt, "config.read");
    const { targets: _targets, ...config } = rt.config as typeof rt.config & { targets: unknown };
    return c.json({ object: "admin.config", source: rt.config.source, last_reload: rt.lastReload && { ...rt.lastReload, at: Math.floor(rt.lastReload.at / 1000) }, config: redactTree(config) });
  });
}

function requestView(r: ReturnType<Runtime["recent"]["list"]>[number]) {
  return {
    request_id: r.requestId,
    created_at: r.at / 1000,
    method: r.method,
    route: r.route,
    model: r.model,
    key: r.key,
    status: r.status,
    latency_ms: Math.round(r.ms),
    input_tokens: r.inputTokens,
    output_tokens: r.outputTokens,
    response_id: r.responseId || null,
    background: r.background,
    trace_id: r.traceId || null,
  };
}
