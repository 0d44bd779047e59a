import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMockUpstream, type MockUpstream } from "../helpers/mock-upstream.js";
import { startRedis, type RedisServerHandle } from "../helpers/redis-server.js";
import { startTestRouter, twoKindConfig, type TestRouter } from "../helpers/router.js";

/** The Conversations API through the openai SDK, on the memory store and on Redis. */
describe.each(["memory", "redis"] as const)("Conversations API (%s store)", (storeKind) => {
  let redis: RedisServerHandle | undefined;
  let chat: MockUpstream;
  let oai: MockUpstream;
  let router: TestRouter;
  let client: OpenAI;
  let other: OpenAI;

  beforeAll(async () => {
    if (storeKind === "redis") redis = await startRedis();
    chat = await startMockUpstream();
    oai = await startMockUpstream();
    const storage = redis ? { redis_url: redis.url, prefix: `rrconv:${process.pid}:` } : {};
    router = await startTestRouter(
      {
        ...twoKindConfig(chat.url, oai.url),
        server: { api_keys: [{ name: "team-a", key: "key-a" }, { name: "team-b", key: "key-b" }] },
        storage,
      },
      { apiKey: "key-a" },
    );
    client = router.client;
    other = new OpenAI({ baseURL: `${router.url}/v1`, apiKey: "key-b", maxRetries: 0 });
  });
  afterAll(async () => {
    await router?.close(500);
    await chat?.close();
    await oai?.close();
    await redis?.stop();
  });

  it("creates, retrieves, updates and deletes a conversation", async () => {
    const conv = await client.conversations.create({ metadata: { topic: "demo" } });
    expect(conv).toEqual({ id: expect.stringMatching(/^conv_[0-9a-f]{48}$/), object: "conversation", created_at: expect.any(Number), metadata: { topic: "demo" } });
    expect(Math.abs(conv.created_at - Date.now() / 1000)).toBeLessThan(60);
    expect(await client.conversations.retrieve(conv.id)).toEqual(conv);
    const updated = await client.conversations.update(conv.id, { metadata: { topic: "other", user: "u1" } });
    expect(updated).toEqual({ ...conv, metadata: { topic: "other", user: "u1" } });
    expect(await client.conversations.delete(conv.id)).toEqual({ id: conv.id, object: "conversation.deleted", deleted: true });
    await expect(client.conversations.retrieve(conv.id)).rejects.toMatchObject({ status: 404, error: { message: `Conversation with id '${conv.id}' not found.`, type: "invalid_request_error" } });
    await expect(client.conversations.delete(conv.id)).rejects.toMatchObject({ status: 404 });
  });

  it("creates without a body: empty metadata, no items", async () => {
    const conv = await client.conversations.create();
    expect(conv.metadata).toEqual({});
    const page = await client.conversations.items.list(conv.id);
    expect(page.data).toEqual([]);
    expect(page.has_more).toBe(false);
  });

  it("initial items and added items get ids, content parts and status, and list in both orders", async () => {
    const conv = await client.conversations.create({ items: [{ type: "message", role: "user", content: "Hello!" }] });
    const added = await client.conversations.items.create(conv.id, {
      items: [
        { type: "message", role: "assistant", content: [{ type: "output_text", text: "Hi there", annotations: [] }] } as never,
        { type: "function_call_output", call_id: "call_1", output: "42" },
      ],
    });
    expect(added.object).toBe("list");
    expect(added.has_more).toBe(false);
    expect(added.data).toHaveLength(2);
    expect(added.first_id).toBe(added.data[0]!.id);
    expect(added.last_id).toBe(added.data[1]!.id);
    expect(added.data[0]).toMatchObject({ id: expect.stringMatching(/^msg_/), type: "message", role: "assistant", status: "completed" });
    expect(added.data[1]).toMatchObject({ id: expect.stringMatching(/^fco_/), type: "function_call_output", call_id: "call_1", output: "42" });

    const desc = await client.conversations.items.list(conv.id);
    expect(desc.data.map((i) => i.type)).toEqual(["function_call_output", "message", "message"]);
    expect(desc.data[2]).toMatchObject({ type: "message", role: "user", status: "completed", content: [{ type: "input_text", text: "Hello!" }] });
    const asc = await client.conversations.items.list(conv.id, { order: "asc", limit: 2 });
    expect(asc.data.map((i) => i.id)).toEqual([desc.data[2]!.id, desc.data[1]!.id]);
    expect(asc.has_more).toBe(true);
    const next = await client.conversations.items.list(conv.id, { order: "asc", after: asc.data[1]!.id });
    expect(next.data.map((i) => i.id)).toEqual([desc.data[0]!.id]);
    expect(next.has_more).toBe(false);
    // The SDK's auto-pagination walks every page.
    const all: string[] = [];
    for await (const item of client.conversations.items.list(conv.id, { limit: 1 })) all.push(item.id!);
    expect(all).toEqual(desc.data.map((i) => i.id));

    const one = await client.conversations.items.retrieve(added.data[1]!.id!, { conversation_id: conv.id });
    expect(one).toEqual(added.data[1]);
    const after = await client.conversations.items.delete(added.data[1]!.id!, { conversation_id: conv.id });
    expect(after).toEqual(conv);
    await expect(client.conversations.items.retrieve(added.data[1]!.id!, { conversation_id: conv.id })).rejects.toMatchObject({ status: 404 });
    await expect(client.conversations.items.delete(added.data[1]!.id!, { conversation_id: conv.id })).rejects.toMatchObject({ status: 404 });
    expect((await client.conversations.items.list(conv.id)).data).toHaveLength(2);
  });

  it("keeps item ids unique when a client adds items with ids the conversation already holds (as the Agents SDK's session re-adds output items)", async () => {
    const item = { type: "message", role: "assistant", id: "msg_same", status: "completed", content: [{ type: "output_text", text: "one", annotations: [] }] } as OpenAI.Responses.ResponseInputItem;
    const conv = await client.conversations.create({ items: [item, item] });
    const added = await client.conversations.items.create(conv.id, { items: [item] });
    const ids: string[] = [];
    for await (const it of client.conversations.items.list(conv.id, { order: "asc", limit: 1 })) {
      ids.push(it.id!);
      if (ids.length > 3) break; // a repeated id sends auto-paging round in circles
    }
    expect(ids).toHaveLength(3);
    expect(new Set(ids).size).toBe(3);
    expect(ids[0]).toBe("msg_same");
    expect(added.data.map((i) => i.id)).toEqual([ids[2]]);
    await client.conversations.items.delete(ids[2]!, { conversation_id: conv.id });
    expect((await client.conversations.items.list(conv.id)).data.map((i) => i.id)).toEqual([ids[1], ids[0]]);
  });

  it("hides encrypted reasoning unless include asks for it", async () => {
    const conv = await client.conversations.create({
      items: [{ type: "reasoning", id: "rs_1", summary: [], encrypted_content: "secret-blob" } as never],
    });
    const plain = await client.conversations.items.list(conv.id);
    expect(plain.data[0]).not.toHaveProperty("encrypted_content");
    const withIt = await client.conversations.items.list(conv.id, { include: ["reasoning.encrypted_content"] });
    expect(withIt.data[0]).toMatchObject({ id: "rs_1", encrypted_content: "secret-blob" });
    await expect(client.conversations.items.list(conv.id, { include: ["nope" as never] })).rejects.toMatchObject({ status: 400, error: { param: "include" } });
  });

  it("another API key gets 404 for everything, exactly as for an unknown id", async () => {
    const conv = await client.conversations.create({ items: [{ type: "message", role: "user", content: "mine" }] });
    const [item] = (await client.conversations.items.list(conv.id)).data;
    const missing = { status: 404, error: { message: `Conversation with id '${conv.id}' not found.` } };
    await expect(other.conversations.retrieve(conv.id)).rejects.toMatchObject(missing);
    await expect(other.conversations.update(conv.id, { metadata: {} })).rejects.toMatchObject(missing);
    await expect(other.conversations.items.list(conv.id)).rejects.toMatchObject(missing);
    await expect(other.conversations.items.create(conv.id, { items: [{ type: "message", role: "user", content: "x" }] })).rejects.toMatchObject(missing);
    await expect(other.conversations.items.retrieve(item!.id!, { conversation_id: conv.id })).rejects.toMatchObject(missing);
    await expect(other.conversations.items.delete(item!.id!, { conversation_id: conv.id })).rejects.toMatchObject(missing);
    await expect(other.conversations.delete(conv.id)).rejects.toMatchObject(missing);
    expect((await client.conversations.items.list(conv.id)).data).toHaveLength(1);
  });

  it("rejects bad input with OpenAI-shaped 400s", async () => {
    await expect(client.conversations.retrieve("nope")).rejects.toMatchObject({
      status: 400,
      error: { message: "Invalid 'conversation_id': 'nope'. Expected an ID that begins with 'conv'.", param: "conversation_id", type: "invalid_request_error" },
    });
    const tooMany = Array.from({ length: 21 }, () => ({ type: "message" as const, role: "user" as const, content: "x" }));
    await expect(client.conversations.create({ items: tooMany })).rejects.toMatchObject({ status: 400, error: { param: "items", code: "array_above_max_length" } });
    await expect(client.conversations.create({ items: [{ type: "bogus" } as never] })).rejects.toMatchObject({ status: 400, error: { param: "items[0].type" } });
    await expect(client.conversations.create({ metadata: { k: 1 as never } })).rejects.toMatchObject({ status: 400, error: { param: "metadata.k" } });
    const conv = await client.conversations.create();
    await expect(client.conversations.update(conv.id, {} as never)).rejects.toMatchObject({ status: 400, error: { param: "metadata", code: "missing_required_parameter" } });
    await expect(client.conversations.items.create(conv.id, {} as never)).rejects.toMatchObject({ status: 400, error: { param: "items" } });
    await expect(client.conversations.items.list(conv.id, { after: "msg_unknown" })).rejects.toMatchObject({ status: 400, error: { param: "after" } });
    await expect(client.conversations.items.list(conv.id, { limit: 101 })).rejects.toMatchObject({ status: 400, error: { param: "limit" } });
    const res = await router.fetch("/v1/conversations", { method: "POST", headers: { authorization: "Bearer key-a", "content-type": "application/json" }, body: "{oops" });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("invalid_json");
    // A JSON body that is not an object is refused, `null` included (no body at all is an empty create).
    for (const body of ["null", "[]", "\"x\""]) {
      const bad = await router.fetch("/v1/conversations", { method: "POST", headers: { authorization: "Bearer key-a", "content-type": "application/json" }, body });
      expect(bad.status).toBe(400);
      expect(await bad.json()).toEqual({ error: { message: "The request body must be a JSON object.", type: "invalid_request_error", param: null, code: "invalid_type" } });
    }
  });

  it("needs a valid API key", async () => {
    const anon = new OpenAI({ baseURL: `${router.url}/v1`, apiKey: "wrong", maxRetries: 0 });
    await expect(anon.conversations.create()).rejects.toMatchObject({ status: 401 });
  });
});
