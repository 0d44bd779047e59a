/**
 * What src/runtime/ holds:
 * per-instance state built from the config (`runtime.ts`: endpoint pool, the one map of the
 * endpoint set; each endpoint carries its upstream client as `attached`, kept across reloads while
 * its transport is unchanged; prober, stores, metrics, logger, id generator), the shutdown
 * deadline that open streams and requests waiting for their answer register with while they run
 * (`deadline.ts`) a model's config and pool as an API key may see it (`models.ts`,
 * `model_not_found` otherwise), and the process's young-generation GC for the cores it may run on
 * (`gc.ts`, set by the CLI at start: on one core, by affinity or a cgroup CPU quota, V8's scavenge
 * runs on the main thread, its helper threads could only take turns with it; and allocation-site
 * pretenuring off, whose tenured per-request objects made young collections keep recent requests
 * alive)
 */
import { McpSessionPool } from "../tools/mcp/pool.js";
import { preloadMcpSdk } from "../tools/mcp/session.js";
import type { ModelTarget, RouterConfig } from "../config/load.js";
import { ApiError } from "../ops/errors.js";
import { randomId, type IdGenerator } from "../wire/ids.js";
import type { LimiterDeps } from "../keys/limits.js";
import type { UsageDeps } from "../keys/usage.js";
import type { Logger } from "../ops/log.js";
import { forgetEndpoint, setEndpointState, type Metrics } from "../ops/metrics.js";
import { EndpointPool } from "../routing/pool.js";
import { HealthProber } from "../routing/probe.js";
import type { Stores } from "../store/index.js";
import { UpstreamClient } from "../upstream/client.js";
import type { FailoverContext } from "../upstream/failover.js";
import { TRACING_OFF, type Tracing } from "../tracing/index.js";
import type { FileLibrary } from "../tools/file-search/library.js";
import { Deadline } from "./deadline.js";
import { isMadeKey, KeyRing } from "../keys/key-ring.js";
import { MetricsHistory } from "../ops/metrics-history.js";
import { RecentRequests } from "./recent-requests.js";
import type { ApiKey } from "../keys/policy.js";

/**
 * Everything a request needs, built once per router instance (no globals, so
 * tests run several routers in one process). Config reloads swap `config`
 * atomically: a request reads it once at its start and keeps that snapshot.
 */
export class Runtime {
  /** The endpoint set, each endpoint carrying its upstream client (`attached`). */
  readonly pool: EndpointPool<UpstreamClient>;
  private current: RouterConfig;
  private prober: HealthProber | null = null;
  /** What /readyz reports: this process can serve (`serving`) or not yet / no longer. */
  phase: "starting" | "serving" | "draining" = "starting";
  /** The shutdown deadline: open streams and requests waiting for their answer are ended at it (endStreams). */
  readonly streamsDeadline = new Deadline();
  /** Sessions to the operator's MCP servers, shared by the responses that use them (tools/mcp/pool.ts). */
  readonly mcpSessions = new McpSessionPool();
  /** The router's Files and Vector Stores (`src/files/`), set by the server; null where none is built. */
  files: FileLibrary | null = null;
  /** The keys made by the admin API, as this instance knows them (started by the server). */
  readonly keyRing: KeyRing;
  /** The last inference requests this instance answered (the console's requests page). */
  readonly recent = new RecentRequests();
  /** This instance's counters over time (the console's overview), sampled once started by the server. */
  readonly history: MetricsHistory;
  /** Each endpoint's last active probe (routing.health.probe_interval), for the console. */
  readonly lastProbes = new Map<string, { at: number; ok: boolean; detail: string }>();
  /** The last config reload: when, and the problems that made it refused (empty when it was taken). */
  lastReload: { at: number; ok: boolean; errors: string[] } | null = null;

