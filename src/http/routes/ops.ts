import type { Hono } from "hono";
import type { Runtime } from "../../runtime/runtime.js";
import { requireAdmin } from "./admin.js";
import type { AppEnv } from "../context.js";

/** Health, readiness and metrics. */
export function opsRoutes(app: Hono<AppEnv>, rt: Runtime): void {
  app.get("/healthz", (c) => c.json({ status: "ok" }));

  // Readiness of this process only: config loaded, listening, not draining. Backends and the
  // store are shared by every replica, so their health must not take replicas out of service:
  // the store's state is reported (a Redis Cluster's cluster_state and nodes), never judged here.
  app.get("/readyz", async (c) => {
    const ready = rt.phase === "serving";
    return c.json({ status: ready ? "ready" : rt.phase, config: rt.config.source, store: await storeState(rt) }, ready ? 200 : 503);
  });

  // For people and alerts: the store and every model's endpoints. 503 when something is down.
  // Admin only once the router has keys: it names every endpoint and the store.
  app.get("/health/backends", async (c) => {
    requireAdmin(c, rt, "health.read");
    const report = await backendHealth(rt);
    return c.json(report, report.status === "ok" ? 200 : 503);
  });

  app.get("/metrics", async (c) => {
    // The `queued` series of the background gauge is the queue's own count (shared in Redis mode), read at scrape time.
    const waiting = await rt.stores.jobs.waitingCount().catch(() => null);
    if (waiting !== null) rt.metrics.backgroundActive.set({ status: "queued" }, waiting);
    const text = await rt.metrics.registry.metrics();
    return c.body(text, 200, { "content-type": rt.metrics.registry.contentType });
  });
}

/**
 * The store's kind, whether this instance is connected to it, and a cluster's own view of itself
 * in counts: /readyz answers anyone, so the failing nodes' addresses are on /health/backends only.
 */
async function storeState(rt: Runtime) {
  const { kind, status, cluster } = rt.stores;
  if (!cluster) return { kind, connected: status.connected };
  const { state, nodes } = await cluster.read();
  return { kind, connected: status.connected, cluster: { state, nodes: { total: nodes.total, reachable: nodes.reachable, primaries: nodes.primaries } } };
}

/** The store's reachability and, per model, which endpoints take traffic and which are ejected (cooling down). */
async function backendHealth(rt: Runtime) {
  const cfg = rt.config;
  const problems: string[] = [];
  const storeOk = await rt.stores.responses.ping().catch(() => false);
  if (!storeOk) problems.push(`store (${rt.stores.kind}) is unreachable`);
  const cluster = await rt.stores.cluster?.read();
  if (cluster && cluster.state !== "ok") problems.push(`Redis Cluster: cluster_state ${cluster.state}`);
  if (cluster?.nodes.failing.length) problems.push(`Redis Cluster: nodes failing: ${cluster.nodes.failing.join(", ")}`);
  const models: Record<string, { healthy: string[]; unhealthy: string[] }> = {};
  for (const [model, targets] of cfg.targets) {
    const healthy: string[] = [];
    const unhealthy: string[] = [];
    for (const t of targets) (rt.pool.get(t.endpoint)?.health.state() === "cooldown" ? unhealthy : healthy).push(t.endpoint);
    models[model] = { healthy, unhealthy };
    if (healthy.length === 0) problems.push(`model ${model}: every endpoint is ejected (${unhealthy.join(", ")}); requests are panic-routed to them`);
  }
  const endpoints: Record<string, { state: string; in_flight: number }> = {};
  for (const ep of rt.pool.all()) endpoints[ep.name] = { state: ep.health.state(), in_flight: ep.inFlight };
  return { status: problems.length === 0 ? "ok" : "degraded", store: { kind: rt.stores.kind, reachable: storeOk, ...(cluster ? { cluster } : {}) }, models, endpoints, problems };
}
