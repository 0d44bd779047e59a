import OpenAI from "openai";
import type { ConversationItem } from "openai/resources/conversations/items";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { until } from "../helpers/background.js";
import { chatCompletion, chatTextChunks, nativeEvents, nativeResponse, startMockUpstream, type MockUpstream, type RecordedRequest, type Reply } from "../helpers/mock-upstream.js";
import { startRedis, type RedisServerHandle } from "../helpers/redis-server.js";
import { startTestRouter, twoKindConfig, type TestRouter } from "../helpers/router.js";

/** Text of a chat message or Responses input item, whatever its content shape. */
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((p: { text?: string }) => p.text ?? "").join("");
  return "";
}

/** Both mocks answer "re: <the last user text>", so every turn's answer names its question. */
function chatEcho(req: RecordedRequest): Reply {
  const messages = req.body.messages as { role: string; content: unknown }[];
  const text = `re: ${textOf(messages.filter((m) => m.role === "user").at(-1)?.content)}`;
  if (req.body.stream) return { kind: "sse", frames: [...chatTextChunks([text.slice(0, 3), text.slice(3)], req.body.model), "data: [DONE]\n\n"] };
  return { kind: "json", body: chatCompletion(text, req.body.model) };
}
function responsesEcho(req: RecordedRequest): Reply {
  const raw = req.body.input as string | { role?: string; content?: unknown }[];
  const input = typeof raw === "string" ? [{ role: "user", content: raw }] : raw;
  const resp = nativeResponse(`re: ${textOf(input.filter((i) => i.role === "user").at(-1)?.content)}`, req.body.model, `resp_up_${Math.random().toString(36).slice(2)}`);
  (resp.output[0] as { id: string }).id = `msg_up_${Math.random().toString(36).slice(2)}`; // OpenAI's item ids are unique
  return req.body.stream ? { kind: "sse", frames: nativeEvents(resp) } : { kind: "json", body: resp };
}

/** What the upstream was sent, as [role, text] pairs (system/developer left out). */
function seenByUpstream(req: RecordedRequest): string[] {
  const raw = (req.body.messages ?? req.body.input) as string | { role?: string; content?: unknown }[];
  const list = typeof raw === "string" ? [{ role: "user", content: raw }] : raw;
  return list.filter((m) => m.role === "user" || m.role === "assistant").map((m) => `${m.role}: ${textOf(m.content)}`);
}

function itemText(item: ConversationItem): string {
  return item.type === "message" ? `${item.role}: ${textOf(item.content)}` : item.type;
}

