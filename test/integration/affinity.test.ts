import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { until } from "../helpers/background.js";
import { metricSample } from "../helpers/metrics-text.js";
import { chatTextChunks, startMockUpstream, upstreamError, type MockUpstream } from "../helpers/mock-upstream.js";
import { startRedis, type RedisServerHandle } from "../helpers/redis-server.js";
import { startTestRouter, type TestRouter } from "../helpers/router.js";

/**
 * Conversation affinity: a follow-up turn (previous_response_id or conversation) goes to the
 * endpoint that served the previous turn while it is healthy and has a free slot, else least
 * in-flight as usual. Two chat endpoints of equal weight: without affinity, idle equal
 * endpoints take turns (round-robin among ties), so a chain alternates between them.
 */
let a: MockUpstream;
let b: MockUpstream;
let redis: RedisServerHandle;
const routers: TestRouter[] = [];

beforeAll(async () => {
  a = await startMockUpstream();
  b = await startMockUpstream();
  redis = await startRedis();
});
afterEach(async () => {
  await Promise.all(routers.splice(0).map((r) => r.close(200)));
  a.requests.length = 0;
  b.requests.length = 0;
});
afterAll(async () => {
  await a?.close();
  await b?.close();
  await redis?.stop();
});

async function router(extra: Record<string, unknown> = {}): Promise<TestRouter> {
  const r = await startTestRouter({
    endpoints: [
      { name: "ep-a", url: a.url, kind: "chat", max_concurrency: 1 },
      { name: "ep-b", url: b.url, kind: "chat", max_concurrency: 1 },
    ],
    models: { local: { endpoints: ["ep-a", "ep-b"] } },
    routing: { queue_timeout: "5s", health: { failure_threshold: 1, cooldown: "30s" } },
    ...extra,
  });
  routers.push(r);
  return r;
}

const counts = () => ({ a: a.requests.length, b: b.requests.length });

async function affinity(r: TestRouter, upstream: string, result: "hit" | "miss"): Promise<number> {
  return metricSample(await (await r.fetch("/metrics")).text(), "responses_router_affinity_total", { upstream, result }) ?? 0;
}

