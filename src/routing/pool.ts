/**
 * What src/routing/ holds:
 * endpoint pool (least in-flight, weights, slots, queue timeout), passive health (failure classes,
 * cooldown, half-open), panic routing, active probes
 */
import { ApiError } from "../ops/errors.js";
import type { ModelTarget, RouterConfig } from "../config/load.js";
import { EndpointHealth, type HealthState } from "./health.js";

type EndpointConfig = RouterConfig["endpoints"][number];

/**
 * Live state of one endpoint. Survives config reloads while its name stays. `attached` is
 * what the pool's owner keeps per endpoint (the runtime: its upstream client), so the pool
 * is the one map of the endpoint set.
 */
export class Endpoint<A = unknown> {
  inFlight = 0;
  readonly health: EndpointHealth;
  attached!: A;

  constructor(
    public config: EndpointConfig,
    health: RouterConfig["routing"]["health"],
    onHealthChange: (ep: Endpoint, state: HealthState, reason: string) => void,
  ) {
    this.health = new EndpointHealth(health, (state, reason) => onHealthChange(this, state, reason));
  }

  get name(): string {
    return this.config.name;
  }

  hasRoom(): boolean {
    return this.inFlight < this.config.max_concurrency;
  }
}

/** A held slot on an endpoint; release exactly once, however the request ends. */
export interface Lease {
  endpoint: Endpoint;
  target: ModelTarget;
  /** ms spent waiting for a slot. */
  waitedMs: number;
  /** Routed although the endpoint is ejected: every untried endpoint of the pool was (panic routing). */
  panic: boolean;
  release(): void;
}

/** Builds and disposes what is attached to each endpoint, as endpoints come, change and go. */
export interface EndpointAttachment<A> {
  /** For a new endpoint (`previous` undefined) or a kept one on reload: return `previous` to keep it. */
  attach(cfg: EndpointConfig, previous: A | undefined): A;
  /** `old` was replaced (`removed` false) or its endpoint left the config (`removed` true). */
  detach(old: A, name: string, removed: boolean): void;
}

export interface PoolEvents {
  onHealthChange?(endpoint: Endpoint, state: HealthState, reason: string): void;
  onInFlightChange?(endpoint: Endpoint): void;
  /** A request waited queue_timeout for a slot and got 429. */
  onQueueTimeout?(model: string): void;
  /** A follow-up turn preferred `endpoint` (it served the previous turn): taken (hit) or not (miss: full or unhealthy). */
  onAffinity?(endpoint: Endpoint, hit: boolean): void;
  /** A request was sent to an ejected endpoint because every untried one of its pool was ejected. */
  onPanicRoute?(model: string, endpoint: Endpoint): void;
}

export interface AcquireOptions {
  /** Endpoints this request already tried. */
  exclude?: ReadonlySet<string>;
  queueTimeoutMs: number;
  signal?: AbortSignal;
  /** The endpoint to take while it is healthy and has room (conversation affinity). */
  prefer?: string | null;
}

interface Waiter {
  model: string;
  targets: ModelTarget[];
  exclude: ReadonlySet<string>;
  resolve(lease: Lease): void;
  startedAt: number;
  /** The endpoint of the conversation's previous turn (affinity), if any. */
  prefer: string | null;
  /** How many later waiters took a slot before it because the slot was on their preferred endpoint. */
  overtaken: number;
}

/** A waiter is passed over for affinity at most this many times; then the queue is first come, first served again. */
const MAX_OVERTAKES = 4;

/**
 * Chooses an endpoint per request: among the model's endpoints that are healthy
 * (or half-open and free for a trial) and under max_concurrency, the one with the
 * fewest requests in flight; ties go to the higher weight, then round-robin.
 * When every untried endpoint is ejected (cooldown, or half-open with its trial
 * taken), the request goes to one of them anyway, least recently failed first
 * (panic routing, as Envoy's healthy_panic_threshold): a pool never answers 503
 * while it has an endpoint that could be tried. When every eligible endpoint is
 * full, the request waits in FIFO order up to routing.queue_timeout, then gets
 * 429 with Retry-After.
 */
export class EndpointPool<A = unknown> {
  private endpoints = new Map<string, Endpoint<A>>();
  private waiters: Waiter[] = [];
  private rotation = 0;

  constructor(
    config: RouterConfig,
    private readonly events: PoolEvents = {},
    private readonly attachment?: EndpointAttachment<A>,
  ) {
    this.applyConfig(config);
  }

