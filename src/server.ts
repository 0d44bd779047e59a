import { serve, type ServerType } from "@hono/node-server";
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { buildApp } from "./app.js";
import { Files, type FilesOptions } from "./files/library.js";
import { trackConnections } from "./http/drain.js";
import type { RouterConfig } from "./config/load.js";
import { createLogger, type Logger } from "./ops/log.js";
import { createMetrics, METRIC_PREFIX, type Metrics } from "./ops/metrics.js";
import { Runtime } from "./runtime/runtime.js";
import { serveResponsesSockets } from "./ws/server.js";
import { createStores, describeTarget, redisTarget, type StoreOptions } from "./store/index.js";
import type { Stores } from "./store/types.js";
import type { Tracing } from "./tracing/index.js";
import { tracingEnabled } from "./tracing/enabled.js";
import { TRACING_OFF } from "./tracing/index.js";

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
  /** The environment tracing reads its OTEL_* variables from (default process.env). */
  env?: Readonly<Record<string, string | undefined>>;
  /** A ready Tracing (its owner flushes it); default: built from `tracing:` and the environment. */
  tracing?: Tracing;
  /** The Files and Vector Stores room's options (tests: an embedder, no retry pauses). */
  files?: FilesOptions;
}

export interface RunningRouter {
  url: string;
  port: number;
  runtime: Runtime;
  server: ServerType;
  /**
   * Stops accepting, lets in-flight requests finish up to `deadlineMs` (server.shutdown_timeout),
   * then ends open streams with a terminal event and closes connections; background jobs get
   * `jobsDeadlineMs` (background.drain_timeout; `deadlineMs` when only that is given).
   */
  close(deadlineMs?: number, jobsDeadlineMs?: number): Promise<void>;
}

/** Builds and starts a router on host:port. Used by the CLI and by the tests alike. */
export async function startRouter(config: RouterConfig, opts: StartOptions = {}): Promise<RunningRouter> {
  const log = opts.logger ?? createLogger(config.logging.level);
  const metrics = opts.metrics ?? createMetrics();
  const stores =
    opts.stores ??
    (await createStores({ ...config.storage, jobs: config.background.lease }, log, {
      onCacheError: () => metrics.storeErrors.inc({ store: "cache", op: "cache" }),
      ...opts.storeOptions,
    }));
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
    const target = redisTarget(config.storage);
    throw new Error(`the ${stores.kind} store at ${target ? describeTarget(target) : "memory"} is unreachable`);
  }
  const built = opts.tracing ? null : await buildTracing(config, opts.env ?? process.env, stores.kind);
  if (built?.settings) log.info({ endpoint: built.settings.url, service_name: built.settings.serviceName, sampler: built.settings.samplerName, capture_content: built.settings.captureContent }, "tracing on");
  const tracing = opts.tracing ?? built!.tracing;
  const runtime = new Runtime(config, stores, metrics, log, undefined, opts.now, tracing);
  const files = await Files.open(runtime, opts.files);
  runtime.files = files;
  // The keys made by the admin API, loaded before the first request (a store that cannot answer leaves none).
  await runtime.keyRing.start();
  runtime.history.start();
  const { app, service } = buildApp(runtime, files);
  service.background.startWorker(config.background.concurrency);
  const host = opts.host ?? config.server.host;
  const server = await new Promise<ServerType>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, hostname: host, port: opts.port ?? config.server.port }, () => resolve(s));
    s.once("error", reject);
  });
  const connections = trackConnections(server as Server);
  const sockets = serveResponsesSockets(server as Server, runtime, service);
  runtime.phase = "serving";
  const port = (server.address() as AddressInfo).port;
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;

  let closing: Promise<void> | null = null;
  const close = (deadlineMs?: number, jobsDeadlineMs?: number) =>
    (closing ??= shutdown(deadlineMs ?? runtime.config.server.shutdown_timeout, jobsDeadlineMs ?? deadlineMs ?? runtime.config.background.drain_timeout));
  const shutdown = async (deadlineMs: number, jobsDeadlineMs: number) => {
    runtime.phase = "draining";
    const drained = new Promise<void>((resolve) => server.close(() => resolve()));
    // Background jobs get their own, longer deadline: the worker takes no new job and lets the
    // running ones finish; at the deadline memory mode fails them and Redis mode hands them back
    // to the queue for another instance. A deadline no longer than the HTTP one stops them a
    // little before connections are cut, so their followers here still see the terminal event.
    const jobsMs = jobsDeadlineMs > deadlineMs ? jobsDeadlineMs : Math.max(0, jobsDeadlineMs - JOB_STOP_MARGIN_MS);
    const jobsClosed = Promise.all([stores.jobs.close(jobsMs), stores.fileJobs.close(jobsMs)]).catch(() => {});
    // Idle keep-alive sockets would hold close() open: end them; busy ones end after their response.
    connections.drain();
    // WebSockets: idle ones close now (1012, clients reconnect elsewhere), busy ones after their responses.
    sockets.drain();
    let cut: NodeJS.Timeout | undefined;
    const deadline = setTimeout(() => {
      // Open streams end with a terminal event, then whatever is still open is cut.
      runtime.endStreams();
      cut = setTimeout(() => {
        (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
        sockets.terminate();
      }, STREAM_END_GRACE_MS);
    }, deadlineMs);
    await drained;
    clearTimeout(deadline);
    clearTimeout(cut);
    await jobsClosed;
    await stores.close().catch(() => {});
    files.close();
    await runtime.close();
    // The last spans (this shutdown's requests and jobs) go out before the process ends.
    if (built) await tracing.shutdown().catch(() => {});
  };
  return { url, port, runtime, server, close };
}

/** Time between stopping background jobs and cutting connections, so their last events reach followers. */
const JOB_STOP_MARGIN_MS = 500;
/** After the deadline, how long streams get to write their terminal event before connections are cut. */
const STREAM_END_GRACE_MS = 1_000;

/** The instance's tracing; the OpenTelemetry SDK (tracing/setup.ts) is loaded only by a router that traces. */
async function buildTracing(config: RouterConfig, env: Readonly<Record<string, string | undefined>>, storeSystem: string) {
  if (!tracingEnabled(config.tracing, env)) return { tracing: TRACING_OFF, settings: null };
  const { createTracing } = await import("./tracing/setup.js");
  return createTracing(config.tracing, env, storeSystem);
}