  constructor(
    config: RouterConfig,
    readonly stores: Stores,
    readonly metrics: Metrics,
    readonly log: Logger,
    readonly ids: IdGenerator = randomId,
    /** The clock of per-key limits and usage days (tests move it instead of waiting). */
    readonly now: () => number = Date.now,
    /** Spans of this instance's requests and jobs (TRACING_OFF when not configured). */
    readonly tracing: Tracing = TRACING_OFF,
  ) {
    this.current = config;
    this.history = new MetricsHistory(metrics.registry);
    this.keyRing = new KeyRing(stores.keys, now, () => metrics.storeErrors.inc({ store: "keys", op: "sync" }));
    this.pool = new EndpointPool(config, {
      onHealthChange: (ep, state, reason) => {
        this.log[state === "cooldown" ? "warn" : "info"]({ endpoint: ep.name, state, reason }, `endpoint ${ep.name} is now ${state}`);
        setEndpointState(this.metrics, ep.name, state);
      },
      onInFlightChange: (ep) => this.metrics.inFlight.set({ upstream: ep.name }, ep.inFlight),
      onQueueTimeout: (model) => this.metrics.poolRejections.inc({ model }),
      onAffinity: (ep, hit) => this.metrics.affinity.inc({ upstream: ep.name, result: hit ? "hit" : "miss" }),
      onPanicRoute: (model, ep) => this.log.debug({ model, endpoint: ep.name }, "every endpoint of the pool is ejected: routing anyway (panic)"),
    }, {
      attach: (cfg, existing) => this.clientFor(cfg, existing),
      detach: (old, name, removed) => {
        // close() lets requests already on it finish.
        void old.close().catch(() => {});
        // Removed: its series would otherwise report a stale state forever.
        if (removed) forgetEndpoint(this.metrics, name);
      },
    });
    this.syncProber(config);
    preloadMcpSdk(config.tools.mcp);
  }

  get config(): RouterConfig {
    return this.current;
  }

  /** Adopts a validated config. In-flight requests keep the snapshot they started with. */
  applyConfig(config: RouterConfig): void {
    this.current = config;
    // pino children keep the level they were made with: the app's access logger follows "level-change".
    if (this.log.level !== config.logging.level) this.log.level = config.logging.level;
    this.pool.applyConfig(config);
    this.syncProber(config);
    preloadMcpSdk(config.tools.mcp);
  }

  /** Starts, restarts or stops active health probes to match routing.health.probe_interval. */
  private syncProber(config: RouterConfig): void {
    const every = config.routing.health.probe_interval;
    if (this.prober?.intervalMs === every) return;
    this.prober?.stop();
    this.prober = every
      ? new HealthProber(
          {
            endpoints: () => this.pool.all(),
            client: (name) => this.pool.get(name)?.attached,
            onProbe: (ep, ok, detail) => {
              this.lastProbes.set(ep.name, { at: Date.now(), ok, detail });
              this.log.debug({ endpoint: ep.name, ok, detail }, "health probe");
            },
          },
          every,
        ).start()
      : null;
  }

  /**
   * The failover context both inference paths use: the pool, clients, retry metrics
   * and logs. `path` names the upstream route in logs (pass-through routes).
   */
  failover(model: string, targets: ModelTarget[], routing: RouterConfig["routing"], signal: AbortSignal, path?: string, prefer?: string | null): FailoverContext {
    return {
      pool: this.pool,
      prefer,
      client: (n) => this.client(n),
      model,
      targets,
      routing,
      signal,
      onRetry: (failure, endpoint) => {
        this.metrics.retries.inc({ model, upstream: endpoint, reason: failure.reason });
        this.log.warn({ model, endpoint, path, reason: failure.reason, err: failure.message }, "upstream attempt failed; trying another endpoint");
      },
      onAttemptFailed: (failure, seconds) => this.metrics.upstreamDuration.observe({ upstream: failure.endpoint, outcome: "error" }, seconds),
      onPanicAttempt: (endpoint, ok) => this.metrics.panicRouted.inc({ model, upstream: endpoint, outcome: ok ? "ok" : "error" }),
      onEndpointFault: (failure, endpoint) => {
        if (failure.routeMissing) this.log.error({ model, endpoint, route: failure.detail.route, status: failure.status }, `endpoint ${endpoint} has no such route: check its url in the config`);
      },
    };
  }

