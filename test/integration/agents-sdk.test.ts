import { Agent, OpenAIConversationsSession, OpenAIResponsesModel, run, setTracingDisabled, tool } from "@openai/agents";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { chatChunk, chatCompletion, chatTextChunks, chatToolCallChunks, nativeEvents, nativeResponse, type RecordedRequest, type Reply } from "../helpers/mock-upstream.js";
import { startRedis } from "../helpers/redis-server.js";
import { useTwoKindRouter } from "../helpers/router.js";

/**
 * The OpenAI Agents SDK as a real client: an Agent with a function tool runs a
 * two-step tool loop (model calls the tool -> tool result -> final answer) through
 * the router's /v1/responses, streamed and not, on both backend kinds.
 */
const redis = await startRedis();
afterAll(() => redis.stop());
const env = useTwoKindRouter();
/** The same router on Redis, for the conversation tests (state in the shared store). */
const redisEnv = useTwoKindRouter({ storage: { redis_url: redis.url, prefix: `rragents:${process.pid}:` } });

/** The chat backend: a tool call while no tool result is in the conversation, then an answer quoting it. */
function chatBackend(req: RecordedRequest): Reply {
  const messages = req.body.messages as { role: string; content: unknown }[];
  const result = messages.find((m) => m.role === "tool");
  if (!result) {
    if (req.body.stream) return { kind: "sse", frames: [chatChunk({ role: "assistant", content: null }), ...chatToolCallChunks([{ id: "call_7", name: "get_weather", args: ['{"city":', '"Oslo"}'] }])] };
    const call = { id: "call_7", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } };
    return { kind: "json", body: chatCompletion(null, req.body.model, { tool_calls: [call] }) };
  }
  const text = `Oslo: ${String(result.content)}`;
  if (req.body.stream) return { kind: "sse", frames: [...chatTextChunks([text.slice(0, 6), text.slice(6)], req.body.model), "data: [DONE]\n\n"] };
  return { kind: "json", body: chatCompletion(text, req.body.model) };
}

/** The OpenAI backend: a function_call item, then (given its output) a message. */
function responsesBackend(req: RecordedRequest): Reply {
  const input = req.body.input as { type?: string; output?: unknown }[];
  const result = input.find((i) => i.type === "function_call_output");
  const resp = result
    ? nativeResponse(`Oslo: ${String(result.output)}`, req.body.model, "resp_up2")
    : { ...nativeResponse("", req.body.model, "resp_up1"), output: [{ id: "fc_up1", type: "function_call", status: "completed", call_id: "call_9", name: "get_weather", arguments: '{"city":"Oslo"}' }] };
  return req.body.stream ? { kind: "sse", frames: nativeEvents(resp as ReturnType<typeof nativeResponse>) } : { kind: "json", body: resp };
}

beforeAll(() => {
  setTracingDisabled(true);
  for (const e of [env, redisEnv]) {
    e.chat.setDefault("/chat/completions", chatBackend);
    e.oai.setDefault("/responses", responsesBackend);
  }
});

function weatherAgent(model: string, calls: string[], client = env.router.client) {
  const getWeather = tool({
    name: "get_weather",
    description: "Current weather for a city",
    parameters: z.object({ city: z.string() }),
    execute: async ({ city }) => {
      calls.push(city);
      return "light snow, -3C";
    },
  });
  return new Agent({ name: "Weather", instructions: "Answer with the weather.", model: new OpenAIResponsesModel(client, model), tools: [getWeather] });
}

