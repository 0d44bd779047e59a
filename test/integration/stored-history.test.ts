import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chatCompletion, nativeResponse, startMockUpstream, type MockUpstream, type RecordedRequest, type Reply } from "../helpers/mock-upstream.js";
import { startRedis, type RedisServerHandle } from "../helpers/redis-server.js";
import { startTestRouter, twoKindConfig, type TestRouter } from "../helpers/router.js";

/** A long chain through the routes: each item stored once, every reader of the history as before (both stores, two instances on Redis). */
const textOf = (content: unknown): string =>
  typeof content === "string" ? content : Array.isArray(content) ? content.map((p: { text?: string }) => p.text ?? "").join("") : "";

/** What the upstream was sent, as "role: text" (system left out). */
function seen(req: RecordedRequest): string[] {
  const raw = (req.body.messages ?? req.body.input) as string | { role?: string; content?: unknown }[];
  const list = typeof raw === "string" ? [{ role: "user", content: raw }] : raw;
  return list.filter((m) => m.role === "user" || m.role === "assistant").map((m) => `${m.role}: ${textOf(m.content)}`);
}

/** The last request either upstream took. */
let lastRequest: RecordedRequest | null = null;

function echo(req: RecordedRequest): Reply {
  lastRequest = req;
  const last = seen(req).filter((s) => s.startsWith("user: ")).at(-1)!.slice(6);
  if (req.body.messages) return { kind: "json", body: chatCompletion(`re: ${last}`, req.body.model) };
  const resp = nativeResponse(`re: ${last}`, req.body.model, `resp_up_${Math.random().toString(36).slice(2)}`);
  (resp.output[0] as { id: string }).id = `msg_up_${Math.random().toString(36).slice(2)}`;
  return { kind: "json", body: resp };
}

describe.each(["memory", "redis"] as const)("stored history, each item once (%s store)", (storeKind) => {
  let redis: RedisServerHandle | undefined;
  let chat: MockUpstream;
  let oai: MockUpstream;
  const routers: TestRouter[] = [];
  let a: OpenAI;
  let b: OpenAI;
  let other: OpenAI;
  const lastSeen = () => seen(lastRequest!);

  beforeAll(async () => {
    if (storeKind === "redis") redis = await startRedis();
    chat = await startMockUpstream();
    oai = await startMockUpstream();
    chat.setDefault("/chat/completions", echo);
    oai.setDefault("/responses", echo);
    const storage = redis ? { redis_url: redis.url, prefix: `rrhist:${process.pid}:` } : {};
    const config = { ...twoKindConfig(chat.url, oai.url), server: { api_keys: [{ name: "team-a", key: "key-a" }, { name: "team-b", key: "key-b" }] }, storage };
    const first = await startTestRouter(config, { apiKey: "key-a" });
    routers.push(first);
    a = first.client;
    // On Redis a second instance shares the store; in memory the same one serves both.
    const second = redis ? await startTestRouter(config, { apiKey: "key-a" }) : first;
    if (redis) routers.push(second);
    b = second.client;
    other = new OpenAI({ baseURL: `${first.url}/v1`, apiKey: "key-b", maxRetries: 0 });
  });
  afterAll(async () => {
    await Promise.all(routers.map((r) => r.close(500)));
    await chat?.close();
    await oai?.close();
    await redis?.stop();
  });

  it("a 60-turn chain across instances and backend kinds: every turn sees the whole history; forks, deletion, input_items and ownership behave as before", async () => {
    const ids: string[] = [];
    let prev: string | undefined;
    for (let i = 0; i < 60; i++) {
      const client = i % 2 === 0 ? a : b;
      const r = await client.responses.create({ model: i % 3 === 0 ? "gpt-4.1" : "local", input: `q${i}`, previous_response_id: prev });
      expect(r.output_text).toBe(`re: q${i}`);
      ids.push(r.id);
      prev = r.id;
    }
    const expected = (n: number) => Array.from({ length: n }, (_, i) => [`user: q${i}`, `assistant: re: q${i}`]).flat();
    expect(lastSeen()).toEqual([...expected(59), "user: q59"]);

    // input_items: paged both ways, the whole history of the last turn.
    const asc: string[] = [];
    for await (const item of a.responses.inputItems.list(ids[59]!, { order: "asc", limit: 7 })) asc.push(item.type === "message" ? `${item.role}: ${textOf(item.content)}` : item.type);
    expect(asc).toEqual([...expected(59), "user: q59"]);
    const page = await b.responses.inputItems.list(ids[59]!, { limit: 3 });
    expect(page.data.map((i) => (i.type === "message" ? textOf(i.content) : ""))).toEqual(["q59", "re: q58", "q58"]);

    // A fork of turn 30: it sees turn 30's history, not what came after.
    const fork = await b.responses.create({ model: "local", input: "fork", previous_response_id: ids[30] });
    expect(lastSeen()).toEqual([...expected(31), "user: fork"]);
    expect(fork.output_text).toBe("re: fork");

    // Deleting turn 20: it answers 404; turn 59 and the fork keep their whole history, and the chain goes on.
    await a.responses.delete(ids[20]!);
    await expect(b.responses.retrieve(ids[20]!)).rejects.toMatchObject({ status: 404 });
    await expect(b.responses.create({ model: "local", input: "x", previous_response_id: ids[20] })).rejects.toMatchObject({ status: 404 });
    const after = await b.responses.create({ model: "gpt-4.1", input: "q60", previous_response_id: ids[59] });
    expect(after.output_text).toBe("re: q60");
    expect(lastSeen()).toEqual([...expected(60), "user: q60"]);
    expect((await a.responses.inputItems.list(fork.id, { order: "asc", limit: 100 })).data).toHaveLength(63);

    // Another key: 404 as for an unknown id, everywhere.
    await expect(other.responses.retrieve(ids[40]!)).rejects.toMatchObject({ status: 404 });
    await expect(other.responses.inputItems.list(ids[40]!)).rejects.toMatchObject({ status: 404 });
    await expect(other.responses.create({ model: "local", input: "x", previous_response_id: ids[40] })).rejects.toMatchObject({ status: 404 });
  }, 120_000);

  it("a store: false child of a stored parent stores nothing and sees the whole history", async () => {
    const root = await a.responses.create({ model: "local", input: "r0" });
    const mid = await b.responses.create({ model: "local", input: "r1", previous_response_id: root.id });
    const unstored = await a.responses.create({ model: "local", input: "r2", previous_response_id: mid.id, store: false });
    expect(lastSeen()).toEqual(["user: r0", "assistant: re: r0", "user: r1", "assistant: re: r1", "user: r2"]);
    await expect(b.responses.retrieve(unstored.id)).rejects.toMatchObject({ status: 404 });
  });
});