  /** Adopts a new config: endpoints keep their in-flight counts and health by name. */
  applyConfig(config: RouterConfig): void {
    const next = new Map<string, Endpoint<A>>();
    for (const cfg of config.endpoints) {
      const existing = this.endpoints.get(cfg.name);
      const ep = existing ?? new Endpoint<A>(cfg, config.routing.health, (e, s, r) => this.healthChanged(e, s, r));
      if (existing) {
        existing.config = cfg;
        existing.health.updateSettings(config.routing.health);
      }
      if (this.attachment) {
        const previous = existing?.attached;
        ep.attached = this.attachment.attach(cfg, previous);
        if (existing && ep.attached !== previous) this.attachment.detach(previous as A, cfg.name, false);
      }
      next.set(cfg.name, ep);
    }
    for (const [name, ep] of this.endpoints) {
      if (next.has(name)) continue;
      ep.health.close();
      if (this.attachment) this.attachment.detach(ep.attached, name, true);
    }
    this.endpoints = next;
    this.wakeWaiters(); // limits may have grown
  }

  get(name: string): Endpoint<A> | undefined {
    return this.endpoints.get(name);
  }

  all(): IterableIterator<Endpoint<A>> {
    return this.endpoints.values();
  }

  /** Stops health timers (the router is shutting down). */
  close(): void {
    for (const ep of this.endpoints.values()) ep.health.close();
  }

  private healthChanged(ep: Endpoint, state: HealthState, reason: string): void {
    this.events.onHealthChange?.(ep, state, reason);
    this.wakeWaiters(); // capacity came back, or (cooldown) waiters may now panic-route elsewhere
  }

  /** Requests waiting for a free slot right now. */
  get queued(): number {
    return this.waiters.length;
  }

  /**
   * Takes a slot for one of `targets`, skipping endpoints named in `exclude`
   * (already tried by this request). Rejects with 429 after `queueTimeoutMs`,
   * with 503 when no endpoint is healthy, or with the signal's reason on abort.
   */
  acquire(model: string, targets: ModelTarget[], opts: AcquireOptions): Promise<Lease> {
    const got = this.take(model, targets, opts);
    return got instanceof Promise ? got : Promise.resolve(got);
  }