describe.each([
  { kind: "chat", model: "local" },
  { kind: "openai", model: "gpt-4.1" },
])("Agents SDK tool loop on a $kind backend", ({ kind, model }) => {
  const upstreamCalls = () => (kind === "chat" ? env.chat : env.oai).requests;

  it("finishes the loop without streaming", async () => {
    const calls: string[] = [];
    const result = await run(weatherAgent(model, calls), "Weather in Oslo?");
    expect(calls).toEqual(["Oslo"]);
    expect(result.finalOutput).toBe("Oslo: light snow, -3C");
    expect(upstreamCalls()).toHaveLength(2);
    expect(result.newItems.map((i) => i.type)).toEqual(["tool_call_item", "tool_call_output_item", "message_output_item"]);
    expect(result.lastResponseId).toMatch(/^resp_/);
  });

  it("finishes the loop streaming, with text deltas on the way", async () => {
    const calls: string[] = [];
    const result = await run(weatherAgent(model, calls), "Weather in Oslo?", { stream: true });
    let deltas = "";
    for await (const ev of result) {
      if (ev.type === "raw_model_stream_event" && ev.data.type === "output_text_delta") deltas += ev.data.delta;
    }
    await result.completed;
    expect(result.error).toBeNull();
    expect(calls).toEqual(["Oslo"]);
    expect(result.finalOutput).toBe("Oslo: light snow, -3C");
    expect(deltas).toBe("Oslo: light snow, -3C");
    const sent = upstreamCalls();
    expect(sent).toHaveLength(2);
    expect(sent.every((r) => r.body.stream === true)).toBe(true);
    if (kind === "chat") {
      // The tool result came back to the chat backend as a tool message for the right call.
      expect(sent[1]!.body.messages.find((m: { role: string }) => m.role === "tool")).toEqual({ role: "tool", tool_call_id: "call_7", content: "light snow, -3C" });
    } else {
      expect(sent[1]!.body.input.find((i: { type?: string }) => i.type === "function_call_output")).toMatchObject({ call_id: "call_9", output: "light snow, -3C" });
      expect(sent.every((r) => r.body.store === false)).toBe(true);
    }
  });
});

describe.each([
  { kind: "chat", model: "local", store: "memory" },
  { kind: "openai", model: "gpt-4.1", store: "memory" },
  { kind: "chat", model: "local", store: "redis" },
  { kind: "openai", model: "gpt-4.1", store: "redis" },
])("Agents SDK with the router's conversations on a $kind backend ($store store)", ({ kind, model, store }) => {
  const e = store === "redis" ? redisEnv : env;
  const upstreamCalls = () => (kind === "chat" ? e.chat : e.oai).requests;
  let client: typeof env.router.client;
  beforeAll(() => {
    client = e.router.client;
  });

  it("keeps a two-turn tool loop in an OpenAIConversationsSession (the Conversations API through the router)", async () => {
    const calls: string[] = [];
    const session = new OpenAIConversationsSession({ client: client });
    const agent = weatherAgent(model, calls, client);
    const first = await run(agent, "Weather in Oslo?", { session });
    expect(first.finalOutput).toBe("Oslo: light snow, -3C");
    const second = await run(agent, "And tomorrow?", { session, stream: true });
    for await (const _ of second) {
      // drain
    }
    await second.completed;
    expect(second.finalOutput).toBe("Oslo: light snow, -3C");
    expect(calls).toEqual(["Oslo"]);
    // The session's conversation holds both turns, tool call and output included.
    const convId = await session.getSessionId();
    const items = (await client.conversations.items.list(convId, { order: "asc", limit: 100 })).data;
    expect(items.map((i) => i.type)).toEqual(["message", "function_call", "function_call_output", "message", "message", "message"]);
    expect(await session.getItems()).toHaveLength(6);
    // The second turn's model call saw the first turn, read back from the conversation.
    const sent = upstreamCalls().at(-1)!;
    expect(JSON.stringify(kind === "chat" ? sent.body.messages : sent.body.input)).toContain("Weather in Oslo?");
    await session.clearSession();
    await expect(client.conversations.retrieve(convId)).rejects.toMatchObject({ status: 404 });
  });

  it("runs the tool loop on a conversation the router keeps (run option conversationId)", async () => {
    const calls: string[] = [];
    const conv = await client.conversations.create();
    const result = await run(weatherAgent(model, calls, client), "Weather in Oslo?", { conversationId: conv.id });
    expect(result.finalOutput).toBe("Oslo: light snow, -3C");
    expect(calls).toEqual(["Oslo"]);
    const items = (await client.conversations.items.list(conv.id, { order: "asc" })).data;
    expect(items.map((i) => i.type)).toEqual(["message", "function_call", "function_call_output", "message"]);
    // The second model call sent only the tool output; the router replayed the rest from the conversation.
    const sent = upstreamCalls().at(-1)!;
    expect(JSON.stringify(kind === "chat" ? sent.body.messages : sent.body.input)).toContain("Weather in Oslo?");
  });
});