describe("conversation affinity", () => {
  it("keeps a previous_response_id chain and a conversation on the endpoint of their first turn", async () => {
    const r = await router();
    const first = await r.client.responses.create({ model: "local", input: "turn 1" });
    const home = counts().a === 1 ? "a" : "b";
    let previous = first.id;
    for (let i = 2; i <= 4; i++) previous = (await r.client.responses.create({ model: "local", input: `turn ${i}`, previous_response_id: previous })).id;
    const conv = await r.client.conversations.create();
    await r.client.responses.create({ model: "local", input: "c1", conversation: conv.id });
    const convHome = counts()[home] === 5 ? home : home === "a" ? "b" : "a";
    for (let i = 2; i <= 4; i++) await r.client.responses.create({ model: "local", input: `c${i}`, conversation: conv.id, stream: i === 3 });
    expect(counts()[home]).toBeGreaterThanOrEqual(4);
    expect(counts()[convHome]).toBeGreaterThanOrEqual(4);
    expect(counts().a + counts().b).toBe(8);
    const hits = (await affinity(r, "ep-a", "hit")) + (await affinity(r, "ep-b", "hit"));
    expect(hits).toBe(6);
    expect((await affinity(r, "ep-a", "miss")) + (await affinity(r, "ep-b", "miss"))).toBe(0);
  });

  it("with routing.affinity false a chain goes least in-flight as before (here: alternating)", async () => {
    const r = await router({ routing: { affinity: false, queue_timeout: "5s" } });
    let previous = (await r.client.responses.create({ model: "local", input: "turn 1" })).id;
    for (let i = 2; i <= 4; i++) previous = (await r.client.responses.create({ model: "local", input: `turn ${i}`, previous_response_id: previous })).id;
    expect(counts()).toEqual({ a: 2, b: 2 });
    expect(await affinity(r, "ep-a", "hit")).toBe(0);
  });

  it("goes elsewhere when the preferred endpoint is full, and counts a miss", async () => {
    const r = await router();
    const first = await r.client.responses.create({ model: "local", input: "turn 1" });
    const [home, other] = counts().a === 1 ? [a, b] : [b, a];
    const homeName = home === a ? "ep-a" : "ep-b";
    // Occupy the home endpoint's only slot with a slow stream (a follow-up, so affinity puts it there).
    home.enqueue("/chat/completions", { kind: "sse", frames: [...chatTextChunks(["slow"]), "data: [DONE]\n\n"], delayMs: 300 });
    const busy = r.client.responses.create({ model: "local", input: "busy", stream: true, previous_response_id: first.id });
    await until(() => home.open() === 1 || null, "the home endpoint to be busy");
    const before = other.requests.length;
    await r.client.responses.create({ model: "local", input: "turn 2", previous_response_id: first.id });
    expect(other.requests.length).toBe(before + 1);
    expect(await affinity(r, homeName, "miss")).toBe(1);
    for await (const _ of await busy) {
      // drain
    }
  });

  it("goes elsewhere when the preferred endpoint is unhealthy", async () => {
    const r = await router();
    const first = await r.client.responses.create({ model: "local", input: "turn 1" });
    const [home, other] = counts().a === 1 ? [a, b] : [b, a];
    // The home endpoint fails once (failure_threshold 1): cooldown; the request fails over.
    home.enqueue("/chat/completions", upstreamError(503, "down", null, "server_error"));
    await r.client.responses.create({ model: "local", input: "x", previous_response_id: first.id });
    const before = { home: home.requests.length, other: other.requests.length };
    await r.client.responses.create({ model: "local", input: "turn 2", previous_response_id: first.id });
    expect(home.requests.length).toBe(before.home);
    expect(other.requests.length).toBe(before.other + 1);
  });

  it("follows the conversation across instances (Redis): the serving endpoint is stored with it", async () => {
    const storage = { redis_url: redis.url, prefix: `rraff:${process.pid}:` };
    const one = await router({ storage });
    const two = await router({ storage });
    // Instance one picks ep-a, ep-b, ep-a, ... among idle equals: start both the chain and the conversation on ep-b.
    await one.client.responses.create({ model: "local", input: "warm-up", store: false });
    const first = await one.client.responses.create({ model: "local", input: "turn 1" });
    await one.client.responses.create({ model: "local", input: "warm-up", store: false });
    const conv = await one.client.conversations.create();
    await one.client.responses.create({ model: "local", input: "c1", conversation: conv.id });
    expect(counts()).toEqual({ a: 2, b: 2 });
    expect(b.requests.map((q) => JSON.stringify(q.body.messages))).toEqual([expect.stringContaining("turn 1"), expect.stringContaining("c1")]);
    // Instance two has never routed anything: without affinity its first pick would be ep-a.
    await two.client.responses.create({ model: "local", input: "turn 2", previous_response_id: first.id });
    await two.client.responses.create({ model: "local", input: "c2", conversation: conv.id });
    expect(counts()).toEqual({ a: 2, b: 4 });
    expect(await affinity(two, "ep-b", "hit")).toBe(2);
  });
});

describe("routing.affinity config", () => {
  it("is on by default and rejects non-booleans", async () => {
    const { buildConfig } = await import("../../src/config/load.js");
    const base = { endpoints: [{ name: "e", url: "http://127.0.0.1:1/v1", kind: "chat" }], models: { m: { endpoints: ["e"] } } };
    expect(buildConfig(base).routing.affinity).toBe(true);
    expect(buildConfig({ ...base, routing: { affinity: false } }).routing.affinity).toBe(false);
    expect(() => buildConfig({ ...base, routing: { affinity: "yes" } })).toThrow(/affinity/);
  });
});

