import type { Registry } from "prom-client";
import { METRIC_PREFIX } from "./metrics.js";

/** One interval of the instance's own counters (what changed in it). */
export interface MetricsPoint {
  /** Unix ms at the end of the interval. */
  t: number;
  requests: number;
  /** Answers with a 5xx status. */
  errors: number;
  /** Answers with a 4xx status. */
  client_errors: number;
  /** Mean request duration over the interval, ms (null without requests). */
  latency_ms: number | null;
  input_tokens: number;
  output_tokens: number;
}

export interface MetricsTotals {
  requests: number;
  errors: number;
  client_errors: number;
  input_tokens: number;
  output_tokens: number;
  duration_seconds_sum: number;
  duration_count: number;
}

/**
 * The console's overview over time: every `intervalMs` the Prometheus registry's request,
 * duration and token counters are read and what changed since the last read is kept, in a ring
 * of `points` intervals (per instance: the numbers are this instance's, as its /metrics).
 * Reading the registry costs what a scrape does, once an interval, off every request's path.
 */
export class MetricsHistory {
  private readonly ring: MetricsPoint[] = [];
  private last: MetricsTotals | null = null;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly registry: Registry,
    readonly intervalMs = 5_000,
    readonly points = 360,
  ) {}

  start(): this {
    void this.sample();
    this.timer = setInterval(() => void this.sample(), this.intervalMs);
    this.timer.unref();
    return this;
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** The counters now, as /metrics has them (since the process started). */
  async totals(): Promise<MetricsTotals> {
    const t: MetricsTotals = { requests: 0, errors: 0, client_errors: 0, input_tokens: 0, output_tokens: 0, duration_seconds_sum: 0, duration_count: 0 };
    for (const v of await this.values("requests_total")) {
      t.requests += v.value;
      const status = Number(v.labels.status);
      if (status >= 500) t.errors += v.value;
      else if (status >= 400) t.client_errors += v.value;
    }
    for (const v of await this.values("tokens_total")) {
      if (v.labels.type === "input") t.input_tokens += v.value;
      else if (v.labels.type === "output") t.output_tokens += v.value;
    }
    for (const v of await this.values("request_duration_seconds")) {
      const name = (v as { metricName?: string }).metricName;
      if (name?.endsWith("_sum")) t.duration_seconds_sum += v.value;
      else if (name?.endsWith("_count")) t.duration_count += v.value;
    }
    return t;
  }

  /** Takes one point now (the timer's work; tests call it to avoid waiting). */
  async sample(): Promise<void> {
    const now = await this.totals();
    const prev = this.last;
    this.last = now;
    if (!prev) return;
    const count = now.duration_count - prev.duration_count;
    this.ring.push({
      t: Date.now(),
      requests: now.requests - prev.requests,
      errors: now.errors - prev.errors,
      client_errors: now.client_errors - prev.client_errors,
      latency_ms: count > 0 ? ((now.duration_seconds_sum - prev.duration_seconds_sum) / count) * 1000 : null,
      input_tokens: now.input_tokens - prev.input_tokens,
      output_tokens: now.output_tokens - prev.output_tokens,
    });
    if (this.ring.length > this.points) this.ring.shift();
  }

  series(): MetricsPoint[] {
    return this.ring.slice();
  }

  private async values(name: string): Promise<{ value: number; labels: Record<string, string | number>; metricName?: string }[]> {
    const metric = this.registry.getSingleMetric(METRIC_PREFIX + name);
    return metric ? ((await metric.get()).values as { value: number; labels: Record<string, string | number> }[]) : [];
  }
}
