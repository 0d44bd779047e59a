import { serve, type ServerType } from "@hono/node-server";
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { buildApp } from "./app.js";
import { trackConnections } from "./http/drain.js";
import type { RouterConfig } from "./config/load.js";
import { createLogger, type Logger } from "./log.js";
import { createMetrics, METRIC_PREFIX, type Metrics } from "./metrics.js";
import { Runtime } from "./runtime.js";
import { createStores, type StoreOptions } from "./store/index.js";
import type { Stores } from "./store/types.js";

export interface StartOptions {
  host?: string;
  port?: number;
  logger?: Logger;
  metrics?: Metrics;
  stores?: Stores;
  storeOptions?: StoreOptions;
  /** Clock for per-key limits, budgets and usage days (tests inject one). */
  now?: () => number;
  /** Verify the store answers before listening (main does; a Redis that is down is fatal). */
  checkStore?: boolean;
}

export interface RunningRouter {
  url: string;
  port: number;
  runtime: Runtime;
  server: ServerType;
  /** Stops accepting, lets in-flight requests finish up to `deadlineMs`, then closes everything. */
  close(deadlineMs?: number): Promise<void>;
}

/** Builds and starts a router on host:port. Used by the CLI and by the tests alike. */
export async function startRouter(config: RouterConfig, opts: StartOptions = {}): Promise<RunningRouter> {
  const log = opts.logger ?? createLogger(config.logging.level);
  const metrics = opts.metrics ?? createMetrics();
  const stores =
    opts.stores ??
    createStores({ ...config.storage, jobs: config.background.lease }, log, {
      onCacheError: () => metrics.storeErrors.inc({ store: "cache", op: "cache" }),
      ...opts.storeOptions,
    });
  // Without Redis there is no connection to report: the series is absent, not 0 (which would page).
  if (stores.kind === "redis") metrics.redisUp.set(stores.status.connected ? 1 : 0);
  else metrics.registry.removeSingleMetric(`${METRIC_PREFIX}redis_up`);
  metrics.configLastReload.set(Date.now() / 1000);
  stores.status.onStatusChange((up) => {
    if (stores.kind === "redis") metrics.redisUp.set(up ? 1 : 0);
    log[up ? "info" : "error"]({ store: stores.kind }, up ? "store connected" : "store connection lost");
  });
  if (opts.checkStore && !(await stores.responses.ping().catch(() => false))) {
    await stores.close().catch(() => {});
    throw new Error(`the ${stores.kind} store at ${redact(config.storage.redis_url)} is unreachable`);
  }
  const runtime = new Runtime(config, stores, metrics, log, undefined, opts.now);
  const { app, service } = buildApp(runtime);
  service.background.startWorker(config.background.concurrency);
  const host = opts.host ?? config.server.host;
  const server = await new Promise<ServerType>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, hostname: host, port: opts.port ?? config.server.port }, () => resolve(s));
    s.once("error", reject);
  });
  const connections = trackConnections(server as Server);
  runtime.phase = "serving";
  const port = (server.address() as AddressInfo).port;
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;

  let closing: Promise<void> | null = null;
  const close = (deadlineMs = config.server.shutdown_timeout) =>
    (closing ??= (async () => {
      runtime.phase = "draining";
      const drained = new Promise<void>((resolve) => server.close(() => resolve()));
      // Background jobs drain in parallel, stopping a little before connections are cut: memory
      // mode then fails them (their followers still get response.failed), Redis mode hands them
      // back to the queue for another instance (followers here can resume there with starting_after).
      const jobsClosed = stores.jobs.close(Math.max(0, deadlineMs - JOB_STOP_MARGIN_MS)).catch(() => {});
      // Idle keep-alive sockets would hold close() open: end them; busy ones end after their response.
      connections.drain();
      const timer = setTimeout(() => (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.(), deadlineMs);
      await drained;
      await jobsClosed;
      clearTimeout(timer);
      await stores.close().catch(() => {});
      await runtime.close();
    })());
  return { url, port, runtime, server, close };
}

/** Time between stopping background jobs and cutting connections, so their last events reach followers. */
const JOB_STOP_MARGIN_MS = 500;

/** A Redis URL without its password, for messages. */
export function redact(url: string): string {
  return url.replace(/\/\/([^@/]*):([^@/]*)@/, "//$1:***@");
}
