import { createOpenAI } from "@ai-sdk/openai";
import { generateText, streamText, type ModelMessage } from "ai";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chatCompletion, chatTextChunks, nativeEvents, nativeResponse, startMockUpstream, type MockUpstream } from "../helpers/mock-upstream.js";
import { startRedis, type RedisServerHandle } from "../helpers/redis-server.js";
import { startTestRouter, twoKindConfig, useTwoKindRouter, type TestRouter } from "../helpers/router.js";
import { finalResponse, WsClient } from "../helpers/ws-client.js";

/**
 * `item_reference` input items resolve against what the caller's key stored: the AI SDK's
 * default multi-turn (store on) sends earlier assistant turns (and reasoning) as references
 * with no previous_response_id. A miss is OpenAI's 404.
 */
const KEYS = { api_keys: [{ name: "team-a", key: "test-key" }, { name: "team-b", key: "key-b" }] };
const env = useTwoKindRouter({ server: KEYS, models: { local: { endpoints: ["box"], upstream_model: "llama3.1:8b" }, "gpt-4.1": { endpoints: ["oai"] }, "o4-mini": { endpoints: ["oai"] } } });

const aiProvider = (url = env.router.url) => createOpenAI({ baseURL: `${url}/v1`, apiKey: "test-key" });
const sse = (text: string) => ({ kind: "sse" as const, frames: [...chatTextChunks([text]), "data: [DONE]\n\n"] });
const NOT_PERSISTED = /^Item with id '([^']+)' not found\. Items are not persisted when `store` is set to false\. Try again with `store` set to true, or remove this item from your input\.$/;

describe("item_reference: the AI SDK's multi-turn (store on)", () => {
  it("kind: chat: the referenced assistant message reaches the backend as history", async () => {
    const provider = aiProvider();
    env.chat.enqueue("/chat/completions", { kind: "json", body: chatCompletion("Paris.") });
    const messages: ModelMessage[] = [{ role: "user", content: "Capital of France?" }];
    const t1 = await generateText({ model: provider.responses("local"), messages });
    expect(t1.text).toBe("Paris.");
    messages.push(...t1.response.messages, { role: "user", content: "And of Italy?" });

    env.chat.enqueue("/chat/completions", { kind: "sse", frames: [...chatTextChunks(["Ro", "me."]), "data: [DONE]\n\n"] });
    const t2 = streamText({ model: provider.responses("local"), messages });
    expect(await t2.text).toBe("Rome.");
    expect(env.chat.requests.at(-1)!.body.messages.map((m: any) => [m.role, m.content])).toEqual([
      ["user", "Capital of France?"],
      ["assistant", "Paris."],
      ["user", "And of Italy?"],
    ]);
  });

  it("kind: openai: reasoning and message references are sent upstream in full (upstream stores nothing)", async () => {
    const provider = aiProvider();
    const reasoning = { id: "rs_up1", type: "reasoning", summary: [{ type: "summary_text", text: "thinking" }], encrypted_content: "gAAAA-enc" };
    env.oai.enqueue("/responses", { kind: "json", body: nativeResponse("Paris.", "o4-mini", "resp_up_a1", [reasoning]) });
    const messages: ModelMessage[] = [{ role: "user", content: "Capital of France?" }];
    const t1 = await generateText({ model: provider.responses("o4-mini"), messages });
    messages.push(...t1.response.messages, { role: "user", content: "And of Italy?" });

    env.oai.enqueue("/responses", { kind: "sse", frames: nativeEvents(nativeResponse("Rome.", "o4-mini", "resp_up_a2")) });
    const t2 = streamText({ model: provider.responses("o4-mini"), messages });
    expect(await t2.text).toBe("Rome.");
    const sent = env.oai.requests.at(-1)!.body;
    expect(sent.store).toBe(false);
    expect(JSON.stringify(sent.input)).not.toContain("item_reference");
    expect(sent.input).toEqual([
      { role: "user", content: [{ type: "input_text", text: "Capital of France?" }] },
      { type: "reasoning", id: "rs_up1", summary: reasoning.summary, encrypted_content: "gAAAA-enc" },
      { type: "message", status: "completed", role: "assistant", content: [{ type: "output_text", text: "Paris.", annotations: [] }] },
      { role: "user", content: [{ type: "input_text", text: "And of Italy?" }] },
    ]);
  });
});

