import { describe, expect, it } from "vitest";
import { createMetrics, forgetEndpoint, metricNames, setEndpointState } from "../../src/ops/metrics.js";

describe("createMetrics", () => {
  it("exposes incremented values in the registry text", async () => {
    const m = createMetrics({ collectDefault: false });
    m.requests.inc({ route: "/v1/responses", model: "gpt-x", upstream: "a", status: "200" });
    m.requests.inc({ route: "/v1/responses", model: "gpt-x", upstream: "a", status: "200" });
    m.requestDuration.observe({ route: "/v1/responses", model: "gpt-x", upstream: "a" }, 0.3);
    m.overhead.observe({ route: "/v1/responses" }, 0.00007);
    m.tokens.inc({ model: "gpt-x", upstream: "a", type: "output" }, 42);
    m.inFlight.set({ upstream: "a" }, 3);
    m.configLastReload.set(1_700_000_000);
    m.redisUp.set(1);

    const text = await m.registry.metrics();
    expect(text).toContain('responses_router_requests_total{route="/v1/responses",model="gpt-x",upstream="a",status="200"} 2');
    expect(text).toContain('responses_router_request_duration_seconds_bucket{le="0.5",route="/v1/responses",model="gpt-x",upstream="a"} 1');
    expect(text).toContain('responses_router_request_duration_seconds_count{route="/v1/responses",model="gpt-x",upstream="a"} 1');
    expect(text).toContain('responses_router_overhead_seconds_bucket{le="0.0001",route="/v1/responses"} 1');
    expect(text).toContain('responses_router_overhead_seconds_bucket{le="0.00005",route="/v1/responses"} 0');
    expect(text).toContain('responses_router_tokens_total{model="gpt-x",upstream="a",type="output"} 42');
    expect(text).toContain('responses_router_endpoint_in_flight{upstream="a"} 3');
    expect(text).toContain("responses_router_config_last_reload_timestamp_seconds 1700000000");
    expect(text).toContain("responses_router_redis_up 1");
    // Fixed-label series exist at zero before the first event.
    expect(text).toContain('responses_router_config_reloads_total{result="error"} 0');
    expect(text).toContain('responses_router_background_jobs{status="in_progress"} 0');
  });

  it("keeps two registries apart", async () => {
    const a = createMetrics({ collectDefault: false });
    const b = createMetrics({ collectDefault: false });
    a.failovers.inc({ model: "m" }, 5);
    expect(await a.registry.metrics()).toContain('responses_router_failovers_total{model="m"} 5');
    expect(await b.registry.metrics()).not.toContain('responses_router_failovers_total{model="m"}');
    expect((await b.failovers.get()).values).toEqual([]);
  });

  it("collects Node's default process metrics under their standard, unprefixed names unless disabled", async () => {
    const withDefault = createMetrics();
    const again = createMetrics();
    expect(metricNames(withDefault)).toContain("process_cpu_seconds_total");
    expect(metricNames(again)).toContain("process_cpu_seconds_total");
    expect(metricNames(withDefault)).toContain("nodejs_eventloop_lag_p99_seconds");
    expect(metricNames(withDefault).filter((n) => /^responses_router_(process|nodejs)_/.test(n))).toEqual([]);
    // Gauges named like counters (promtool flags them) are left out; the per-type gauges stay.
    expect(metricNames(withDefault)).not.toContain("nodejs_active_handles_total");
    expect(metricNames(withDefault)).toContain("nodejs_active_handles");
    expect(await withDefault.registry.metrics()).toContain("process_resident_memory_bytes");
    expect(metricNames(createMetrics({ collectDefault: false }))).not.toContain("process_cpu_seconds_total");
  });

  it("sets endpoint up and state together, and forgets removed endpoints", async () => {
    const m = createMetrics({ collectDefault: false });
    setEndpointState(m, "gpu1", "cooldown");
    let text = await m.registry.metrics();
    expect(text).toContain('responses_router_endpoint_up{upstream="gpu1"} 0');
    expect(text).toContain('responses_router_endpoint_state{upstream="gpu1",state="cooldown"} 1');
    expect(text).toContain('responses_router_endpoint_state{upstream="gpu1",state="healthy"} 0');
    setEndpointState(m, "gpu1", "half_open");
    text = await m.registry.metrics();
    expect(text).toContain('responses_router_endpoint_up{upstream="gpu1"} 1');
    expect(text).toContain('responses_router_endpoint_state{upstream="gpu1",state="half_open"} 1');
    expect(text).toContain('responses_router_endpoint_state{upstream="gpu1",state="cooldown"} 0');
    m.inFlight.set({ upstream: "gpu1" }, 1);
    forgetEndpoint(m, "gpu1");
    expect(await m.registry.metrics()).not.toContain('upstream="gpu1"');
  });
});

describe("metricNames", () => {
  it("lists counters and gauges by name and histograms by their sample names", () => {
    const names = metricNames(createMetrics({ collectDefault: false }));
    expect(names).toContain("responses_router_requests_total");
    expect(names).toContain("responses_router_endpoint_up");
    expect(names).toContain("responses_router_request_duration_seconds_bucket");
    expect(names).toContain("responses_router_request_duration_seconds_sum");
    expect(names).toContain("responses_router_request_duration_seconds_count");
    expect(names).not.toContain("responses_router_request_duration_seconds");
    expect(names.every((n) => n.startsWith("responses_router_"))).toBe(true);
    expect(names).toEqual([...names].sort());
  });

  it("follows Prometheus naming conventions", () => {
    const m = createMetrics({ collectDefault: false });
    for (const metric of m.registry.getMetricsAsArray()) {
      const type = String(metric.type as unknown);
      if (type === "counter") expect(metric.name).toMatch(/_total$/);
      if (type === "histogram") expect(metric.name).toMatch(/_seconds$/);
      expect(metric.name).toMatch(/^responses_router_[a-z0-9_]+$/);
    }
  });
});
