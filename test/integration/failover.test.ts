import { describe, expect, it } from "vitest";
import { assertResponsesGrammar } from "../helpers/grammar.js";
import { metricSample } from "../helpers/metrics-text.js";
import { chatTextChunks, upstreamError, type MockUpstream } from "../helpers/mock-upstream.js";
import { deadUrl, poolConfig } from "../helpers/pool-config.js";
import { parseSse } from "../helpers/router.js";
import { usePerTestServers } from "../helpers/per-test.js";
import { postResponses } from "../helpers/wait.js";


const { mocks, router } = usePerTestServers();


const chatCalls = (m: MockUpstream) => m.requests.filter((r) => r.path === "/chat/completions").length;

describe("failover before the first byte", () => {
  it("serves every request, streamed or not, with one of three backends dead", async () => {
    const [b, c] = await mocks(2);
    const r = await router(poolConfig([await deadUrl(), b!.url, c!.url], { routing: { health: { failure_threshold: 2, cooldown: "60s" } } }));
    const jobs = Array.from({ length: 24 }, async (_, i) => {
      if (i % 2 === 0) return (await r.client.responses.create({ model: "m", input: `q${i}` })).output_text;
      return (await r.client.responses.stream({ model: "m", input: `q${i}` }).finalResponse()).output_text;
    });
    const texts = await Promise.all(jobs);
    expect(texts).toEqual(Array(24).fill("Hello world"));
    expect(chatCalls(b!) + chatCalls(c!)).toBe(24);
    expect(chatCalls(b!)).toBeGreaterThan(0);
    expect(chatCalls(c!)).toBeGreaterThan(0);
    // The dead endpoint was tripped after two refused connections and takes no more traffic.
    expect(r.runtime.pool.get("a")!.health.state()).toBe("cooldown");
    const metrics = await (await r.fetch("/metrics")).text();
    expect(metricSample(metrics, "responses_router_endpoint_up", { upstream: "a" })).toBe(0);
    expect(metricSample(metrics, "responses_router_endpoint_state", { upstream: "a", state: "cooldown" })).toBe(1);
    expect(metricSample(metrics, "responses_router_upstream_retries_total", { model: "m", upstream: "a", reason: "connect" })).toBeGreaterThanOrEqual(2);
  });

  it("retries a 5xx on another endpoint and the client never sees it", async () => {
    const [a, b] = await mocks(2);
    a!.setDefault("/chat/completions", upstreamError(502, "bad gateway", null, "server_error"));
    const r = await router(poolConfig([a!.url, b!.url], { routing: { health: { failure_threshold: 100, cooldown: "60s" } } }));
    for (let i = 0; i < 6; i++) {
      const res = await r.client.responses.create({ model: "m", input: "x" });
      expect(res.output_text).toBe("Hello world");
    }
    expect(chatCalls(b!)).toBe(6);
    expect(chatCalls(a!)).toBeGreaterThan(0);
    const metrics = await (await r.fetch("/metrics")).text();
    expect(metricSample(metrics, "responses_router_failovers_total", { model: "m" })).toBe(chatCalls(a!));
    expect(metricSample(metrics, "responses_router_upstream_retries_total", { model: "m", upstream: "a", reason: "status_5xx" })).toBe(chatCalls(a!));
  });

  it("moves a 429 to another endpoint at once, and passes 429 + Retry-After on when every endpoint refuses", async () => {
    const [a, b] = await mocks(2);
    const tooMany = upstreamError(429, "slow down", "rate_limit_exceeded", "rate_limit_error");
    a!.setDefault("/chat/completions", { ...tooMany, headers: { "retry-after": "30" } } as never);
    const r = await router(poolConfig([a!.url, b!.url], { routing: { health: { failure_threshold: 100, cooldown: "60s" } } }));
    for (let i = 0; i < 4; i++) expect((await r.client.responses.create({ model: "m", input: "x" })).output_text).toBe("Hello world");
    expect(chatCalls(b!)).toBe(4);

    b!.setDefault("/chat/completions", { ...tooMany, headers: { "retry-after": "30" } } as never);
    const before = chatCalls(a!) + chatCalls(b!);
    const res = await postResponses(r.url, { model: "m", input: "x" });
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBe("30");
    expect(await res.json()).toEqual({ error: { message: "slow down", type: "rate_limit_error", param: null, code: "rate_limit_exceeded" } });
    // Both endpoints asked once; a 30 s Retry-After does not fit the 20 s retry budget, so no third attempt.
    expect(chatCalls(a!) + chatCalls(b!) - before).toBe(2);
  });

  it("waits out a short Retry-After before asking the same endpoint again", async () => {
    const [a] = await mocks(1);
    a!.enqueue("/chat/completions", { ...upstreamError(429, "busy", "rate_limit_exceeded", "rate_limit_error"), headers: { "retry-after": "1" } } as never);
    const r = await router(poolConfig([a!.url]));
    const res = await r.client.responses.create({ model: "m", input: "x" });
    expect(res.output_text).toBe("Hello world");
    expect(chatCalls(a!)).toBe(2);
  });

  it("does not retry a 4xx: it is the client's error", async () => {
    const [a, b] = await mocks(2);
    a!.setDefault("/chat/completions", upstreamError(400, "context too long", "context_length_exceeded", "invalid_request_error", "input"));
    b!.setDefault("/chat/completions", upstreamError(400, "context too long", "context_length_exceeded", "invalid_request_error", "input"));
    const r = await router(poolConfig([a!.url, b!.url]));
    await expect(r.client.responses.create({ model: "m", input: "x" })).rejects.toMatchObject({ status: 400, code: "context_length_exceeded", param: "input" });
    expect(chatCalls(a!) + chatCalls(b!)).toBe(1);
  });

  it("bounds the attempts: three failing endpoints and attempts: 2 give two upstream calls and one 502", async () => {
    const ms = await mocks(3);
    for (const m of ms) m.setDefault("/chat/completions", upstreamError(500, "boom", null, "server_error"));
    const r = await router(poolConfig(ms.map((m) => m.url), { routing: { retry: { attempts: 2, max_time: "20s" }, health: { failure_threshold: 100, cooldown: "60s" } } }));
    const res = await postResponses(r.url, { model: "m", input: "x" });
    expect(res.status).toBe(502);
    const body = (await res.json()) as { error: Record<string, unknown> };
    expect(body.error).toMatchObject({ type: "server_error", code: "upstream_error" });
    expect(ms.reduce((n, m) => n + chatCalls(m), 0)).toBe(2);
  });

  it("never fails over after the first byte: a stream that breaks ends in response.failed", async () => {
    const [a, b] = await mocks(2);
    a!.setDefault("/chat/completions", { kind: "sse", frames: chatTextChunks(["one", "two", "three"]), dieAfter: 2 });
    b!.setDefault("/chat/completions", { kind: "sse", frames: chatTextChunks(["one", "two", "three"]), dieAfter: 2 });
    const r = await router(poolConfig([a!.url, b!.url]));
    const res = await postResponses(r.url, { model: "m", input: "x", stream: true });
    expect(res.status).toBe(200);
    const events = parseSse(await res.text()).map((f) => f.data);
    assertResponsesGrammar(events);
    expect(events.at(-1)).toMatchObject({ type: "response.failed", response: { status: "failed", error: { code: "server_error" } } });
    expect(chatCalls(a!) + chatCalls(b!)).toBe(1);
  });
});
