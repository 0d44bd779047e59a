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
  it("consecutive endpoint failures put an endpoint in cooldown: no more traffic, logged, visible in /metrics and /health/backends", async () => {
    const [a, b] = await mocks(2);
    a!.setDefault("/chat/completions", upstreamError(503, "broken", null, "server_error"));
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
    expect((await r.fetch("/readyz")).status).toBe(200);
    const backends = await r.fetch("/health/backends");
    expect(backends.status).toBe(200);
    expect(((await backends.json()) as any).models.m).toEqual({ healthy: ["b"], unhealthy: ["a"] });
  });

  it("a single ejected endpoint still gets every request (panic routing, counted); a success ends its cooldown", async () => {
    const [a] = await mocks(1);
    a!.setDefault("/chat/completions", upstreamError(503, "loading", null, "server_error"));
    const log = captureLog();
    const r = await router(poolConfig([a!.url], { routing: { health: { failure_threshold: 1, cooldown: "60s", max_cooldown: "10m" } } }), log);
    const ep = r.runtime.pool.get("a")!;

    expect((await postResponses(r.url, { model: "m", input: "1" })).status).toBe(503);
    expect(ep.health.state()).toBe("cooldown");
    expect(calls(a!)).toBe(1); // one failure per request: a 503 is not retried on the same endpoint
    // Ejected, and the only one: asked anyway, never a 503 no_healthy_endpoint.
    const panicked = await postResponses(r.url, { model: "m", input: "2" });
    expect(panicked.status).toBe(503);
    expect(((await panicked.json()) as any).error.code).not.toBe("no_healthy_endpoint");
    expect(calls(a!)).toBe(2);
    // A failure while ejected does not stretch the cooldown.
    expect(stateLogs(log, "a").map((l) => l.state)).toEqual(["cooldown"]);

    a!.setDefault("/chat/completions", () => undefined); // back to the mock's default good answer
    expect((await r.client.responses.create({ model: "m", input: "3" })).output_text).toBe("Hello world");
    expect(ep.health.state()).toBe("healthy");
    expect(stateLogs(log, "a").at(-1)).toMatchObject({ level: "info", state: "healthy", reason: expect.stringContaining("panic") });
    const text = await metrics(r);
    expect(metricSample(text, "responses_router_panic_routed_total", { model: "m", upstream: "a", outcome: "error" })).toBe(1);
    expect(metricSample(text, "responses_router_panic_routed_total", { model: "m", upstream: "a", outcome: "ok" })).toBe(1);
    expect(metricSample(text, "responses_router_endpoint_up", { upstream: "a" })).toBe(1);
  });

  it("half-open lets one trial through, a failed trial doubles the cooldown, a good trial makes the endpoint healthy", async () => {
    const [a, b] = await mocks(2);
    a!.setDefault("/chat/completions", upstreamError(502, "bad gateway", null, "server_error"));
    const log = captureLog();
    const r = await router(poolConfig([a!.url, b!.url], { routing: { health: { failure_threshold: 1, cooldown: "300ms", max_cooldown: "10s" } } }), log);
    const ep = r.runtime.pool.get("a")!;
    // Round-robin between equal endpoints: within two requests a is asked once and ejected.
    for (let i = 0; i < 2; i++) expect((await r.client.responses.create({ model: "m", input: `${i}` })).output_text).toBe("Hello world");
    expect(ep.health.state()).toBe("cooldown");

    await waitUntil("half-open", () => ep.health.state() === "half_open");
    await waitUntil("half-open announced", () => stateLogs(log, "a").some((l) => l.state === "half_open"));
    expect(metricSample(await metrics(r), "responses_router_endpoint_state", { upstream: "a", state: "half_open" })).toBe(1);
    const before = calls(a!);
    // The trial fails over to b (the client never sees it); round-robin may pick b first.
    for (let i = 0; i < 3 && calls(a!) === before; i++) expect((await r.client.responses.create({ model: "m", input: "trial 1" })).output_text).toBe("Hello world");
    expect(calls(a!)).toBe(before + 1);
    expect(stateLogs(log, "a").at(-1)).toMatchObject({ state: "cooldown", reason: expect.stringContaining("cooling down for 600 ms") });

    await waitUntil("half-open again", () => ep.health.state() === "half_open");
    a!.setDefault("/chat/completions", () => undefined);
    for (let i = 0; i < 2 && ep.health.state() !== "healthy"; i++) await r.client.responses.create({ model: "m", input: "trial 2" });
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
