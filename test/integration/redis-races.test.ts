import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { allEvents, callRouter, expectContiguous, sseEvents, until } from "../helpers/background.js";
import { metricSample } from "../helpers/metrics-text.js";
import { chatTextChunks, nativeEvents, nativeResponse, startMockUpstream, type MockUpstream, type Reply } from "../helpers/mock-upstream.js";
import { startRedis, type RedisServerHandle } from "../helpers/redis-server.js";
import { startTestRouter, type TestRouter } from "../helpers/router.js";
import { chainTag } from "../../src/store/chain.js";
import { chainKeys } from "../../src/store/redis/chain-scripts.js";

/**
 * State races between router instances on one Redis: a delete is final even while another
 * instance finishes the job, and a Redis outage mid-job never leaves a gap in the recorded
 * stream a client resumes from.
 */
let redis: RedisServerHandle;
let raw: Redis;
let prefixes = 0;
const uniquePrefix = () => `rrrace:${process.pid}:${++prefixes}:`;

function redisConfig(chatUrl: string, oaiUrl: string, prefix: string, redisUrl: string) {
  return {
    server: { api_keys: [{ name: "team-a", key: "key-a" }] },
    endpoints: [
      { name: "box", url: chatUrl, kind: "chat", max_concurrency: 8 },
      { name: "oai", url: oaiUrl, kind: "openai", api_key: "sk-upstream-secret-0123456789", max_concurrency: 8 },
    ],
    models: { local: { endpoints: ["box"], upstream_model: "llama3.1:8b" }, "gpt-4.1": { endpoints: ["oai"] } },
    routing: { queue_timeout: "500ms", retry: { attempts: 1, max_time: "5s" } },
    storage: { redis_url: redisUrl, prefix },
    background: { concurrency: 4, cancel_wait: "1s" },
  };
}

const routers: TestRouter[] = [];
const upstreams: MockUpstream[] = [];
async function upstream(): Promise<MockUpstream> {
  const u = await startMockUpstream();
  upstreams.push(u);
  return u;
}
async function router(chatUrl: string, oaiUrl: string, prefix: string, redisUrl = redis.url): Promise<TestRouter> {
  const r = await startTestRouter(redisConfig(chatUrl, oaiUrl, prefix, redisUrl), { apiKey: "key-a" });
  routers.push(r);
  return r;
}

beforeAll(async () => {
  redis = await startRedis();
  raw = new Redis(redis.url);
});
afterEach(async () => {
  await Promise.all(routers.splice(0).map((r) => r.close(500)));
  await Promise.all(upstreams.splice(0).map((u) => u.close()));
});
afterAll(async () => {
  raw?.disconnect();
  await redis?.stop();
});

const words = Array.from({ length: 6 }, (_, i) => `w${i} `);
const nativeStream = (delayMs: number): Reply => ({ kind: "sse", frames: nativeEvents(nativeResponse(words.join("")), words), delayMs });
const chatStream = (n: number, delayMs: number): Reply => ({ kind: "sse", frames: [...chatTextChunks(Array.from({ length: n }, (_, i) => `w${i} `)), "data: [DONE]\n\n"], delayMs });
const runningJobs = async (r: TestRouter) => metricSample(await (await fetch(`${r.url}/metrics`)).text(), "responses_router_background_jobs", { status: "in_progress" }) ?? 0;

describe("two instances on one Redis: races", () => {
  it.each(["gpt-4.1", "local"])("a delete on B while A finishes the job is final: no record, no events, over many rounds (%s)", async (model) => {
    const [chat, oai] = [await upstream(), await upstream()];
    chat.setDefault("/chat/completions", () => chatStream(6, 8));
    oai.setDefault("/responses", () => nativeStream(8));
    const prefix = uniquePrefix();
    const a = await router(chat.url, oai.url, prefix);
    const b = await router(chat.url, oai.url, prefix);
    const onA = callRouter(a.url, "key-a");
    const onB = callRouter(b.url, "key-a");
    const rounds = 24;
    for (let round = 0; round < rounds; round++) {
      const res = await onA("/v1/responses", { body: { model, input: `round ${round}`, background: true, stream: true } });
      let id = "";
      // Delete at a different point near the end of the stream each round (and the terminal write races it).
      const deleteAt = (round % 6) + 1;
      let deltas = 0;
      for await (const e of sseEvents(res)) {
        if (!id) id = (e.response as { id: string }).id;
        if (e.type === "response.output_text.delta" && ++deltas === words.length - (round % 3)) {
          await new Promise((r) => setTimeout(r, deleteAt * 3));
          const del = await onB(`/v1/responses/${id}`, { method: "DELETE" });
          expect(del.status).toBe(200);
          break;
        }
      }
      await until(async () => (await runningJobs(a)) === 0 && (await runningJobs(b)) === 0, "jobs to end");
      expect(await raw.hexists(chainKeys(prefix, chainTag(id)).hash, `${id}:s`), `round ${round}: record of ${id}`).toBe(0);
      expect(await raw.exists(`${prefix}events:${id}`), `round ${round}: events of ${id}`).toBe(0);
      expect((await onA(`/v1/responses/${id}`)).status).toBe(404);
    }
  }, 120_000);
});

describe("a Redis outage mid-job", () => {
  it.each(["local", "gpt-4.1"])("a resumed stream after a 3 s outage has no gap (%s)", async (model) => {
    const own = await startRedis({ persistDir: mkdtempSync(join(tmpdir(), "rr-outage-")) });
    try {
      const [chat, oai] = [await upstream(), await upstream()];
      // ~6 s of deltas: the outage falls in the middle.
      chat.setDefault("/chat/completions", () => chatStream(30, 200));
      oai.setDefault("/responses", () => ({ kind: "sse", frames: nativeEvents(nativeResponse("x".repeat(30)), Array.from({ length: 30 }, () => "x")), delayMs: 200 }));
      const r = await router(chat.url, oai.url, uniquePrefix(), own.url);
      const call = callRouter(r.url, "key-a");
      const res = await call("/v1/responses", { body: { model, input: "outage", background: true, stream: true } });
      let id = "";
      for await (const e of sseEvents(res)) {
        if (!id) id = (e.response as { id: string }).id;
        if (e.sequence_number >= 9) break;
      }
      await own.stop();
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      await own.restart();
      const done = await until(async () => {
        const got = await call(`/v1/responses/${id}`);
        if (got.status !== 200) return null;
        const body = (await got.json()) as { status: string };
        return body.status !== "queued" && body.status !== "in_progress" ? body : null;
      }, "the job to end", 30_000);
      const resumed = await allEvents(await call(`/v1/responses/${id}?stream=true&starting_after=9`));
      expect(resumed.length).toBeGreaterThan(0);
      expectContiguous(resumed, 10);
      const last = resumed.at(-1)!;
      expect(last.type).toMatch(/^response\.(completed|failed|incomplete)$/);
      expect((last.response as { status: string }).status).toBe(done.status);
      // The whole log from the start is gapless too.
      expectContiguous(await allEvents(await call(`/v1/responses/${id}?stream=true`)));
    } finally {
      await Promise.all(routers.splice(0).map((x) => x.close(500)));
      await own.stop();
    }
  }, 60_000);
});
