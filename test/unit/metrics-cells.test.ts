import { Counter, Gauge, Histogram, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { createMetrics } from "../../src/ops/metrics.js";

// The router's counters and histograms update a label set's record in place after its first
// call; prom-client's own path, fed the same calls, must read the same numbers.
describe("metrics: cached label-set records", () => {
  it("a counter counts as prom-client does, across label sets, values, reset and remove", async () => {
    const m = createMetrics({ collectDefault: false });
    const plain = new Counter({ name: "plain_tokens_total", help: "h", labelNames: ["model", "upstream", "type", "key"], registers: [new Registry()] });
    const calls: [Record<string, string>, number | undefined][] = [];
    for (let i = 0; i < 50; i++) calls.push([{ model: `m${i % 3}`, upstream: `u${i % 2}`, type: i % 5 === 0 ? "input" : "output", key: "" }, i % 4 === 0 ? undefined : i % 7]);
    for (const [labels, n] of calls) {
      m.tokens.inc({ ...labels }, n);
      plain.inc({ ...labels }, n);
    }
    const values = async (c: { get(): Promise<{ values: { labels: object; value: number }[] }> }) =>
      (await c.get()).values.map((v) => ({ labels: v.labels, value: v.value })).sort((a, b) => JSON.stringify(a.labels).localeCompare(JSON.stringify(b.labels)));
    expect(await values(m.tokens)).toEqual(await values(plain));
    expect((await values(m.tokens)).length).toBe(12);

    m.tokens.remove({ model: "m0", upstream: "u0", type: "input", key: "" });
    plain.remove({ model: "m0", upstream: "u0", type: "input", key: "" });
    m.tokens.inc({ model: "m0", upstream: "u0", type: "input", key: "" }, 3);
    plain.inc({ model: "m0", upstream: "u0", type: "input", key: "" }, 3);
    expect(await values(m.tokens)).toEqual(await values(plain));

    m.tokens.reset();
    m.tokens.inc({ model: "m1", upstream: "u1", type: "output", key: "" });
    m.tokens.inc({ model: "m1", upstream: "u1", type: "output", key: "" });
    expect(await values(m.tokens)).toEqual([{ labels: { model: "m1", upstream: "u1", type: "output", key: "" }, value: 2 }]);
    expect(() => m.tokens.inc({ model: "m1", upstream: "u1", type: "output", key: "" }, -1)).toThrow();
    expect(() => m.tokens.inc({ model: "m1", upstream: "u1", type: "output", key: "", nope: "x" } as never)).toThrow();
  });

  it("a histogram's buckets, sum and count match prom-client's, values past the last bucket included", async () => {
    const m = createMetrics({ collectDefault: false });
    const buckets = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1];
    const plain = new Histogram({ name: "plain_overhead_seconds", help: "h", labelNames: ["route"], buckets, registers: [new Registry()] });
    const vals = [0, 0.00005, 0.00007, 0.001, 0.0011, 0.1, 0.2, 7, 0.0003, 0.0003];
    for (const [i, v] of vals.entries()) {
      const route = i % 3 === 0 ? "/v1/responses" : "/v1/chat/completions";
      m.overhead.observe({ route }, v);
      plain.observe({ route }, v);
    }
    const samples = (s: string) => s.split("\n").filter((l) => !l.startsWith("#")).map((l) => l.replace(/^.*?_overhead_seconds/, "x"));
    const ours = samples(await m.registry.getSingleMetricAsString("responses_router_overhead_seconds"));
    expect(ours.length).toBe(2 * (buckets.length + 3));
    expect(ours).toEqual(samples(await plainRegistryString(plain)));
    expect(() => m.overhead.observe({ route: "/v1/responses" }, Number.NaN)).toThrow();
  });

  it("a gauge's set, inc and dec read as prom-client's, across label sets, remove and reset", async () => {
    const m = createMetrics({ collectDefault: false });
    const plain = new Gauge({ name: "plain_in_flight", help: "h", labelNames: ["upstream"], registers: [new Registry()] });
    const values = async (g: { get(): Promise<{ values: { labels: object; value: number }[] }> }) =>
      (await g.get()).values.map((v) => ({ labels: v.labels, value: v.value })).sort((a, b) => JSON.stringify(a.labels).localeCompare(JSON.stringify(b.labels)));
    const both = (f: (g: Gauge<"upstream">) => void) => {
      f(m.inFlight);
      f(plain);
    };
    for (let i = 0; i < 30; i++) both((g) => g.set({ upstream: `u${i % 3}` }, i));
    both((g) => g.inc({ upstream: "u1" }, 5));
    both((g) => g.dec({ upstream: "u2" }));
    both((g) => g.set({ upstream: "u0" }, 0));
    expect(await values(m.inFlight)).toEqual(await values(plain));
    expect(await values(m.inFlight)).toEqual([
      { labels: { upstream: "u0" }, value: 0 },
      { labels: { upstream: "u1" }, value: 33 },
      { labels: { upstream: "u2" }, value: 28 },
    ]);
    both((g) => g.remove({ upstream: "u1" }));
    both((g) => g.set({ upstream: "u1" }, 7));
    both((g) => g.set({ upstream: "u1" }, 8));
    expect(await values(m.inFlight)).toEqual(await values(plain));
    both((g) => g.reset());
    both((g) => g.set({ upstream: "u2" }, 1));
    both((g) => g.set({ upstream: "u2" }, 2));
    expect(await values(m.inFlight)).toEqual([{ labels: { upstream: "u2" }, value: 2 }]);
    expect(await values(m.inFlight)).toEqual(await values(plain));
    expect(() => m.inFlight.set({ upstream: "u2", nope: "x" } as never, 1)).toThrow();
  });
});

async function plainRegistryString(h: Histogram): Promise<string> {
  const r = new Registry();
  r.registerMetric(h);
  return r.getSingleMetricAsString("plain_overhead_seconds");
}