  /**
   * Runs a request's work up to its answer (the upstream's 2xx headers for a stream, the whole
   * body for JSON). If the shutdown deadline passes first, `abort` stops the upstream call and
   * the client gets 503 server_shutting_down (which clients retry) rather than a cut connection.
   */
  async beforeDeadline<T>(abort: () => void, work: () => Promise<T>): Promise<T> {
    const slot = this.streamsDeadline.listen(abort);
    try {
      return await work();
    } catch (err) {
      const reason = this.streamsDeadline.reason;
      if (!reason) throw err;
      throw new ApiError(503, reason.message, { type: "server_error", code: "server_shutting_down", headers: { "retry-after": "1" } });
    } finally {
      this.streamsDeadline.forget(slot);
    }
  }

  /** Shutdown reached its deadline: every open stream ends now (Responses: response.failed, chat: an error chunk), every request still waiting for its answer gets 503. */
  endStreams(): void {
    this.streamsDeadline.pass((err) => this.log.error({ err: (err as Error)?.message }, "a stream could not be ended at the shutdown deadline"));
  }

  /** A request moves to a fallback model (`from`'s whole pool failed before the first byte). */
  fellBack(requested: string, from: string, to: string, err: unknown): void {
    this.metrics.fallbacks.inc({ model: requested, fallback: to });
    this.log.warn({ model: requested, from, to, err: (err as Error)?.message }, `model ${from} failed; falling back to ${to}`);
  }

  client(endpoint: string): UpstreamClient {
    const c = this.pool.get(endpoint)?.attached;
    if (!c) throw new Error(`no client for endpoint ${endpoint}`);
    return c;
  }

  /** An endpoint's client on (re)load: the existing one while its transport is the same, else a new one. */
  private clientFor(ep: RouterConfig["endpoints"][number], existing: UpstreamClient | undefined): UpstreamClient {
    this.metrics.maxConcurrency.set({ upstream: ep.name }, ep.max_concurrency);
    if (!existing) {
      setEndpointState(this.metrics, ep.name, "healthy");
      this.metrics.inFlight.set({ upstream: ep.name }, 0);
    }
    return existing && existing.sameTransport(ep) ? existing : new UpstreamClient(ep);
  }

  /**
   * The caller's key as it stands now: a config key as the config in force has it (a reload may
   * change or remove it), a made key as the ring has it (revoked or expired: gone). Null: gone.
   */
  keyInForce(key: ApiKey): ApiKey | null {
    if (isMadeKey(key)) {
      const now = this.keyRing.named(key.name);
      return now?.id === key.id ? now : null;
    }
    return this.config.server.api_keys.find((k) => k.name === key.name && k.key === key.key) ?? null;
  }

  /** A key by its name (what background jobs record as their owner): config keys first, then made ones. */
  keyNamed(name: string): ApiKey | null {
    return this.config.server.api_keys.find((k) => k.name === name) ?? this.keyRing.named(name);
  }

  async close(): Promise<void> {
    this.keyRing.stop();
    this.history.stop();
    this.prober?.stop();
    this.pool.close();
    await Promise.allSettled([...this.pool.all()].map((ep) => ep.attached.close()));
    await this.mcpSessions.close();
  }
}

/** What per-key limit checks need from a runtime (the store's limiter, its clock, error counting). */
export function limiterDeps(rt: Runtime): LimiterDeps {
  return { limiter: rt.stores.limiter, now: rt.now, onStoreError: () => rt.metrics.storeErrors.inc({ store: "limiter", op: "limit" }) };
}

/** What usage recording needs from a runtime. */
export function usageDeps(rt: Runtime): UsageDeps {
  return { usage: rt.stores.usage, now: rt.now, onStoreError: () => rt.metrics.storeErrors.inc({ store: "usage", op: "record" }) };
}
