import type { Endpoint } from "./pool.js";

/** What a probe needs of an endpoint's HTTP client (upstream/client.ts's UpstreamClient is one). */
export interface ProbeClient {
  get(path: string, signal: AbortSignal): Promise<{ status: number; body: { dump(): Promise<unknown> } }>;
}

export interface ProbeDeps {
  endpoints(): Iterable<Endpoint>;
  client(endpoint: string): ProbeClient | undefined;
  /** Every probe's outcome (for debug logs). */
  onProbe?(endpoint: Endpoint, ok: boolean, detail: string): void;
}

/** A probe gets at most this long (and never longer than the interval). */
const MAX_PROBE_MS = 10_000;

/**
 * Active health checks (routing.health.probe_interval): every interval, a
 * `GET {url}/models` to each endpoint. A success lets a cooling-down endpoint
 * back at once; a failure counts like a failed request (see
 * EndpointHealth.recordProbe). Probes take no request slot. The timer is
 * unref'd and stop() ends it and aborts probes in flight.
 */
export class HealthProber {
  private timer: NodeJS.Timeout | undefined;
  private round: Promise<void> | null = null;
  private readonly stopped = new AbortController();

  constructor(
    private readonly deps: ProbeDeps,
    readonly intervalMs: number,
  ) {}

  start(): this {
    this.timer = setInterval(() => {
      // A slow round is not stacked on another.
      this.round ??= this.probeAll().finally(() => (this.round = null));
    }, this.intervalMs);
    this.timer.unref();
    return this;
  }

  /** One round over every endpoint; resolves when all probes answered or timed out. */
  async probeAll(): Promise<void> {
    await Promise.all([...this.deps.endpoints()].map((ep) => this.probe(ep)));
  }

  private async probe(ep: Endpoint): Promise<void> {
    const client = this.deps.client(ep.name);
    if (!client || this.stopped.signal.aborted) return;
    const limit = Math.min(this.intervalMs, MAX_PROBE_MS);
    const signal = AbortSignal.any([this.stopped.signal, AbortSignal.timeout(limit)]);
    let detail: string;
    try {
      const reply = await client.get("/models", signal);
      await reply.body.dump();
      detail = `HTTP ${reply.status}`;
    } catch (err) {
      if (this.stopped.signal.aborted) return;
      detail = signal.aborted ? `no answer within ${limit} ms` : (err as Error).message;
      this.deps.onProbe?.(ep, false, detail);
      ep.health.recordProbe(false, `health probe failed: ${detail}`);
      return;
    }
    this.deps.onProbe?.(ep, true, detail);
    ep.health.recordProbe(true, "health probe succeeded");
  }

  stop(): void {
    clearInterval(this.timer);
    this.stopped.abort();
  }
}