  /**
   * `acquire`, with a slot that is free now handed over as it is: a caller that awaits it skips
   * the promise (a turn of the microtask queue on every request's way to its upstream).
   */
  take(model: string, targets: ModelTarget[], opts: AcquireOptions): Lease | Promise<Lease> {
    const exclude = opts.exclude ?? EMPTY;
    const startedAt = performance.now();
    const prefer = opts.prefer ?? null;
    const lease = (prefer ? this.tryPreferred(prefer, targets, exclude, startedAt) : null) ?? this.tryAcquire(model, targets, exclude, startedAt);
    if (lease) {
      if (prefer) this.countAffinity(prefer, targets, lease);
      return lease;
    }

    const unavailable = this.unavailableReason(targets, exclude);
    if (unavailable) return Promise.reject(unavailable);

    return new Promise<Lease>((resolve, reject) => {
      const waiter: Waiter = {
        model,
        targets,
        exclude,
        startedAt,
        prefer,
        overtaken: 0,
        resolve: (l) => {
          cleanup();
          if (prefer) this.countAffinity(prefer, targets, l);
          resolve(l);
        },
      };
      const fail = (err: unknown) => {
        this.waiters.splice(this.waiters.indexOf(waiter) >>> 0, 1);
        cleanup();
        reject(err);
      };
      const timer = setTimeout(() => {
        this.events.onQueueTimeout?.(model);
        const retryAfter = Math.max(1, Math.ceil(opts.queueTimeoutMs / 1000));
        fail(
          new ApiError(429, `All endpoints serving model '${model}' are at their concurrency limit; retry shortly.`, {
            type: "rate_limit_error",
            code: "rate_limit_exceeded",
            headers: { "retry-after": String(retryAfter) },
          }),
        );
      }, opts.queueTimeoutMs);
      const onAbort = () => fail(opts.signal?.reason ?? new DOMException("aborted", "AbortError"));
      const cleanup = () => {
        clearTimeout(timer);
        opts.signal?.removeEventListener("abort", onAbort);
      };
      if (opts.signal?.aborted) return onAbort();
      opts.signal?.addEventListener("abort", onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  /**
   * Conversation affinity: the endpoint that served the previous turn still holds its prefix
   * in its KV cache, so it wins while it is healthy and has a free slot.
   */
  private tryPreferred(name: string, targets: ModelTarget[], exclude: ReadonlySet<string>, startedAt: number): Lease | null {
    if (exclude.has(name)) return null;
    const ep = this.endpoints.get(name);
    if (!ep || !ep.hasRoom() || ep.health.state() !== "healthy") return null;
    for (const t of targets) if (t.endpoint === name) return this.lease(ep, t, startedAt, false, false);
    return null;
  }

  /** Hit or miss for a request that preferred `name`; a name outside its pool (another model's endpoint, one removed by a reload) counts as neither. */
  private countAffinity(name: string, targets: ModelTarget[], lease: Lease): void {
    const ep = this.endpoints.get(name);
    if (!ep || !this.events.onAffinity) return;
    for (const t of targets) if (t.endpoint === name) return this.events.onAffinity(ep, lease.endpoint === ep);
  }

  private tryAcquire(model: string, targets: ModelTarget[], exclude: ReadonlySet<string>, startedAt: number): Lease | null {
    // Pass 1: the best (fewest in flight, then highest weight) and how many tie with it.
    let bestInFlight = Infinity;
    let bestWeight = -Infinity;
    let ties = 0;
    for (const t of targets) {
      const ep = this.eligible(t, exclude);
      if (!ep) continue;
      if (ep.inFlight < bestInFlight || (ep.inFlight === bestInFlight && t.weight > bestWeight)) {
        bestInFlight = ep.inFlight;
        bestWeight = t.weight;
        ties = 1;
      } else if (ep.inFlight === bestInFlight && t.weight === bestWeight) ties++;
    }
    if (ties === 0) return this.panicAcquire(model, targets, exclude, startedAt);
    // Pass 2: rotate among exact ties so equal endpoints share the load.
    let pick = ties > 1 ? this.rotation++ % ties : 0;
    for (const t of targets) {
      const ep = this.eligible(t, exclude);
      if (!ep || ep.inFlight !== bestInFlight || t.weight !== bestWeight) continue;
      if (pick-- > 0) continue;
      const trial = ep.health.state() === "half_open";
      ep.health.admits(true); // claims the half-open trial when there is one
      return this.lease(ep, t, startedAt, trial, false);
    }
    return null;
  }

  /** Panic routing: only when no untried endpoint admits requests; the least recently failed one with room. */
  private panicAcquire(model: string, targets: ModelTarget[], exclude: ReadonlySet<string>, startedAt: number): Lease | null {
    let best: Endpoint | undefined;
    let bestTarget: ModelTarget | undefined;
    for (const t of targets) {
      if (exclude.has(t.endpoint)) continue;
      const ep = this.endpoints.get(t.endpoint);
      if (!ep) continue;
      if (ep.health.admits(false)) return null; // not a panic: it is just full, so wait for it
      if (!ep.hasRoom()) continue;
      const a = ep.health.lastFailureAt;
      if (!best || a < best.health.lastFailureAt || (a === best.health.lastFailureAt && ep.inFlight < best.inFlight)) {
        best = ep;
        bestTarget = t;
      }
    }
    if (!best) return null;
    this.events.onPanicRoute?.(model, best);
    return this.lease(best, bestTarget!, startedAt, false, true);
  }

  private eligible(t: ModelTarget, exclude: ReadonlySet<string>): Endpoint | undefined {
    if (exclude.has(t.endpoint)) return undefined;
    const ep = this.endpoints.get(t.endpoint);
    return ep && ep.hasRoom() && ep.health.admits(false) ? ep : undefined;
  }

  private lease(ep: Endpoint, target: ModelTarget, startedAt: number, trial: boolean, panic: boolean): Lease {
    ep.inFlight++;
    this.events.onInFlightChange?.(ep);
    let released = false;
    return {
      endpoint: ep,
      target,
      waitedMs: performance.now() - startedAt,
      panic,
      release: () => {
        if (released) return;
        released = true;
        ep.inFlight--;
        if (trial) ep.health.releaseTrial(); // only the trial's own lease frees the half-open slot
        this.events.onInFlightChange?.(ep);
        this.wakeWaiters();
      },
    };
  }

  /** Non-null when waiting cannot help: no endpoint of the pool is left to try (none configured, or all tried). */
  private unavailableReason(targets: ModelTarget[], exclude: ReadonlySet<string>): ApiError | null {
    for (const t of targets) if (!exclude.has(t.endpoint) && this.endpoints.has(t.endpoint)) return null;
    return new ApiError(503, "No endpoint is available for this model right now.", {
      type: "server_error",
      code: "no_healthy_endpoint",
      headers: { "retry-after": "1" },
    });
  }

  private wakeWaiters(): void {
    // First, a freed slot goes to a waiter whose conversation's previous turn ran there (its KV
    // cache is there), passing over earlier waiters at most MAX_OVERTAKES times each.
    for (let i = 0; i < this.waiters.length; ) {
      const w = this.waiters[i]!;
      if (w.overtaken >= MAX_OVERTAKES) break;
      const lease = w.prefer ? this.tryPreferred(w.prefer, w.targets, w.exclude, w.startedAt) : null;
      if (lease) {
        this.waiters.splice(i, 1);
        for (let j = 0; j < i; j++) this.waiters[j]!.overtaken++;
        w.resolve(lease);
      } else i++;
    }
    // Then first come, first served, least in-flight.
    for (let i = 0; i < this.waiters.length; ) {
      const w = this.waiters[i]!;
      const lease = this.tryAcquire(w.model, w.targets, w.exclude, w.startedAt);
      if (lease) {
        this.waiters.splice(i, 1);
        w.resolve(lease);
      } else i++;
    }
  }
}

const EMPTY: ReadonlySet<string> = new Set();
