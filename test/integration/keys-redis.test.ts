import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { metricSample } from "../helpers/metrics-text.js";
import { chatTextChunks, startMockUpstream, type MockUpstream } from "../helpers/mock-upstream.js";
import { startRedis, type RedisServerHandle } from "../helpers/redis-server.js";
import { startTestRouter, type TestRouter } from "../helpers/router.js";
import { readUntil } from "../helpers/wait.js";

/** Two router instances on one real Redis share each key's limits. */

const NOON = Date.UTC(2026, 5, 15, 12, 0, 0);
let now = NOON;
const KEY = "rr-shared-limits-key-3c4d5e6f";
let redis: RedisServerHandle;
let chat: MockUpstream;
let a: TestRouter;
let b: TestRouter;

beforeAll(async () => {
  redis = await startRedis();
  chat = await startMockUpstream();
  const cfg = {
    server: { api_keys: [{ name: "team", key: KEY, limits: { requests_per_minute: 3, max_concurrent: 1 } }] },
    endpoints: [{ name: "box", url: chat.url, kind: "chat", max_concurrency: 4 }],
    models: { local: { endpoints: ["box"] } },
    storage: { redis_url: redis.url, prefix: `rrkeys:${process.pid}:` },
  };
  a = await startTestRouter(cfg, { apiKey: KEY, now: () => now });
  b = await startTestRouter(cfg, { apiKey: KEY, now: () => now });
});
afterAll(async () => {
  await a?.close(500);
  await b?.close(500);
  await chat?.close();
  await redis?.stop().catch(() => {});
});

const status = (r: TestRouter) =>
  r.client.responses.create({ model: "local", input: "hi" }).then(
    () => 200,
    (e: unknown) => (e instanceof OpenAI.APIError ? e.status : 0),
  );

describe("limits in Redis mode", () => {
  it("requests_per_minute is one budget for all instances", async () => {
    now = NOON;
    expect([await status(a), await status(b), await status(a)]).toEqual([200, 200, 200]);
    expect([await status(b), await status(a)]).toEqual([429, 429]);
    const err = await b.client.chat.completions.create({ model: "local", messages: [{ role: "user", content: "hi" }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect((err as InstanceType<typeof OpenAI.RateLimitError>).headers?.get("x-ratelimit-remaining-requests")).toBe("0");
    now = NOON + 20_000;
    expect(await status(b)).toBe(200);
  });

  it("max_concurrent counts streams on every instance", async () => {
    now = NOON + 120_000;
    chat.enqueue("/chat/completions", { kind: "sse", frames: chatTextChunks(["hold"]), holdOpenMs: 60_000 });
    const ac = new AbortController();
    const res = await fetch(`${a.url}/v1/responses`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${KEY}` },
      body: JSON.stringify({ model: "local", input: "hi", stream: true }),
      signal: ac.signal,
    });
    await readUntil(res, (t) => t.includes("response.output_text.delta"));
    expect(await status(b)).toBe(429);
    ac.abort();
    let after = 0;
    for (let i = 0; i < 100 && after !== 200; i++) {
      after = await status(b);
      if (after !== 200) await new Promise((r) => setTimeout(r, 20));
    }
    expect(after).toBe(200);
  });

  it("when Redis is unreachable the instance counts on its own: store: false requests still pass, within the key's limits, the errors are counted", async () => {
    now = NOON + 600_000;
    await redis.stop();
    const r = await a.client.responses.create({ model: "local", input: "hi", store: false }).withResponse();
    expect(r.data.output_text).toBe("Hello world");
    // The instance's own count, started from what Redis last reported: the limit still holds.
    expect(r.response.headers.get("x-ratelimit-limit-requests")).toBe("3");
    const codes = [];
    for (let i = 0; i < 3; i++) codes.push(await a.client.responses.create({ model: "local", input: "hi", store: false }).then(() => 200, (e: unknown) => (e instanceof OpenAI.APIError ? e.status : 0)));
    expect(codes).toEqual([200, 200, 429]);
    const text = await (await a.fetch("/metrics")).text();
    expect(metricSample(text, "responses_router_store_errors_total", { store: "limiter" })).toBeGreaterThanOrEqual(1);
  });
});