describe("item_reference: the openai SDK", () => {
  it("resolves input and output items of any stored response of the key, on both kinds", async () => {
    const c = env.router.client;
    env.chat.enqueue("/chat/completions", { kind: "json", body: chatCompletion("first answer", "m", { reasoning_content: "because" }) });
    const t1 = await c.responses.create({ model: "local", input: [{ type: "message", role: "user", content: "first question", id: "msg_client_q1" } as any] });
    const [rs, msg] = [t1.output.find((i) => i.type === "reasoning")!, t1.output.find((i) => i.type === "message")!];

    env.oai.enqueue("/responses", { kind: "json", body: nativeResponse("second answer") });
    await c.responses.create({ model: "gpt-4.1", input: [{ type: "item_reference", id: "msg_client_q1" }, { type: "item_reference", id: msg.id! }, { role: "user", content: "next" }] });
    expect(env.oai.requests.at(-1)!.body.input.map((i: any) => [i.role, JSON.stringify(i.content)])).toEqual([
      ["user", '"first question"'],
      ["assistant", JSON.stringify([{ type: "output_text", text: "first answer", annotations: [] }])],
      ["user", '"next"'],
    ]);

    env.chat.enqueue("/chat/completions", { kind: "json", body: chatCompletion("third answer") });
    await c.responses.create({ model: "local", input: [{ type: "item_reference", id: "msg_client_q1" }, { type: "item_reference", id: rs.id! }, { type: "item_reference", id: msg.id! }, { role: "user", content: "third" }] });
    expect(env.chat.requests.at(-1)!.body.messages).toEqual([
      { role: "user", content: "first question" },
      { role: "assistant", content: "first answer", reasoning_content: "because" },
      { role: "user", content: "third" },
    ]);
  });

  it("resolves items of a conversation of the key", async () => {
    const c = env.router.client;
    const conv = await c.conversations.create({ items: [{ type: "message", role: "user", content: "remember 42" }] });
    const [item] = (await c.conversations.items.list(conv.id)).data;
    env.chat.enqueue("/chat/completions", { kind: "json", body: chatCompletion("ok") });
    await c.responses.create({ model: "local", input: [{ type: "item_reference", id: item!.id! }, { role: "user", content: "what number?" }] });
    expect(env.chat.requests.at(-1)!.body.messages.map((m: any) => m.content)).toEqual(["remember 42", "what number?"]);
  });

  it("a miss, a store: false item and another key's item are OpenAI's 404 naming the id", async () => {
    const c = env.router.client;
    const miss = await c.responses.create({ model: "local", input: [{ type: "item_reference", id: "msg_nowhere" }] }).catch((e) => e);
    expect(miss).toBeInstanceOf(OpenAI.NotFoundError);
    expect(miss.error).toMatchObject({ type: "invalid_request_error", param: "input", code: null });
    expect(miss.error.message).toMatch(NOT_PERSISTED);
    expect(miss.error.message).toContain("'msg_nowhere'");
    expect(env.chat.requests).toHaveLength(0);

    env.chat.enqueue("/chat/completions", { kind: "json", body: chatCompletion("unstored") });
    const unstored = await c.responses.create({ model: "local", input: "x", store: false });
    await expect(c.responses.create({ model: "local", input: [{ type: "item_reference", id: unstored.output[0]!.id! }] })).rejects.toMatchObject({ status: 404 });

    env.chat.enqueue("/chat/completions", { kind: "json", body: chatCompletion("mine") });
    const mine = await c.responses.create({ model: "local", input: "x" });
    const other = new OpenAI({ baseURL: `${env.router.url}/v1`, apiKey: "key-b", maxRetries: 0 });
    const err = await other.responses.create({ model: "local", input: [{ type: "item_reference", id: mine.output[0]!.id! }] }).catch((e) => e);
    expect(err.status).toBe(404);
    expect(err.error.message).toMatch(NOT_PERSISTED);
  });
});

