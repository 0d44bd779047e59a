import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chatCompletion, startMockUpstream, type MockUpstream } from "../helpers/mock-upstream.js";
import { startRedis, type RedisServerHandle } from "../helpers/redis-server.js";
import { startTestRouter, type TestRouter } from "../helpers/router.js";

/**
 * storage.durability: replica while no replica confirms (a failover window, here a primary with
 * none): stored requests wait for WAIT and answer 503, and a store: false request, whose key
 * limits live in the same Redis, does not queue behind them.
 */
let redis: RedisServerHandle;
let chat: MockUpstream;
let router: TestRouter;

beforeAll(async () => {
  [redis, chat] = await Promise.all([startRedis(), startMockUpstream()]);
  router = await startTestRouter(
    {
      server: { api_keys: [{ name: "team", key: "test-key", limits: { requests_per_minute: 1000 } }] },
      endpoints: [{ name: "box", url: chat.url, kind: "chat", max_concurrency: 8 }],
      models: { local: { endpoints: ["box"] } },
      storage: { redis_url: redis.url, prefix: `rrdurable:${process.pid}:`, durability: "replica", durability_timeout: "2s" },
    },
    { apiKey: "test-key" },
  );
}, 30_000);
afterAll(async () => {
  await router?.close(1000);
  await Promise.all([chat?.close(), redis?.stop()]);
});

describe("durability: replica without a replica", () => {
  it("store: false requests answer while stored ones still wait for a replica; those answer 503 store_unavailable", async () => {
    for (let i = 0; i < 4; i++) chat.enqueue("/chat/completions", { kind: "json", body: chatCompletion(`answer ${i}`) });
    let storedDone = 0;
    const stored = Array.from({ length: 3 }, () =>
      router.client.responses.create({ model: "local", input: "keep this" }).then(
        () => null,
        (e) => e,
      ).finally(() => storedDone++),
    );
    // Let the stored requests reach their WAITs.
    while (chat.requests.length < 3) await new Promise((r) => setTimeout(r, 10));
    const quick = await router.client.responses.create({ model: "local", input: "no store", store: false });
    expect(quick.output_text).toMatch(/^answer/);
    expect(storedDone).toBe(0);
    for (const err of await Promise.all(stored)) expect(err).toMatchObject({ status: 503, code: "store_unavailable" });
  });

  it("a conversation turn answered 503 is not left in the conversation: the client's retry does not find it there twice", async () => {
    const config = (durability: string) => ({
      server: { api_keys: [{ name: "team", key: "test-key" }] },
      endpoints: [{ name: "box", url: chat.url, kind: "chat" }],
      models: { local: { endpoints: ["box"] } },
      storage: { redis_url: redis.url, prefix: `rrdurable:${process.pid}:`, durability, durability_timeout: "300ms" },
    });
    // A fresh instance: its first write is made, then waits for a replica that never confirms it.
    const [plain, durable] = [await startTestRouter(config("primary"), { apiKey: "test-key" }), await startTestRouter(config("replica"), { apiKey: "test-key" })];
    try {
      const conv = await plain.client.conversations.create({ items: [{ type: "message", role: "user", content: "before" }] });
      chat.enqueue("/chat/completions", { kind: "json", body: chatCompletion("unconfirmed") });
      await expect(durable.client.responses.create({ model: "local", input: "the turn", conversation: conv.id })).rejects.toMatchObject({ status: 503, code: "store_unavailable" });
      const items = await plain.client.conversations.items.list(conv.id, { order: "asc" });
      expect(items.data.map((i) => (i as { content: { text: string }[] }).content[0]!.text)).toEqual(["before"]);
    } finally {
      await Promise.all([plain.close(200), durable.close(200)]);
    }
  });
});
