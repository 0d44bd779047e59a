import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { allEvents, callRouter } from "../helpers/background.js";
import { assertResponsesGrammar, runThroughOpenAISdk } from "../helpers/grammar.js";
import { metricSample } from "../helpers/metrics-text.js";
import { chatCompletion, chatTextChunks, startMockUpstream, type MockUpstream } from "../helpers/mock-upstream.js";
import { startRedis, type RedisServerHandle } from "../helpers/redis-server.js";
import { startTestRouter, twoKindConfig, type TestRouter } from "../helpers/router.js";

let redis: RedisServerHandle;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

/** "local" and "gpt-4.1" cache by model config; "plain" only when a request asks for it. */
function cacheConfig(chatUrl: string, oaiUrl: string, redisUrl: string) {
  const base = twoKindConfig(chatUrl, oaiUrl);
  return {
    ...base,
    models: {
      local: { endpoints: ["box"], upstream_model: "llama3.1:8b", cache: { ttl: "1h" } },
      "gpt-4.1": { endpoints: ["oai"], cache: { ttl: "1h" } },
      plain: { endpoints: ["box"] },
    },
    storage: { redis_url: redisUrl, prefix: `rrcache:${process.pid}:${redisUrl ? "r" : "m"}:` },
  };
}

for (const mode of ["memory", "redis"] as const) {
  describe(`response cache (${mode} store)`, () => {
    let chat: MockUpstream;
    let oai: MockUpstream;
    let router: TestRouter;
    const upstreamCalls = () => chat.requests.length + oai.requests.length;
    // A distinct prompt per test keeps tests independent of what earlier ones cached.
    let n = 0;
    const prompt = () => `question ${mode} ${++n}`;

    beforeAll(async () => {
      chat = await startMockUpstream();
      oai = await startMockUpstream();
      router = await startTestRouter(cacheConfig(chat.url, oai.url, mode === "redis" ? redis.url : ""));
    });
    afterAll(async () => {
      await router.close(500);
      await chat.close();
      await oai.close();
    });
    beforeEach(() => {
      chat.requests.length = 0;
      oai.requests.length = 0;
    });

    it("serves an identical request from the cache without touching a backend, as a new stored response", async () => {
      const input = prompt();
      const first = await router.client.responses.create({ model: "local", input, temperature: 0 });
      expect(upstreamCalls()).toBe(1);
      const hit = await router.client.responses.create({ model: "local", input, temperature: 0 });
      expect(upstreamCalls()).toBe(1);
      expect(hit.output_text).toBe(first.output_text);
      expect(hit.id).not.toBe(first.id);
      expect(hit.output[0]!.id).not.toBe(first.output[0]!.id);
      expect(hit.usage).toEqual(first.usage);
      expect((await router.client.responses.retrieve(hit.id)).output_text).toBe("Hello world");
      // store: false hits are served but not kept.
      const unstored = await router.client.responses.create({ model: "local", input, temperature: 0, store: false });
      expect(upstreamCalls()).toBe(1);
      expect(await router.client.responses.retrieve(unstored.id).catch((e) => e.status)).toBe(404);
    });

    it("serves a hit as a full event stream that the grammar checker and the SDK accept", async () => {
      const input = prompt();
      await router.client.responses.create({ model: "gpt-4.1", input });
      expect(oai.requests).toHaveLength(1);
      const res = await router.fetch("/v1/responses", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "gpt-4.1", input, stream: true }) });
      const events = await allEvents(res);
      assertResponsesGrammar(events);
      expect((await runThroughOpenAISdk(events)).final.output_text).toBe("Hello from upstream");
      const sdk = await router.client.responses.stream({ model: "gpt-4.1", input }).finalResponse();
      expect(sdk.output_text).toBe("Hello from upstream");
      expect(oai.requests).toHaveLength(1);
    });

    it("keys on the whole rehydrated history: the same last message after a different history is a miss", async () => {
      const input = prompt();
      const a = await router.client.responses.create({ model: "local", input: "history A", store: true });
      const b = await router.client.responses.create({ model: "local", input: "history B", store: true });
      const calls = upstreamCalls();
      await router.client.responses.create({ model: "local", input, previous_response_id: a.id });
      await router.client.responses.create({ model: "local", input, previous_response_id: b.id });
      expect(upstreamCalls()).toBe(calls + 2);
      await router.client.responses.create({ model: "local", input, previous_response_id: a.id });
      expect(upstreamCalls()).toBe(calls + 2);
      // Without the history it is yet another request.
      await router.client.responses.create({ model: "local", input });
      expect(upstreamCalls()).toBe(calls + 3);
    });

    it("ignores JSON key order but not what changes the answer", async () => {
      const input = prompt();
      const tool = { type: "function", name: "f", description: "d", parameters: { type: "object", properties: { a: { type: "string" } } } };
      const reordered = { parameters: { properties: { a: { type: "string" } }, type: "object" }, description: "d", name: "f", type: "function" };
      const post = (body: Record<string, unknown>) =>
        router.fetch("/v1/responses", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }).then((r) => r.json());
      await post({ model: "local", input, tools: [tool], temperature: 0.5 });
      await post({ temperature: 0.5, tools: [reordered], input, model: "local" });
      expect(upstreamCalls()).toBe(1);
      await post({ model: "local", input, tools: [tool], temperature: 0.7 });
      await post({ model: "local", input, tools: [tool], temperature: 0.5, instructions: "be brief" });
      expect(upstreamCalls()).toBe(3);
    });

    it("keys every field but a short list: prompt, text.verbosity, include, max_tool_calls, service_tier each miss; stream, store, metadata share the entry", async () => {
      const base = { model: "gpt-4.1", input: prompt() };
      const post = (body: Record<string, unknown>) =>
        router.fetch("/v1/responses", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ ...base, ...body }) }).then((r) => r.text());
      await post({});
      expect(oai.requests).toHaveLength(1);
      const variants: Record<string, unknown>[] = [
        { prompt: { id: "pmpt_1", variables: { city: "Paris" } } },
        { prompt: { id: "pmpt_1", variables: { city: "Rome" } } },
        { text: { verbosity: "low" } },
        { text: { verbosity: "high" } },
        { include: ["message.output_text.logprobs"] },
        { max_tool_calls: 1 },
        { max_tool_calls: 2 },
        { service_tier: "flex" },
        { service_tier: "priority" },
        { some_future_field: true },
      ];
      for (const [i, v] of variants.entries()) {
        await post(v);
        expect(oai.requests, JSON.stringify(v)).toHaveLength(2 + i);
      }
      // Each variant now hits its own entry; delivery and bookkeeping fields do not change the key.
      for (const v of variants) await post({ ...v, store: false, metadata: { run: "2" } });
      await post({ stream: true });
      await post({ store: false, metadata: { team: "b" } });
      await post({ stream: true, stream_options: { include_obfuscation: false }, store: false });
      expect(oai.requests).toHaveLength(1 + variants.length);
    });

    it("is opt-in per model and per request, and the router extension never goes upstream", async () => {
      const input = prompt();
      await router.client.responses.create({ model: "plain", input });
      await router.client.responses.create({ model: "plain", input });
      expect(upstreamCalls()).toBe(2);
      const ask = (model: string, cache: boolean) => router.client.responses.create({ model, input, router: { cache } } as never);
      await ask("plain", true);
      await ask("plain", true);
      expect(upstreamCalls()).toBe(3);
      await ask("local", false);
      await ask("local", false);
      await ask("gpt-4.1", false);
      expect(upstreamCalls()).toBe(6);
      for (const r of [...chat.requests, ...oai.requests]) expect(r.body).not.toHaveProperty("router");
    });

    it("caches only completed responses", async () => {
      const input = prompt();
      chat.enqueue("/chat/completions", { kind: "json", body: chatCompletion("cut sho", "mock", { finish_reason: "length" }) });
      const cut = await router.client.responses.create({ model: "local", input });
      expect(cut.status).toBe("incomplete");
      const again = await router.client.responses.create({ model: "local", input });
      expect(again.status).toBe("completed");
      expect(upstreamCalls()).toBe(2);
      chat.enqueue("/chat/completions", { kind: "sse", frames: [...chatTextChunks(["par"]).slice(0, 2)], dieAfter: 2 });
      const input2 = prompt();
      const res = await router.fetch("/v1/responses", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "local", input: input2, stream: true }) });
      expect((await allEvents(res)).at(-1)!.type).toBe("response.failed");
      await router.client.responses.create({ model: "local", input: input2 });
      expect(upstreamCalls()).toBe(4);
    });
  });
}

describe("response cache on a Redis that goes away", () => {
  it("cache errors are misses: store:false requests keep working and the errors are counted", async () => {
    const own = await startRedis();
    const chat = await startMockUpstream();
    const router = await startTestRouter(cacheConfig(chat.url, chat.url, own.url));
    try {
      const call = callRouter(router.url, "unused");
      const input = "cached while redis is down";
      await router.client.responses.create({ model: "local", input, store: false });
      await own.stop();
      for (let i = 0; i < 2; i++) {
        const res = await call("/v1/responses", { body: { model: "local", input, store: false } });
        expect(res.status).toBe(200);
      }
      expect(chat.requests).toHaveLength(3);
      const text = await (await fetch(`${router.url}/metrics`)).text();
      expect(metricSample(text, "responses_router_store_errors_total", { store: "cache" })).toBeGreaterThanOrEqual(2);
    } finally {
      await router.close(200);
      await chat.close();
      await own.stop();
    }
  });
});
