import { setTimeout as delay } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { captureLog, type CapturedLog } from "../helpers/log-capture.js";
import { metricSample } from "../helpers/metrics-text.js";
import { upstreamError, type MockUpstream } from "../helpers/mock-upstream.js";
import { poolConfig } from "../helpers/pool-config.js";
import { startTestRouter, type TestRouter } from "../helpers/router.js";
import { usePerTestServers } from "../helpers/per-test.js";
import { postResponses, waitUntil } from "../helpers/wait.js";

/** Passive health (circuit breaker per endpoint) and active probes, as seen in traffic, logs and /metrics. */


const servers = usePerTestServers();
const { mocks } = servers;

const router = (raw: Record<string, unknown>, log: CapturedLog) => servers.router(raw, { logger: log.logger });

const calls = (m: MockUpstream, path = "/chat/completions") => m.requests.filter((r) => r.path === path).length;
const stateLogs = (log: CapturedLog, endpoint: string) => log.lines().filter((l) => l.endpoint === endpoint && typeof l.state === "string");
const metrics = async (r: TestRouter) => (await r.fetch("/metrics")).text();

describe("passive health", () => {
  it("consecutive failures put an endpoint in cooldown: no more traffic, logged, visible in /metrics and /readyz", async () => {
    const [a, b] = await mocks(2);
    a!.setDefault("/chat/completions", upstreamError(500, "broken", null, "server_error"));
    const log = captureLog();
    const r = await router(poolConfig([a!.url, b!.url], { routing: { health: { failure_threshold: 2, cooldown: "60s" } } }), log);
    for (let i = 0; i < 8; i++) expect((await r.client.responses.create({ model: "m", input: `${i}` })).output_text).toBe("Hello world");
    expect(calls(a!)).toBe(2);
    expect(calls(b!)).toBe(8);
    expect(stateLogs(log, "a")).toEqual([
      expect.objectContaining({ level: "warn", state: "cooldown", msg: "endpoint a is now cooldown", reason: expect.stringContaining("cooling down for 60000 ms") }),
    ]);
    const text = await metrics(r);
    expect(metricSample(text, "responses_router_endpoint_up", { upstream: "a" })).toBe(0);
    expect(metricSample(text, "responses_router_endpoint_state", { upstream: "a", state: "cooldown" })).toBe(1);
    expect(metricSample(text, "responses_router_endpoint_state", { upstream: "a", state: "healthy" })).toBe(0);
    expect(metricSample(text, "responses_router_endpoint_up", { upstream: "b" })).toBe(1);
    const ready = await r.fetch("/readyz");
    expect(ready.status).toBe(200);
    expect(((await ready.json()) as any).models.m).toEqual({ healthy: ["b"], unhealthy: ["a"] });
  });

  it("cooldown grows on repeat, half-open lets a trial through, and a good trial makes the endpoint healthy", async () => {
    const [a] = await mocks(1);
    a!.setDefault("/chat/completions", upstreamError(500, "broken", null, "server_error"));
    const log = captureLog();
    const r = await router(poolConfig([a!.url], { routing: { retry: { attempts: 1, max_time: "5s" }, health: { failure_threshold: 1, cooldown: "400ms", max_cooldown: "10s" } } }), log);
    const ep = r.runtime.pool.get("a")!;

    expect((await postResponses(r.url, { model: "m", input: "1" })).status).toBe(502);
    expect(ep.health.state()).toBe("cooldown");
    // The only endpoint is cooling down: 503 with Retry-After, and the upstream is not asked.
    const cooling = await postResponses(r.url, { model: "m", input: "2" });
    expect(cooling.status).toBe(503);
    expect(cooling.headers.get("retry-after")).toBe("1");
    expect(((await cooling.json()) as any).error).toMatchObject({ type: "server_error", code: "no_healthy_endpoint" });
    expect(calls(a!)).toBe(1);

    await waitUntil("half-open", () => ep.health.state() === "half_open");
    await waitUntil("half-open announced", () => stateLogs(log, "a").some((l) => l.state === "half_open"));
    expect(metricSample(await metrics(r), "responses_router_endpoint_state", { upstream: "a", state: "half_open" })).toBe(1);
    expect((await postResponses(r.url, { model: "m", input: "trial 1" })).status).toBe(502); // the trial fails
    expect(stateLogs(log, "a").at(-1)).toMatchObject({ state: "cooldown", reason: expect.stringContaining("cooling down for 800 ms") });

    await waitUntil("half-open again", () => ep.health.state() === "half_open");
    a!.setDefault("/chat/completions", () => undefined); // back to the mock's default good answer
    expect((await r.client.responses.create({ model: "m", input: "trial 2" })).output_text).toBe("Hello world");
    expect(ep.health.state()).toBe("healthy");
    expect(stateLogs(log, "a").map((l) => l.state)).toEqual(["cooldown", "half_open", "cooldown", "half_open", "healthy"]);
    expect(stateLogs(log, "a").at(-1)).toMatchObject({ level: "info", reason: "trial request succeeded" });
    const text = await metrics(r);
    expect(metricSample(text, "responses_router_endpoint_up", { upstream: "a" })).toBe(1);
    expect(metricSample(text, "responses_router_endpoint_state", { upstream: "a", state: "healthy" })).toBe(1);
  });
});

describe("active probes (routing.health.probe_interval)", () => {
  it("failing probes take an endpoint out with no client traffic; a good probe lets it back long before the cooldown ends", async () => {
    const [a, b] = await mocks(2);
    a!.setDefault("/models", upstreamError(503, "loading", null, "server_error"));
    const log = captureLog();
    const r = await router(poolConfig([a!.url, b!.url], { routing: { health: { failure_threshold: 2, cooldown: "60s", probe_interval: "100ms" } } }), log);
    const ep = r.runtime.pool.get("a")!;
    await waitUntil("probes put a in cooldown", () => ep.health.state() === "cooldown");
    expect(calls(a!)).toBe(0);
    expect(stateLogs(log, "a")[0]).toMatchObject({ state: "cooldown", reason: expect.stringContaining("health probe failed: HTTP 503") });
    expect(r.runtime.pool.get("b")!.health.state()).toBe("healthy");
    // While a cools down, requests go to b.
    for (let i = 0; i < 3; i++) await r.client.responses.create({ model: "m", input: `${i}` });
    expect(calls(b!)).toBe(3);
    expect(calls(a!)).toBe(0);

    a!.setDefault("/models", () => undefined);
    await waitUntil("a good probe ends the cooldown", () => ep.health.state() === "healthy");
    expect(stateLogs(log, "a").at(-1)).toMatchObject({ state: "healthy", reason: "health probe succeeded" });
    expect(metricSample(await metrics(r), "responses_router_endpoint_up", { upstream: "a" })).toBe(1);
    for (let i = 0; i < 4; i++) await r.client.responses.create({ model: "m", input: `${i}` });
    expect(calls(a!)).toBeGreaterThan(0);
    // Probes carry the endpoint's own credentials only (none here) and take no request slot.
    expect(a!.requests.find((q) => q.path === "/models")!.headers.authorization).toBeUndefined();
    expect(ep.inFlight).toBe(0);
  });

  it("stops probing when the router closes", async () => {
    const [a] = await mocks(1);
    const log = captureLog();
    const r = await startTestRouter(poolConfig([a!.url], { routing: { health: { probe_interval: "50ms" } } }), { logger: log.logger });
    await waitUntil("a few probes ran", () => calls(a!, "/models") >= 3);
    await r.close(500);
    const after = calls(a!, "/models");
    await delay(300); // six intervals
    expect(calls(a!, "/models")).toBe(after);
  });
});
