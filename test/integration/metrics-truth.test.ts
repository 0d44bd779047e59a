import { describe, expect, it } from "vitest";
import { metricSample as sample } from "../helpers/metrics-text.js";
import { upstreamError } from "../helpers/mock-upstream.js";
import { deadUrl, poolConfig } from "../helpers/pool-config.js";
import { usePerTestServers } from "../helpers/per-test.js";
import { promtool, skipPromtool } from "../helpers/promtool.js";
import type { TestRouter } from "../helpers/router.js";
import { waitUntil } from "../helpers/wait.js";

/** What an operator's Prometheus reads after known traffic: every value checked, nothing misleading. */
const { mocks, router } = usePerTestServers();

const metricsText = async (r: TestRouter) => (await r.fetch("/metrics")).text();
const post = (r: TestRouter, path: string, body: unknown) => r.fetch(path, { method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json" } });

describe("/metrics tells the truth", () => {
  it("in memory mode exports no redis_up, and the config load time is the start time", async () => {
    const [a] = await mocks(1);
    const before = Date.now() / 1000;
    const r = await router(poolConfig([a!.url]));
    const after = Date.now() / 1000;
    const text = await metricsText(r);
    expect(text).not.toContain("responses_router_redis_up");
    const loaded = sample(text, "responses_router_config_last_reload_timestamp_seconds")!;
    expect(loaded).toBeGreaterThanOrEqual(Math.floor(before));
    expect(loaded).toBeLessThanOrEqual(after);
  });

  it("exports Node's process metrics under their standard names, and no OpenMetrics family clash", async () => {
    const [a] = await mocks(1);
    const r = await router(poolConfig([a!.url]));
    const text = await metricsText(r);
    expect(text).toMatch(/^process_cpu_seconds_total \d/m);
    expect(text).toMatch(/^nodejs_eventloop_lag_p99_seconds \d/m);
    expect(text).not.toContain("responses_router_process_");
    expect(text).not.toContain("responses_router_nodejs_");
    // A counter's family is its name without _total: it must not be another metric's name.
    const names = new Set([...text.matchAll(/^# TYPE (\S+) (\w+)/gm)].map((m) => m[1]));
    const clashes = [...names].filter((n) => n.startsWith("responses_router_") && n.endsWith("_total") && names.has(n.slice(0, -"_total".length)));
    expect(clashes).toEqual([]);
    expect(sample(text, "responses_router_background_jobs_finished_total", { status: "completed" })).toBe(0);
  });

  it("an unreachable pool: the 502 is counted under the endpoint last tried, every attempt is an upstream error, the message names it", async () => {
    const r = await router(poolConfig([await deadUrl(), await deadUrl()], { routing: { retry: { attempts: 3, max_time: "20s" }, health: { failure_threshold: 100, cooldown: "60s" } } }));
    const res = await post(r, "/v1/responses", { model: "m", input: "hi" });
    expect(res.status).toBe(502);
    const err = ((await res.json()) as any).error;
    expect(err.code).toBe("upstream_unreachable");
    const last = /endpoint "([ab])"/.exec(err.message)?.[1];
    expect(last).toBeDefined();
    expect(err.message).not.toContain("127.0.0.1");

    const chat = await post(r, "/v1/chat/completions", { model: "m", messages: [{ role: "user", content: "hi" }] });
    expect(chat.status).toBe(502);
    const chatLast = /endpoint "([ab])"/.exec(((await chat.json()) as any).error.message)?.[1];

    const text = await metricsText(r);
    expect(sample(text, "responses_router_requests_total", { route: "/v1/responses", model: "m", upstream: last!, status: "502" })).toBe(1);
    expect(sample(text, "responses_router_requests_total", { route: "/v1/chat/completions", model: "m", upstream: chatLast!, status: "502" })).toBe(1);
    expect(sample(text, "responses_router_requests_total", { upstream: "", status: "502" })).toBeUndefined();
    // Three attempts per request (retry.attempts), each one an upstream call that failed.
    const errors = ["a", "b"].map((upstream) => sample(text, "responses_router_upstream_duration_seconds_count", { upstream, outcome: "error" }) ?? 0);
    expect(errors[0]! + errors[1]!).toBe(6);
    expect(errors[0]).toBeGreaterThan(0);
    expect(errors[1]).toBeGreaterThan(0);
  });

  it("an upstream 4xx and a 5xx are answered under that endpoint and observed as errors", async () => {
    const [a] = await mocks(1);
    a!.enqueue("/chat/completions", upstreamError(400, "bad", "invalid_value"));
    a!.enqueue("/chat/completions", upstreamError(500, "boom", null, "server_error"));
    const r = await router(poolConfig([a!.url], { routing: { retry: { attempts: 1, max_time: "20s" }, health: { failure_threshold: 100, cooldown: "60s" } } }));
    expect((await post(r, "/v1/responses", { model: "m", input: "x" })).status).toBe(400);
    const five = await post(r, "/v1/responses", { model: "m", input: "y" });
    expect(five.status).toBe(502);
    expect(((await five.json()) as any).error.message).toContain('endpoint "a"');
    expect((await post(r, "/v1/responses", { model: "m", input: "z" })).status).toBe(200);
    const text = await metricsText(r);
    const route = "/v1/responses";
    expect(sample(text, "responses_router_requests_total", { route, model: "m", upstream: "a", status: "400" })).toBe(1);
    expect(sample(text, "responses_router_requests_total", { route, model: "m", upstream: "a", status: "502" })).toBe(1);
    expect(sample(text, "responses_router_requests_total", { route, model: "m", upstream: "a", status: "200" })).toBe(1);
    expect(sample(text, "responses_router_upstream_duration_seconds_count", { upstream: "a", outcome: "error" })).toBe(2);
    expect(sample(text, "responses_router_upstream_duration_seconds_count", { upstream: "a", outcome: "ok" })).toBe(1);
  });

  it("a pool whose every endpoint is ejected is still tried (panic routing), counted per model and upstream", async () => {
    const r = await router(poolConfig([await deadUrl()], { routing: { retry: { attempts: 1, max_time: "20s" }, health: { failure_threshold: 1, cooldown: "60s" } } }));
    expect((await post(r, "/v1/responses", { model: "m", input: "x" })).status).toBe(502);
    expect(r.runtime.pool.get("a")!.health.state()).toBe("cooldown");
    const res = await post(r, "/v1/responses", { model: "m", input: "x" });
    // Not a 503 no_healthy_endpoint: the ejected endpoint was asked, and its own failure is the answer.
    expect(res.status).toBe(502);
    expect(((await res.json()) as any).error.code).toBe("upstream_unreachable");
    const text = await metricsText(r);
    expect(sample(text, "responses_router_panic_routed_total", { model: "m", upstream: "a", outcome: "error" })).toBe(1);
  });

  it.skipIf(skipPromtool)("promtool check metrics passes on a live /metrics after mixed traffic", async () => {
    const [a] = await mocks(1);
    a!.enqueue("/chat/completions", upstreamError(500, "boom", null, "server_error"));
    const r = await router(poolConfig([a!.url], { routing: { retry: { attempts: 1, max_time: "20s" }, health: { failure_threshold: 100, cooldown: "60s" } } }));
    expect((await post(r, "/v1/responses", { model: "m", input: "fails" })).status).toBe(502);
    await r.client.responses.create({ model: "m", input: "hi" });
    await r.client.responses.stream({ model: "m", input: "hi" }).finalResponse();
    await r.client.chat.completions.create({ model: "m", messages: [{ role: "user", content: "hi" }] });
    const job = await r.client.responses.create({ model: "m", input: "later", background: true });
    await waitUntil("the background job to finish", async () => (await r.client.responses.retrieve(job.id)).status === "completed");
    const text = await metricsText(r);
    expect(sample(text, "responses_router_background_jobs_finished_total", { status: "completed" })).toBe(1);
    expect(sample(text, "responses_router_requests_total", { route: "/v1/responses", model: "m", upstream: "a", status: "200" })).toBe(2);
    promtool(["check", "metrics"], text);
  });
});