describe("item_reference over the WebSocket", () => {
  it("resolves an item of a store: false response of the same connection, and of a stored one", async () => {
    const ws = new WsClient(env.router.url);
    try {
      env.chat.enqueue("/chat/completions", sse("socket answer"));
      const t1 = finalResponse(await ws.create({ model: "local", input: "on the socket", store: false }));
      env.chat.enqueue("/chat/completions", sse("ok"));
      finalResponse(await ws.create({ model: "local", input: [{ type: "item_reference", id: t1.output[0].id }, { role: "user", content: "again" }], store: false }));
      expect(env.chat.requests.at(-1)!.body.messages.map((m: any) => m.content)).toEqual(["socket answer", "again"]);

      env.chat.enqueue("/chat/completions", { kind: "json", body: chatCompletion("stored answer") });
      const stored = await env.router.client.responses.create({ model: "local", input: "over http" });
      env.oai.enqueue("/responses", { kind: "sse", frames: nativeEvents(nativeResponse("ok")) });
      finalResponse(await ws.create({ model: "gpt-4.1", input: [{ type: "item_reference", id: stored.output[0]!.id! }, { role: "user", content: "go" }] }));
      expect(env.oai.requests.at(-1)!.body.input[0]).toMatchObject({ role: "assistant", content: [{ type: "output_text", text: "stored answer" }] });

      const [err] = await ws.create({ model: "local", input: [{ type: "item_reference", id: "msg_nowhere" }] });
      expect(err).toMatchObject({ type: "error", status: 404, error: { type: "invalid_request_error", param: "input", code: null } });
      expect(err!.error.message).toMatch(NOT_PERSISTED);
    } finally {
      ws.close();
    }
  });
});

describe("item_reference across instances (Redis)", () => {
  let redis: RedisServerHandle;
  let chat: MockUpstream;
  let oai: MockUpstream;
  const routers: TestRouter[] = [];
  beforeAll(async () => {
    [redis, chat, oai] = await Promise.all([startRedis(), startMockUpstream(), startMockUpstream()]);
    const cfg = twoKindConfig(chat.url, oai.url, { server: KEYS, storage: { redis_url: redis.url, prefix: `rrref:${process.pid}:` } });
    routers.push(await startTestRouter(cfg), await startTestRouter(cfg));
  }, 30_000);
  afterAll(async () => {
    await Promise.all(routers.map((r) => r.close(1000)));
    await Promise.all([chat?.close(), oai?.close(), redis?.stop()]);
  });

  it("an item stored through one instance is resolved by another (responses and conversations)", async () => {
    const [a, b] = routers as [TestRouter, TestRouter];
    chat.enqueue("/chat/completions", { kind: "json", body: chatCompletion("from instance a") });
    const messages: ModelMessage[] = [{ role: "user", content: "hi" }];
    const t1 = await generateText({ model: aiProvider(a.url).responses("local"), messages });
    messages.push(...t1.response.messages, { role: "user", content: "more" });
    chat.enqueue("/chat/completions", { kind: "json", body: chatCompletion("from instance b") });
    const t2 = await generateText({ model: aiProvider(b.url).responses("local"), messages });
    expect(t2.text).toBe("from instance b");
    expect(chat.requests.at(-1)!.body.messages.map((m: any) => m.content)).toEqual(["hi", "from instance a", "more"]);

    const conv = await a.client.conversations.create({ items: [{ type: "message", role: "user", content: "kept in a conversation" }] });
    const [item] = (await a.client.conversations.items.list(conv.id)).data;
    oai.enqueue("/responses", { kind: "json", body: nativeResponse("ok") });
    await b.client.responses.create({ model: "gpt-4.1", input: [{ type: "item_reference", id: item!.id! }] });
    expect(oai.requests.at(-1)!.body.input).toEqual([{ type: "message", role: "user", status: "completed", content: [{ type: "input_text", text: "kept in a conversation" }] }]);

    const other = new OpenAI({ baseURL: `${b.url}/v1`, apiKey: "key-b", maxRetries: 0 });
    await expect(other.responses.create({ model: "local", input: [{ type: "item_reference", id: item!.id! }] })).rejects.toMatchObject({ status: 404 });
  });
});