describe.each(["memory", "redis"] as const)("responses.create({ conversation }) (%s store)", (storeKind) => {
  let redis: RedisServerHandle | undefined;
  let chat: MockUpstream;
  let oai: MockUpstream;
  const routers: TestRouter[] = [];
  let client: OpenAI;

  const start = async (prefix: string) => {
    const storage = redis ? { redis_url: redis.url, prefix } : {};
    const r = await startTestRouter(
      { ...twoKindConfig(chat.url, oai.url), server: { api_keys: [{ name: "team-a", key: "key-a" }, { name: "team-b", key: "key-b" }] }, storage },
      { apiKey: "key-a" },
    );
    routers.push(r);
    return r;
  };

  beforeAll(async () => {
    if (storeKind === "redis") redis = await startRedis();
    chat = await startMockUpstream();
    oai = await startMockUpstream();
    chat.setDefault("/chat/completions", chatEcho);
    oai.setDefault("/responses", responsesEcho);
    client = (await start(`rrconvresp:${process.pid}:`)).client;
  });
  afterAll(async () => {
    await Promise.all(routers.map((r) => r.close(500)));
    await chat?.close();
    await oai?.close();
    await redis?.stop();
  });

  describe.each([
    { kind: "chat", model: "local" },
    { kind: "openai", model: "gpt-4.1" },
  ])("on a $kind backend", ({ kind, model }) => {
    const upstream = () => (kind === "chat" ? chat : oai);
    const lastSent = () => seenByUpstream(upstream().requests.at(-1)!);

    it("reads the conversation as history and appends each turn (JSON, then streamed)", async () => {
      const conv = await client.conversations.create({ items: [{ type: "message", role: "user", content: "My name is Ada." }] });
      const first = await client.responses.create({ model, input: "What is my name?", conversation: conv.id });
      expect(first.conversation).toEqual({ id: conv.id });
      expect(first.output_text).toBe("re: What is my name?");
      expect(lastSent()).toEqual(["user: My name is Ada.", "user: What is my name?"]);

      const stream = client.responses.stream({ model, input: "And again?", conversation: { id: conv.id } });
      const second = await stream.finalResponse();
      expect(second.conversation).toEqual({ id: conv.id });
      expect(lastSent()).toEqual(["user: My name is Ada.", "user: What is my name?", "assistant: re: What is my name?", "user: And again?"]);

      const items = (await client.conversations.items.list(conv.id, { order: "asc" })).data;
      expect(items.map(itemText)).toEqual(["user: My name is Ada.", "user: What is my name?", "assistant: re: What is my name?", "user: And again?", "assistant: re: And again?"]);
      // The output items are the response's own (same ids), and the input items got ids.
      expect(items[2]!.id).toBe(first.output[0]!.id);
      expect(items[4]!.id).toBe(second.output[0]!.id);
      expect(items[1]).toMatchObject({ id: expect.stringMatching(/^msg_/), status: "completed", content: [{ type: "input_text", text: "What is my name?" }] });
      // The stored response echoes the conversation too.
      expect((await client.responses.retrieve(second.id)).conversation).toEqual({ id: conv.id });
    });

    it("keeps item ids unique in the conversation when the backend repeats its ids, so paging and item routes work", async () => {
      // On openai endpoints the backend answers every turn with the same output item id (msg_up1);
      // the client sends its input item with the same id every turn.
      if (kind === "openai") for (const q of ["one", "two", "three"]) oai.enqueue("/responses", { kind: "json", body: nativeResponse(`re: ${q}`, model) });
      const conv = await client.conversations.create();
      const answers: string[] = [];
      for (const q of ["one", "two", "three"]) {
        const r = await client.responses.create({ model, input: [{ type: "message", role: "user", content: q, id: "msg_client_fixed" } as OpenAI.Responses.ResponseInputItem], conversation: conv.id });
        answers.push(r.output[0]!.id!);
      }
      const seen: ConversationItem[] = [];
      for await (const item of client.conversations.items.list(conv.id, { order: "asc", limit: 2 })) {
        seen.push(item);
        if (seen.length > 6) break; // a repeated id sends auto-paging round in circles
      }
      expect(seen.map(itemText)).toEqual(["user: one", "assistant: re: one", "user: two", "assistant: re: two", "user: three", "assistant: re: three"]);
      expect(new Set(seen.map((i) => i.id)).size).toBe(6);
      // The response names its output items by the ids the conversation keeps.
      expect([seen[1]!.id, seen[3]!.id, seen[5]!.id]).toEqual(answers);
      const last = seen[5]!;
      expect(itemText(await client.conversations.items.retrieve(last.id!, { conversation_id: conv.id }))).toBe("assistant: re: three");
      await client.conversations.items.delete(last.id!, { conversation_id: conv.id });
      expect((await client.conversations.items.list(conv.id, { order: "asc" })).data.map(itemText)).toEqual(seen.slice(0, 5).map(itemText));

      // A streamed turn's items went out with the backend's ids before the turn is appended:
      // the client keeps those ids, so the conversation, the stream and GET all agree on them.
      if (kind === "openai") oai.enqueue("/responses", { kind: "sse", frames: nativeEvents(nativeResponse("re: four", model)) });
      const streamed = await client.responses.stream({ model, input: "four", conversation: conv.id }).finalResponse();
      const tail = (await client.conversations.items.list(conv.id, { limit: 1 })).data[0]!;
      expect(tail.id).toBe(streamed.output[0]!.id);
      expect((await client.responses.retrieve(streamed.id)).output[0]!.id).toBe(streamed.output[0]!.id);
    });

    it("runs a background turn and appends it before the response is reported finished", async () => {
      const conv = await client.conversations.create();
      const queued = await client.responses.create({ model, input: "In the background?", conversation: conv.id, background: true });
      expect(queued.conversation).toEqual({ id: conv.id });
      const done = await until(async () => {
        const r = await client.responses.retrieve(queued.id);
        return r.status === "completed" ? r : null;
      }, "the background response");
      expect(done.conversation).toEqual({ id: conv.id });
      const items = (await client.conversations.items.list(conv.id, { order: "asc" })).data;
      expect(items.map(itemText)).toEqual(["user: In the background?", "assistant: re: In the background?"]);
    });

    it("answers 400 for previous_response_id with conversation, 404 for an unknown or foreign conversation", async () => {
      const conv = await client.conversations.create();
      const prev = await client.responses.create({ model, input: "hi" });
      const before = upstream().requests.length;
      await expect(client.responses.create({ model, input: "x", conversation: conv.id, previous_response_id: prev.id })).rejects.toMatchObject({
        status: 400,
        error: { message: "Mutually exclusive parameters. Ensure you are only providing one of: 'previous_response_id' or 'conversation'.", type: "invalid_request_error", param: null, code: "mutually_exclusive_parameters" },
      });
      await expect(client.responses.create({ model, input: "x", conversation: "conv_nope" })).rejects.toMatchObject({ status: 404, error: { param: "conversation" } });
      await expect(client.responses.create({ model, input: "x", conversation: "nope" })).rejects.toMatchObject({ status: 400, error: { param: "conversation" } });
      await expect(client.responses.create({ model, input: "x", conversation: { id: 5 } as never })).rejects.toMatchObject({ status: 400, error: { param: "conversation.id", code: "invalid_type" } });
      await expect(client.responses.create({ model, input: "x", conversation: {} as never })).rejects.toMatchObject({ status: 400, error: { param: "conversation.id", code: "missing_required_parameter" } });
      const other = new OpenAI({ baseURL: `${routers[0]!.url}/v1`, apiKey: "key-b", maxRetries: 0 });
      await expect(other.responses.create({ model, input: "x", conversation: conv.id })).rejects.toMatchObject({
        status: 404,
        error: { message: `Conversation with id '${conv.id}' not found.` },
      });
      expect(upstream().requests.length).toBe(before);
      expect((await client.conversations.items.list(conv.id)).data).toEqual([]);
    });

    it("appends with store: false too (the response itself is not kept)", async () => {
      const conv = await client.conversations.create();
      const r = await client.responses.create({ model, input: "unstored", conversation: conv.id, store: false });
      expect(r.conversation).toEqual({ id: conv.id });
      await expect(client.responses.retrieve(r.id)).rejects.toMatchObject({ status: 404 });
      const items = (await client.conversations.items.list(conv.id, { order: "asc" })).data;
      expect(items.map(itemText)).toEqual(["user: unstored", "assistant: re: unstored"]);
    });

    it("a response cache hit is appended like any turn and echoes its own conversation", async () => {
      const [one, two] = [await client.conversations.create(), await client.conversations.create()];
      const ask = (id: string) => client.responses.create({ model, input: "cached question", conversation: id, router: { cache: true } } as never);
      const before = upstream().requests.length;
      const first = (await ask(one.id)) as unknown as { conversation: unknown; output_text: string };
      const hit = (await ask(two.id)) as unknown as { conversation: unknown; output_text: string };
      expect(upstream().requests.length).toBe(before + 1);
      expect(first.conversation).toEqual({ id: one.id });
      expect(hit.conversation).toEqual({ id: two.id });
      expect(hit.output_text).toBe(first.output_text);
      const items = (await client.conversations.items.list(two.id, { order: "asc" })).data;
      expect(items.map(itemText)).toEqual(["user: cached question", "assistant: re: cached question"]);
    });

    it("a failed turn is not appended", async () => {
      const conv = await client.conversations.create();
      if (kind === "chat") chat.enqueue("/chat/completions", { kind: "sse", frames: [...chatTextChunks(["par"]).slice(0, 2)], dieAfter: 2 });
      else oai.enqueue("/responses", { kind: "sse", frames: nativeEvents(nativeResponse("partial")).slice(0, 3), dieAfter: 3 });
      const stream = await client.responses.create({ model, input: "break", conversation: conv.id, stream: true });
      let last = "";
      for await (const ev of stream) last = ev.type;
      expect(last).toBe("response.failed");
      expect((await client.conversations.items.list(conv.id)).data).toEqual([]);
    });
  });

  it.runIf(storeKind === "redis")("two instances share conversations; concurrent turns are never lost or interleaved", async () => {
    const b = await start(`rrconvresp:${process.pid}:`);
    const conv = await client.conversations.create();
    await client.responses.create({ model: "local", input: "turn on A", conversation: conv.id });
    await b.client.responses.create({ model: "local", input: "turn on B", conversation: conv.id });
    expect(seenByUpstream(chat.requests.at(-1)!)).toEqual(["user: turn on A", "assistant: re: turn on A", "user: turn on B"]);
    expect((await client.conversations.retrieve(conv.id)).id).toBe(conv.id);

    const turns = Array.from({ length: 12 }, (_, i) => ({ via: i % 2 === 0 ? client : b.client, text: `q${i}` }));
    await Promise.all(turns.map((t) => t.via.responses.create({ model: "local", input: t.text, conversation: conv.id, stream: t.text.endsWith("1") })));
    const items: ConversationItem[] = [];
    for await (const item of b.client.conversations.items.list(conv.id, { order: "asc", limit: 100 })) items.push(item);
    expect(items).toHaveLength(4 + 2 * turns.length);
    const texts = items.slice(4).map(itemText);
    for (let i = 0; i < texts.length; i += 2) {
      const q = texts[i]!.replace("user: ", "");
      expect(texts[i + 1]).toBe(`assistant: re: ${q}`);
    }
    expect(new Set(texts.filter((t) => t.startsWith("user: ")))).toEqual(new Set(turns.map((t) => `user: ${t.text}`)));
  });
});
