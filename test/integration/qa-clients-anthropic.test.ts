/**
 * Real clients across the three kinds, the way a user combines them: the AI SDK's default
 * store: true multi-turn (item_reference) with reasoning on anthropic and chat, LangChain and the
 * Agents SDK multi-turn with tools on anthropic, the openai SDK's stream / compact / conversations
 * on anthropic, and a fallback from anthropic to chat mid-conversation.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { message, messageReply, sentMessages, startAnthropicMock, textBlock, thinkingBlock, toolUseBlock, anthropicError } from "../helpers/anthropic-mock.js";
import { chatBackend, REASONING } from "../helpers/client-backends.js";
import { chatCompletion, startMockUpstream, type MockUpstream, type RecordedRequest, type Reply } from "../helpers/mock-upstream.js";
import { startTestRouter, type TestRouter } from "../helpers/router.js";

const SIG = "EqQBCkgIARAB/qa+clients+sig==";
const THINKING = "Need the weather tool for Oslo.";
let ant: MockUpstream;
let chat: MockUpstream;
let router: TestRouter;

/**
 * Thinking (when asked for, as Anthropic) + a tool call while no tool result is in the
 * conversation, then an answer quoting the result; without tools, "Claude: <last user text>".
 */
function anthropicBackend(req: RecordedRequest): Reply {
  const think = (text: string) => (req.body.thinking?.type === "enabled" ? [thinkingBlock(text, SIG)] : []);
  const messages = req.body.messages as { role: string; content: { type: string; content?: unknown }[] | string }[];
  const blocks = messages.flatMap((m) => (typeof m.content === "string" ? [] : m.content));
  const result = blocks.filter((b) => b.type === "tool_result").at(-1);
  const hasTool = ((req.body.tools ?? []) as { name: string }[]).some((t) => t.name === "get_weather");
  if (hasTool && !result)
    return messageReply(message([...think(THINKING), toolUseBlock("toolu_qa1", "get_weather", { city: "Oslo" })], { stop_reason: "tool_use" }), req);
  if (result) return messageReply(message([textBlock(`Oslo: ${typeof result.content === "string" ? result.content : JSON.stringify(result.content)}`)]), req);
  const last = messages.at(-1)!;
  const text = typeof last.content === "string" ? last.content : ((last.content as { type: string; text?: string }[]).filter((b) => b.type === "text").at(-1)?.text ?? "");
  return messageReply(message([...think(`Thinking about ${text}`), textBlock(`Claude: ${text}`)]), req);
}

beforeAll(async () => {
  ant = await startAnthropicMock();
  ant.setDefault("/messages", anthropicBackend);
  chat = await startMockUpstream();
  chat.setDefault("/chat/completions", chatBackend);
  router = await startTestRouter({
    endpoints: [
      { name: "claude-ep", url: ant.url, kind: "anthropic", api_key: "sk-ant-test-0123456789" },
      { name: "box", url: chat.url, kind: "chat" },
    ],
    models: {
      claude: { endpoints: ["claude-ep"], upstream_model: "claude-up" },
      local: { endpoints: ["box"], upstream_model: "llama3.1:8b" },
      "claude-or-local": { endpoints: ["claude-ep"], upstream_model: "claude-up", fallbacks: ["local"] },
      mix: { endpoints: [{ name: "claude-ep", upstream_model: "claude-up" }, { name: "box", upstream_model: "llama3.1:8b" }] },
    },
    routing: { retry: { attempts: 2, max_time: "2s" }, health: { failure_threshold: 100, cooldown: "100ms" } },
  });
});
afterAll(async () => {
  await router?.close(1000);
  await ant?.close();
  await chat?.close();
});
beforeEach(() => {
  ant.requests.length = 0;
  chat.requests.length = 0;
  ant.setDefault("/messages", anthropicBackend);
});

const weatherAi = async (calls: string[]) => {
  const { tool } = await import("ai");
  return tool({
    description: "Current weather for a city",
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }: { city: string }) => {
      calls.push(city);
      return "light snow";
    },
  });
};

describe("AI SDK, default store: true (item_reference) with reasoning", () => {
  const sentBodies: unknown[] = [];
  /** The AI SDK's provider, its request bodies recorded so a test can see the item_references it sent. */
  const aiProvider = async () => {
    const { createOpenAI } = await import("@ai-sdk/openai");
    return createOpenAI({
      baseURL: `${router.url}/v1`,
      apiKey: "test-key",
      fetch: async (url, init) => {
        if (typeof init?.body === "string") sentBodies.push(JSON.parse(init.body));
        return fetch(url, init);
      },
    });
  };
  const reasoningOpts = { openai: { reasoningEffort: "low", reasoningSummary: "auto", forceReasoning: true } };

  it("anthropic: a tool loop whose second step references the signed thinking by id sends it back byte for byte", async () => {
    const { generateText, stepCountIs } = await import("ai");
    const openai = await aiProvider();
    const calls: string[] = [];
    const r = await generateText({ model: openai.responses("claude"), prompt: "Weather in Oslo?", tools: { get_weather: await weatherAi(calls) }, stopWhen: stepCountIs(3), providerOptions: reasoningOpts });
    expect(calls).toEqual(["Oslo"]);
    expect(r.text).toBe("Oslo: light snow");
    const sent = sentMessages(ant);
    expect(sent).toHaveLength(2);
    const assistant = sent[1].messages.find((m: { role: string }) => m.role === "assistant");
    expect(assistant.content[0]).toEqual({ type: "thinking", thinking: THINKING, signature: SIG });
    expect(assistant.content[1]).toMatchObject({ type: "tool_use", id: "toolu_qa1", name: "get_weather" });
    expect(sent[1].thinking?.type).toBe("enabled");
    expect(JSON.stringify(sentBodies.at(-1))).toContain("item_reference");
  });

  it("anthropic: streamText, then a second turn from response.messages (item_reference), keeps the thinking signed", async () => {
    const { streamText, generateText } = await import("ai");
    const openai = await aiProvider();
    const s = streamText({ model: openai.responses("claude"), prompt: "hello", providerOptions: reasoningOpts });
    expect(await s.text).toBe("Claude: hello");
    expect(await s.reasoningText).toBe("Thinking about hello");
    const msgs = (await s.response).messages;
    const second = await generateText({ model: openai.responses("claude"), messages: [{ role: "user", content: "hello" }, ...msgs, { role: "user", content: "again" }], providerOptions: reasoningOpts });
    expect(second.text).toBe("Claude: again");
    const last = sentMessages(ant).at(-1);
    const assistant = last.messages.find((m: { role: string }) => m.role === "assistant");
    expect(assistant.content[0]).toEqual({ type: "thinking", thinking: "Thinking about hello", signature: SIG });
    expect(assistant.content[1]).toMatchObject({ type: "text", text: "Claude: hello" });
    expect(JSON.stringify(sentBodies.at(-1))).toContain("item_reference");
  });

  it("anthropic with store: false: the SDK sends the encrypted reasoning back itself, streamed", async () => {
    const { streamText, stepCountIs } = await import("ai");
    const openai = await aiProvider();
    const calls: string[] = [];
    const s = streamText({ model: openai.responses("claude"), prompt: "Weather in Oslo?", tools: { get_weather: await weatherAi(calls) }, stopWhen: stepCountIs(3), providerOptions: { openai: { ...reasoningOpts.openai, store: false } } });
    expect(await s.text).toBe("Oslo: light snow");
    const body = JSON.stringify(sentBodies.at(-1));
    expect(body).not.toContain("item_reference");
    expect(body).toContain("anthropic.");
    const assistant = sentMessages(ant)[1].messages.find((m: { role: string }) => m.role === "assistant");
    expect(assistant.content[0]).toEqual({ type: "thinking", thinking: THINKING, signature: SIG });
  });

  it("chat: a tool loop with reasoning over item_reference answers", async () => {
    const { generateText, stepCountIs } = await import("ai");
    const openai = await aiProvider();
    const calls: string[] = [];
    const r = await generateText({ model: openai.responses("local"), prompt: "Weather in Oslo?", tools: { get_weather: await weatherAi(calls) }, stopWhen: stepCountIs(3), providerOptions: reasoningOpts });
    expect(calls).toEqual(["Oslo"]);
    expect(r.text).toBe("Result: light snow");
    expect(r.steps[0].reasoningText).toBe(REASONING);
    const msgs = chat.requests.at(-1)!.body.messages;
    expect(msgs.at(-1)).toEqual({ role: "tool", tool_call_id: "call_w1", content: "light snow" });
    expect(msgs.at(-2).tool_calls[0]).toMatchObject({ id: "call_w1" });
  });
});

describe("LangChain multi-turn with tools on anthropic", () => {
  const weatherTool = {
    type: "function" as const,
    function: { name: "get_weather", description: "Current weather for a city", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } },
  };
  for (const streaming of [false, true]) {
    it(`a tool round trip over two turns, then a third turn (${streaming ? "streamed" : "invoke"})`, async () => {
      const { ChatOpenAI } = await import("@langchain/openai");
      const { HumanMessage, ToolMessage } = await import("@langchain/core/messages");
      const llm = new ChatOpenAI({ model: "claude", apiKey: "test-key", useResponsesApi: true, maxRetries: 0, streaming, configuration: { baseURL: `${router.url}/v1` } }).bindTools([weatherTool]);
      const history: any[] = [new HumanMessage("Weather in Oslo?")];
      const first = await llm.invoke(history);
      expect(first.tool_calls).toHaveLength(1);
      expect(first.tool_calls![0]).toMatchObject({ name: "get_weather", args: { city: "Oslo" }, id: "toolu_qa1" });
      history.push(first, new ToolMessage({ content: "light snow", tool_call_id: "toolu_qa1" }));
      const second = await llm.invoke(history);
      expect(second.text).toBe("Oslo: light snow");
      history.push(second, new HumanMessage("Thanks"));
      const third = await llm.invoke(history);
      expect(third.text).toBe("Oslo: light snow");
      const sent = sentMessages(ant);
      expect(sent).toHaveLength(3);
      expect(sent[1].messages.at(-1).content[0]).toEqual({ type: "tool_result", tool_use_id: "toolu_qa1", content: "light snow" });
      expect(sent[2].messages.map((m: { role: string }) => m.role)).toEqual(["user", "assistant", "user", "assistant", "user"]);
    });
  }
});

describe("the openai SDK on anthropic: stream, compact, conversations", () => {
  it("responses.stream gives the SDK's final response with reasoning and text", async () => {
    const stream = router.client.responses.stream({ model: "claude", input: "hello", reasoning: { effort: "low" }, include: ["reasoning.encrypted_content"] });
    const deltas: string[] = [];
    stream.on("response.output_text.delta", (e) => deltas.push(e.delta));
    const final = await stream.finalResponse();
    expect(final.status).toBe("completed");
    expect(final.output_text).toBe("Claude: hello");
    expect(deltas.join("")).toBe("Claude: hello");
    const reasoning = final.output.find((o) => o.type === "reasoning")!;
    expect(reasoning.type === "reasoning" && reasoning.encrypted_content).toMatch(/^anthropic\./);
    const next = await router.client.responses.create({ model: "claude", input: "again", previous_response_id: final.id, reasoning: { effort: "low" } });
    expect(next.output_text).toBe("Claude: again");
    const assistant = sentMessages(ant).at(-1).messages.find((m: { role: string }) => m.role === "assistant");
    expect(assistant.content[0]).toEqual({ type: "thinking", thinking: "Thinking about hello", signature: SIG });
  });

  it("include reasoning.encrypted_content on retrieval returns the signed block", async () => {
    const r = await router.client.responses.create({ model: "claude", input: "hello", reasoning: { effort: "low" } });
    const plain = r.output.find((o) => o.type === "reasoning") as { encrypted_content?: string | null };
    expect(plain.encrypted_content ?? null).toBeNull();
    const got = await router.client.responses.retrieve(r.id, { include: ["reasoning.encrypted_content"] });
    const item = got.output.find((o) => o.type === "reasoning") as { encrypted_content?: string | null };
    expect(item.encrypted_content).toMatch(/^anthropic\./);
    const again = await router.client.responses.retrieve(r.id);
    expect((again.output.find((o) => o.type === "reasoning") as { encrypted_content?: string | null }).encrypted_content ?? null).toBeNull();
    const items = await router.client.responses.inputItems.list(r.id);
    expect(items.data.length).toBeGreaterThan(0);
  });

  it("responses.compact on a stored anthropic chain, then a turn over the compacted window", async () => {
    const first = await router.client.responses.create({ model: "claude", input: "hello" });
    const compacted = await router.client.responses.compact({ model: "claude", previous_response_id: first.id });
    expect(compacted.object).toBe("response.compaction");
    expect(compacted.output.length).toBeGreaterThan(0);
    const next = await router.client.responses.create({ model: "claude", input: [...(compacted.output as any[]), { role: "user", content: "again" }] });
    expect(next.output_text).toBe("Claude: again");
    sentMessages(ant);
  });

  it("conversations: two turns on anthropic keep the history, items list shows both turns", async () => {
    const conv = await router.client.conversations.create({ items: [{ type: "message", role: "user", content: "hello" }] });
    const t1 = await router.client.responses.create({ model: "claude", conversation: conv.id, input: [] as any, reasoning: { effort: "low" } });
    expect(t1.output_text).toBe("Claude: hello");
    const t2 = await router.client.responses.create({ model: "claude", conversation: conv.id, input: "again", reasoning: { effort: "low" } });
    expect(t2.output_text).toBe("Claude: again");
    const assistant = sentMessages(ant).at(-1).messages.find((m: { role: string }) => m.role === "assistant");
    expect(assistant.content[0]).toEqual({ type: "thinking", thinking: "Thinking about hello", signature: SIG });
    const items = await router.client.conversations.items.list(conv.id, { order: "asc" });
    const types = items.data.map((i) => i.type);
    expect(types.filter((t) => t === "message")).toHaveLength(4);
  });
});

describe("Agents SDK multi-turn with function tools, anthropic and chat, and a fallback mid-conversation", () => {
  async function agentFor(model: string, calls: string[], reasoning = true) {
    const { Agent, OpenAIResponsesModel, tool, setTracingDisabled } = await import("@openai/agents");
    setTracingDisabled(true);
    const getWeather = tool({
      name: "get_weather",
      description: "Current weather for a city",
      parameters: z.object({ city: z.string() }),
      execute: async ({ city }) => {
        calls.push(city);
        return "light snow";
      },
    });
    return new Agent({
      name: "Weather",
      instructions: "Answer with the weather.",
      model: new OpenAIResponsesModel(router.client, model),
      tools: [getWeather],
      ...(reasoning ? { modelSettings: { reasoning: { effort: "low" as const }, providerData: { include: ["reasoning.encrypted_content"] } } } : {}),
    });
  }

  for (const { model, stream } of [
    { model: "claude", stream: false },
    { model: "claude", stream: true },
    { model: "local", stream: false },
    { model: "local", stream: true },
  ]) {
    it(`${model}: two runs, the second on the first's history (${stream ? "streamed" : "not streamed"})`, async () => {
      const { run } = await import("@openai/agents");
      const calls: string[] = [];
      const agent = await agentFor(model, calls);
      const go = async (input: any) => {
        if (!stream) return run(agent, input);
        const r = await run(agent, input, { stream: true });
        for await (const _ of r) void _;
        await r.completed;
        expect(r.error).toBeNull();
        return r;
      };
      const first = await go("Weather in Oslo?");
      const expected = model === "claude" ? "Oslo: light snow" : "Result: light snow";
      expect(first.finalOutput).toBe(expected);
      const second = await go([...first.history, { role: "user", content: "And tomorrow?" }]);
      // The chat mock calls the tool again on every new user turn; the anthropic mock answers from the result it has.
      expect(second.finalOutput).toBe(expected);
      expect(calls).toEqual(model === "claude" ? ["Oslo"] : ["Oslo", "Oslo"]);
      if (model === "claude") {
        const sent = sentMessages(ant);
        const assistant = sent.at(-1).messages.find((m: { role: string }) => m.role === "assistant");
        expect(assistant.content[0]).toEqual({ type: "thinking", thinking: THINKING, signature: SIG });
      }
    });
  }

  it("a fallback from anthropic to chat mid-conversation, then back to anthropic", async () => {
    const { run } = await import("@openai/agents");
    const calls: string[] = [];
    const agent = await agentFor("claude-or-local", calls);
    // Turn 1 step 1 on anthropic (thinking + tool call); step 2 Anthropic is overloaded: chat serves it.
    let n = 0;
    ant.setDefault("/messages", (req) => (++n === 1 ? anthropicBackend(req) : anthropicError(529, "overloaded_error", "Overloaded")));
    const first = await run(agent, "Weather in Oslo?");
    expect(calls).toEqual(["Oslo"]);
    expect(first.finalOutput).toBe("Result: light snow");
    const chatReq = chat.requests.at(-1)!.body;
    expect(chatReq.messages.at(-1)).toEqual({ role: "tool", tool_call_id: "toolu_qa1", content: "light snow" });
    expect(JSON.stringify(chatReq)).not.toContain("anthropic.");
    // Anthropic is back: the next run carries the chat turn's items and the anthropic thinking.
    ant.setDefault("/messages", anthropicBackend);
    ant.requests.length = 0;
    const second = await run(agent, [...first.history, { role: "user", content: "Thanks" }]);
    expect(second.finalOutput).toBe("Oslo: light snow");
    const sent = sentMessages(ant);
    expect(sent).toHaveLength(1);
    const assistants = sent[0].messages.filter((m: { role: string }) => m.role === "assistant");
    expect(assistants[0].content[0]).toEqual({ type: "thinking", thinking: THINKING, signature: SIG });
  });
});

describe("models metadata, input_tokens and truncation across the kinds", () => {
  let r2: TestRouter;
  let oai: MockUpstream;
  beforeAll(async () => {
    oai = await startMockUpstream();
    const { responsesBackend } = await import("../helpers/client-backends.js");
    oai.setDefault("/responses", responsesBackend);
    oai.setDefault("/responses/input_tokens", { kind: "json", body: { object: "response.input_tokens", input_tokens: 77 } });
    r2 = await startTestRouter({
      endpoints: [
        { name: "claude-ep", url: ant.url, kind: "anthropic", api_key: "sk-ant-test-0123456789" },
        { name: "box", url: chat.url, kind: "chat" },
        { name: "oai", url: oai.url, kind: "openai", api_key: "sk-upstream-secret-0123456789" },
      ],
      models: {
        claude: { endpoints: ["claude-ep"], upstream_model: "claude-up", context_window: 120, max_output_tokens: 4096, reasoning: true, input_modalities: ["text", "image", "file"] },
        local: { endpoints: ["box"], upstream_model: "llama3.1:8b", context_window: 120 },
        "gpt-4.1": { endpoints: ["oai"], context_window: 120 },
      },
    });
  });
  afterAll(async () => {
    await r2?.close(500);
    await oai?.close();
  });

  it("GET /v1/models tells the anthropic model's metadata", async () => {
    const list = await r2.client.models.list();
    const claude = list.data.find((m) => m.id === "claude") as any;
    expect(claude).toMatchObject({ id: "claude", object: "model" });
    expect(claude.context_window).toBe(120);
    expect(claude.max_output_tokens).toBe(4096);
    const one = (await r2.client.models.retrieve("claude")) as any;
    expect(one.context_window).toBe(120);
  });

  it("input_tokens on anthropic counts the chain (count_tokens gets the history with its signed thinking)", async () => {
    const first = await r2.client.responses.create({ model: "claude", input: "hi", reasoning: { effort: "low" } });
    const res = await r2.fetch("/v1/responses/input_tokens", {
      method: "POST",
      headers: { authorization: "Bearer test-key", "content-type": "application/json" },
      body: JSON.stringify({ model: "claude", input: "again", previous_response_id: first.id, reasoning: { effort: "low" } }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ object: "response.input_tokens", input_tokens: 42 });
    expect(res.headers.get("x-router-token-count")).toBe("upstream");
    const counted = ant.requests.filter((r) => r.path === "/messages/count_tokens").at(-1)!.body;
    const assistant = counted.messages.find((m: { role: string }) => m.role === "assistant");
    expect(assistant.content[0]).toEqual({ type: "thinking", thinking: "Thinking about hi", signature: SIG });
    expect(counted.max_tokens).toBeUndefined();
  });

  for (const model of ["claude", "local"]) {
    it(`truncation auto on ${model}: a long chain drops its oldest turns and still answers`, async () => {
      const filler = "x".repeat(200);
      let prev: string | undefined;
      for (const word of ["one", "two", "three"]) {
        const r = await r2.client.responses.create({ model, input: `${word} ${filler}`, previous_response_id: prev, truncation: "auto", ...(model === "claude" ? { reasoning: { effort: "low" as const } } : {}) });
        expect(r.status).toBe("completed");
        expect(r.truncation).toBe("auto");
        prev = r.id;
      }
      const over = r2.client.responses.create({ model, input: "four", previous_response_id: prev });
      await expect(over).rejects.toMatchObject({ status: 400, code: "context_length_exceeded" });
      if (model === "claude") {
        const sent = sentMessages(ant).at(-1);
        expect(JSON.stringify(sent)).not.toContain("one x");
      } else {
        expect(JSON.stringify(chat.requests.at(-1)!.body)).not.toContain("one x");
      }
    });
  }

  it("truncation auto on openai is passed to the upstream", async () => {
    const r = await r2.client.responses.create({ model: "gpt-4.1", input: "hello", truncation: "auto" });
    expect(r.truncation).toBe("auto");
    expect(oai.requests.at(-1)!.body.truncation).toBe("auto");
  });
});

describe("the README's client examples, verbatim, on an anthropic model", () => {
  it("the AI SDK example (reasoningSummary auto, forceReasoning, plus an effort for Claude) shows Claude's thinking", async () => {
    const { createOpenAI } = await import("@ai-sdk/openai");
    const { generateText } = await import("ai");
    const openai = createOpenAI({ baseURL: `${router.url}/v1`, apiKey: "test-key" });
    const { text, reasoningText } = await generateText({
      model: openai.responses("claude"),
      prompt: "hi",
      providerOptions: { openai: { reasoningSummary: "auto", forceReasoning: true, reasoningEffort: "low" } },
    });
    expect(text).toBe("Claude: hi");
    expect(reasoningText).toBe("Thinking about hi");
  });

  it("the LangChain example (modelKwargs reasoning summary) with tools answers", async () => {
    const { ChatOpenAI } = await import("@langchain/openai");
    const llm = new ChatOpenAI({
      model: "claude",
      apiKey: "test-key",
      useResponsesApi: true,
      configuration: { baseURL: `${router.url}/v1` },
      modelKwargs: { reasoning: { summary: "auto" } },
    });
    const weatherTool = { type: "function" as const, function: { name: "get_weather", description: "weather", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } };
    const msg = await llm.bindTools([weatherTool]).invoke("What is the weather in Oslo?");
    expect(msg.tool_calls?.[0]).toMatchObject({ name: "get_weather", args: { city: "Oslo" } });
  });

  it("the Agents SDK example (setDefaultOpenAIClient) runs", async () => {
    const { Agent, OpenAIResponsesModel, run, setDefaultOpenAIClient, setTracingDisabled } = await import("@openai/agents");
    setDefaultOpenAIClient(router.client);
    setTracingDisabled(true);
    const agent = new Agent({ name: "helper", model: new OpenAIResponsesModel(router.client, "claude"), tools: [] });
    const result = await run(agent, "What is the weather in Oslo?");
    expect(result.finalOutput).toBe("Claude: What is the weather in Oslo?");
  });
});

describe("reasoning items crossing kinds in one chain", () => {
  let r3: TestRouter;
  let oai: MockUpstream;
  beforeAll(async () => {
    oai = await startMockUpstream();
    const { responsesBackend } = await import("../helpers/client-backends.js");
    oai.setDefault("/responses", (req) => {
      const reply = responsesBackend(req);
      if (reply.kind !== "json" || req.body.reasoning === undefined) return reply;
      const body = reply.body as { output: unknown[] };
      return { kind: "json", body: { ...body, output: [{ id: "rs_up1", type: "reasoning", summary: [], encrypted_content: "gAAAAopenai-encrypted" }, ...body.output] } };
    });
    r3 = await startTestRouter({
      endpoints: [
        { name: "claude-ep", url: ant.url, kind: "anthropic", api_key: "sk-ant-test-0123456789" },
        { name: "box", url: chat.url, kind: "chat" },
        { name: "oai", url: oai.url, kind: "openai", api_key: "sk-upstream-secret-0123456789" },
      ],
      models: { claude: { endpoints: ["claude-ep"] }, local: { endpoints: ["box"] }, "gpt-4.1": { endpoints: ["oai"] } },
    });
  });
  afterAll(async () => {
    await r3?.close(500);
    await oai?.close();
  });

  it("a chain started on anthropic continues on openai without Claude's thinking sent to OpenAI", async () => {
    const first = await r3.client.responses.create({ model: "claude", input: "hello", reasoning: { effort: "low" } });
    expect(first.output[0].type).toBe("reasoning");
    const second = await r3.client.responses.create({ model: "gpt-4.1", input: "again", previous_response_id: first.id, reasoning: { effort: "low" } });
    expect(second.output_text).toBe("Echo: again");
    const input = oai.requests.at(-1)!.body.input as { type?: string; encrypted_content?: string }[];
    expect(JSON.stringify(input)).not.toContain("anthropic.");
    expect(JSON.stringify(input)).toContain("Claude: hello");
  });

  it("a chain started on openai continues on anthropic without OpenAI's encrypted reasoning as a thinking block", async () => {
    const first = await r3.client.responses.create({ model: "gpt-4.1", input: "hello", reasoning: { effort: "low" } });
    expect(first.output[0].type).toBe("reasoning");
    const second = await r3.client.responses.create({ model: "claude", input: "again", previous_response_id: first.id, reasoning: { effort: "low" } });
    expect(second.output_text).toBe("Claude: again");
    const sent = sentMessages(ant).at(-1);
    expect(JSON.stringify(sent)).not.toContain("gAAAA");
    expect(JSON.stringify(sent)).toContain("Echo: hello");
  });

  it("openai: a reasoning item sent back without encrypted_content (no include) reaches the upstream with it", async () => {
    const first = await r3.client.responses.create({ model: "gpt-4.1", input: "hello", reasoning: { effort: "low" } });
    const rs = first.output[0] as { id: string; encrypted_content?: string | null };
    expect(rs.encrypted_content ?? null).toBeNull();
    const msg = first.output[1] as { id: string };
    await r3.client.responses.create({ model: "gpt-4.1", reasoning: { effort: "low" }, input: [{ role: "user", content: "hello" }, { type: "reasoning", id: rs.id, summary: [] }, { type: "item_reference", id: msg.id }, { role: "user", content: "again" }] as any });
    const sent = oai.requests.at(-1)!.body.input as { type?: string; encrypted_content?: string }[];
    expect(sent.find((i) => i.type === "reasoning")?.encrypted_content).toBe("gAAAAopenai-encrypted");
  });

  it("a chain compacted on anthropic continues on chat and on openai with the summary", async () => {
    const first = await r3.client.responses.create({ model: "claude", input: "hello", reasoning: { effort: "low" } });
    const compacted = await r3.client.responses.compact({ model: "claude", previous_response_id: first.id });
    const summary = (sentMessages(ant).at(-1).messages.at(-1).content as { text?: string }[]).map((b) => b.text ?? "").join("");
    expect(summary).toContain("Context checkpoint");
    for (const [model, mock] of [["local", chat], ["gpt-4.1", oai]] as const) {
      const next = await r3.client.responses.create({ model, input: [...(compacted.output as any[]), { role: "user", content: "again" }] });
      expect(next.status).toBe("completed");
      const sent = JSON.stringify(mock.requests.at(-1)!.body);
      expect(sent).toContain("Claude: Context checkpoint"); // the summary Claude wrote (the mock echoes the compaction prompt)
      expect(sent).not.toContain("rrc1.");
      expect(sent).not.toContain("anthropic.");
    }
  });

  it("a chain started on chat (with reasoning) continues on anthropic and on openai", async () => {
    const first = await r3.client.responses.create({ model: "local", input: "hello" });
    expect(first.output.some((o) => o.type === "reasoning")).toBe(true);
    const onClaude = await r3.client.responses.create({ model: "claude", input: "again", previous_response_id: first.id, reasoning: { effort: "low" } });
    expect(onClaude.output_text).toBe("Claude: again");
    const onOai = await r3.client.responses.create({ model: "gpt-4.1", input: "more", previous_response_id: onClaude.id });
    expect(onOai.output_text).toBe("Echo: more");
    const input = JSON.stringify(oai.requests.at(-1)!.body.input);
    expect(input).not.toContain("anthropic.");
  });
});

describe("sessions, WebSocket and background on anthropic", () => {
  it("an Agents SDK OpenAIConversationsSession keeps a two-turn tool loop with signed thinking", async () => {
    const { Agent, OpenAIConversationsSession, OpenAIResponsesModel, run, tool, setTracingDisabled } = await import("@openai/agents");
    setTracingDisabled(true);
    const calls: string[] = [];
    const getWeather = tool({ name: "get_weather", description: "weather", parameters: z.object({ city: z.string() }), execute: async ({ city }) => (calls.push(city), "light snow") });
    const agent = new Agent({ name: "W", instructions: "Answer.", model: new OpenAIResponsesModel(router.client, "claude"), tools: [getWeather], modelSettings: { reasoning: { effort: "low" } } });
    const session = new OpenAIConversationsSession({ client: router.client });
    const first = await run(agent, "Weather in Oslo?", { session });
    expect(first.finalOutput).toBe("Oslo: light snow");
    const second = await run(agent, "And tomorrow?", { session, stream: true });
    for await (const _ of second) void _;
    await second.completed;
    expect(second.error).toBeNull();
    expect(second.finalOutput).toBe("Oslo: light snow");
    expect(calls).toEqual(["Oslo"]);
    const last = sentMessages(ant).at(-1);
    const assistant = last.messages.find((m: { role: string }) => m.role === "assistant");
    expect(assistant.content[0]).toEqual({ type: "thinking", thinking: THINKING, signature: SIG });
  });

  it("an Agents SDK tool loop without include sends the thinking back by the reasoning item's id, as OpenAI resolves it", async () => {
    const { Agent, OpenAIResponsesModel, run, tool, setTracingDisabled } = await import("@openai/agents");
    setTracingDisabled(true);
    const getWeather = tool({ name: "get_weather", description: "weather", parameters: z.object({ city: z.string() }), execute: async () => "light snow" });
    const agent = new Agent({ name: "W", model: new OpenAIResponsesModel(router.client, "claude"), tools: [getWeather], modelSettings: { reasoning: { effort: "low" } } });
    const result = await run(agent, "Weather in Oslo?");
    expect(result.finalOutput).toBe("Oslo: light snow");
    const sent = sentMessages(ant);
    expect(sent).toHaveLength(2);
    expect(sent[1].thinking?.type).toBe("enabled");
    const assistant = sent[1].messages.find((m: { role: string }) => m.role === "assistant");
    expect(assistant.content[0]).toEqual({ type: "thinking", thinking: THINKING, signature: SIG });
  });

  it("WebSocket: a tool turn then its output by previous_response_id sends the signed thinking back", async () => {
    const { WsClient } = await import("../helpers/ws-client.js");
    const ws = new WsClient(router.url);
    try {
      const tools = [{ type: "function", name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } }, strict: false }];
      const e1 = await ws.create({ model: "claude", input: "Weather in Oslo?", tools, reasoning: { effort: "low" } } as any);
      const done = e1.find((e) => e.type === "response.completed")!;
      const call = done.response.output.find((o: { type: string }) => o.type === "function_call");
      expect(call.call_id).toBe("toolu_qa1");
      const e2 = await ws.create({ model: "claude", previous_response_id: done.response.id, input: [{ type: "function_call_output", call_id: call.call_id, output: "light snow" }], tools, reasoning: { effort: "low" } } as any);
      const done2 = e2.find((e) => e.type === "response.completed")!;
      expect(done2.response.output.at(-1).content[0].text).toBe("Oslo: light snow");
      const assistant = sentMessages(ant).at(-1).messages.find((m: { role: string }) => m.role === "assistant");
      expect(assistant.content[0]).toEqual({ type: "thinking", thinking: THINKING, signature: SIG });
    } finally {
      ws.ws.close();
    }
  });

  it("background on anthropic: stream again with include gives the encrypted thinking", async () => {
    const queued = await router.client.responses.create({ model: "claude", input: "hello", background: true, reasoning: { effort: "low" } });
    let done = queued;
    for (let i = 0; i < 100 && !["completed", "failed"].includes(done.status ?? ""); i++) {
      await new Promise((r) => setTimeout(r, 20));
      done = await router.client.responses.retrieve(queued.id);
    }
    expect(done.status).toBe("completed");
    expect(done.output_text).toBe("Claude: hello");
    const withInclude = await router.client.responses.retrieve(queued.id, { include: ["reasoning.encrypted_content"] });
    expect((withInclude.output[0] as { encrypted_content?: string }).encrypted_content).toMatch(/^anthropic\./);
    const res = await router.fetch(`/v1/responses/${queued.id}?stream=true`, { headers: { authorization: "Bearer test-key" } });
    const text = await res.text();
    expect(text).toContain("response.completed");
    expect(text).not.toContain("anthropic.");
  });
});

describe("structured answers from real clients on anthropic", () => {
  /** Answers with the forced answer tool (or, with thinking, the one the system prompt names). */
  function structured(req: RecordedRequest): Reply {
    const tools = (req.body.tools ?? []) as { name: string; description?: string }[];
    const answer = tools.find((t) => t.description?.startsWith("Give the final answer"));
    if (!answer) return anthropicBackend(req);
    return messageReply(message([toolUseBlock("toolu_ans", answer.name, { city: "Oslo", temperature: -3 })], { stop_reason: "tool_use" }), req);
  }
  const Weather = z.object({ city: z.string(), temperature: z.number() });

  it("the openai SDK's responses.parse and the stream helper with zodTextFormat", async () => {
    ant.setDefault("/messages", structured);
    const { zodTextFormat } = await import("openai/helpers/zod");
    const parsed = await router.client.responses.parse({ model: "claude", input: "Weather?", text: { format: zodTextFormat(Weather, "weather") } });
    expect(parsed.output_parsed).toEqual({ city: "Oslo", temperature: -3 });
    const stream = router.client.responses.stream({ model: "claude", input: "Weather?", text: { format: zodTextFormat(Weather, "weather") } });
    const final = await stream.finalResponse();
    expect(final.output_parsed).toEqual({ city: "Oslo", temperature: -3 });
    sentMessages(ant);
  });

  it("LangChain withStructuredOutput (Responses API)", async () => {
    ant.setDefault("/messages", structured);
    const { ChatOpenAI } = await import("@langchain/openai");
    const llm = new ChatOpenAI({ model: "claude", apiKey: "test-key", useResponsesApi: true, maxRetries: 0, configuration: { baseURL: `${router.url}/v1` } });
    const out = await llm.withStructuredOutput(Weather, { name: "weather" }).invoke("Weather?");
    expect(out).toEqual({ city: "Oslo", temperature: -3 });
    sentMessages(ant);
  });

  it("the AI SDK's generateObject (Output.object) and a tool loop ending in an object", async () => {
    ant.setDefault("/messages", structured);
    const { createOpenAI } = await import("@ai-sdk/openai");
    const ai = await import("ai");
    const openai = createOpenAI({ baseURL: `${router.url}/v1`, apiKey: "test-key" });
    const r = await ai.generateText({ model: openai.responses("claude"), prompt: "Weather?", output: ai.Output.object({ schema: Weather }) });
    expect(r.output).toEqual({ city: "Oslo", temperature: -3 });
    sentMessages(ant);
  });
});

describe("the AI SDK's default store: true tool loop across a fallback", () => {
  const opts = { openai: { reasoningEffort: "low", forceReasoning: true } };

  it("step 1 on anthropic, step 2 on chat (Anthropic overloaded): the references resolve, chat gets the call and its output", async () => {
    const { createOpenAI } = await import("@ai-sdk/openai");
    const { generateText, stepCountIs } = await import("ai");
    let n = 0;
    ant.setDefault("/messages", (req) => (++n === 1 ? anthropicBackend(req) : anthropicError(529, "overloaded_error", "Overloaded")));
    const openai = createOpenAI({ baseURL: `${router.url}/v1`, apiKey: "test-key" });
    const calls: string[] = [];
    const r = await generateText({ model: openai.responses("claude-or-local"), prompt: "Weather in Oslo?", tools: { get_weather: await weatherAi(calls) }, stopWhen: stepCountIs(3), providerOptions: opts });
    expect(calls).toEqual(["Oslo"]);
    expect(r.text).toBe("Result: light snow");
    const msgs = chat.requests.at(-1)!.body.messages;
    expect(msgs.at(-1)).toEqual({ role: "tool", tool_call_id: "toolu_qa1", content: "light snow" });
    expect(msgs.at(-2).tool_calls[0]).toMatchObject({ id: "toolu_qa1", function: { name: "get_weather" } });
  });

  it("step 1 on chat (Anthropic overloaded), step 2 on anthropic: tool_use/tool_result pair, thinking off for the step", async () => {
    const { createOpenAI } = await import("@ai-sdk/openai");
    const { generateText, stepCountIs } = await import("ai");
    let n = 0;
    ant.setDefault("/messages", (req) => (++n === 1 ? anthropicError(529, "overloaded_error", "Overloaded") : anthropicBackend(req)));
    const openai = createOpenAI({ baseURL: `${router.url}/v1`, apiKey: "test-key" });
    const calls: string[] = [];
    const r = await generateText({ model: openai.responses("claude-or-local"), prompt: "Weather in Oslo?", tools: { get_weather: await weatherAi(calls) }, stopWhen: stepCountIs(3), providerOptions: opts });
    expect(calls).toEqual(["Oslo"]);
    expect(r.text).toBe("Oslo: light snow");
    const last = sentMessages(ant).at(-1);
    expect(last.thinking).toBeUndefined();
    const assistant = last.messages.find((m: { role: string }) => m.role === "assistant");
    expect(assistant.content).toEqual([expect.objectContaining({ type: "tool_use", id: "call_w1", name: "get_weather", input: { city: "Oslo" } })]);
  });
});

describe("input_tokens over what clients send", () => {
  it("anthropic: item_references and a bare reasoning item are resolved before count_tokens", async () => {
    const first = await router.client.responses.create({ model: "claude", input: "hello", reasoning: { effort: "low" } });
    const [rs, msg] = first.output;
    const counted = await router.client.responses.inputTokens.count({
      model: "claude",
      reasoning: { effort: "low" },
      input: [{ role: "user", content: "hello" }, { type: "reasoning", id: rs.id!, summary: [] }, { type: "item_reference", id: msg.id! }, { role: "user", content: "again" }] as any,
    });
    expect(counted.input_tokens).toBe(42);
    const body = ant.requests.filter((r) => r.path === "/messages/count_tokens").at(-1)!.body;
    const assistant = body.messages.find((m: { role: string }) => m.role === "assistant");
    expect(assistant.content[0]).toEqual({ type: "thinking", thinking: "Thinking about hello", signature: SIG });
    expect(assistant.content[1]).toMatchObject({ type: "text", text: "Claude: hello" });
  });

  it("chat: an item_reference is resolved before the estimate", async () => {
    const first = await router.client.responses.create({ model: "local", input: "hello" });
    const msg = first.output.find((o) => o.type === "message")!;
    const withRef = await router.client.responses.inputTokens.count({ model: "local", input: [{ role: "user", content: "hello" }, { type: "item_reference", id: msg.id! }] as any });
    const inline = await router.client.responses.inputTokens.count({ model: "local", input: [{ role: "user", content: "hello" }, { role: "assistant", content: "Echo: hello" }] as any });
    expect(withRef.input_tokens).toBe(inline.input_tokens);
  });
});

describe("Agents SDK handoffs and server-side state across kinds", () => {
  /** Anthropic: hand off when a transfer tool is offered and no tool result yet; else answer. */
  function handoffAnthropic(req: RecordedRequest): Reply {
    const tools = (req.body.tools ?? []) as { name: string }[];
    const transfer = tools.find((t) => t.name.startsWith("transfer_to_"));
    const hasResult = JSON.stringify(req.body.messages).includes("tool_result");
    const think = req.body.thinking?.type === "enabled" ? [thinkingBlock("Hand it off.", SIG)] : [];
    if (transfer && !hasResult) return messageReply(message([...think, toolUseBlock("toolu_h1", transfer.name, {})], { stop_reason: "tool_use" }), req);
    return messageReply(message([textBlock("Claude answers")]), req);
  }

  it("an agent on anthropic hands off to an agent on chat, and one on chat to one on anthropic", async () => {
    const { Agent, OpenAIResponsesModel, run, setTracingDisabled } = await import("@openai/agents");
    setTracingDisabled(true);
    ant.setDefault("/messages", handoffAnthropic);
    const local = new Agent({ name: "Local", instructions: "Answer.", model: new OpenAIResponsesModel(router.client, "local") });
    const triage = new Agent({ name: "Triage", instructions: "Route.", model: new OpenAIResponsesModel(router.client, "claude"), handoffs: [local], modelSettings: { reasoning: { effort: "low" } } });
    const r1 = await run(triage, "hello");
    expect(r1.lastAgent?.name).toBe("Local");
    expect(r1.finalOutput).toBe(`Result: {"assistant":"Local"}`); // the chat mock quotes the handoff's tool output
    const chatMsgs = chat.requests.at(-1)!.body.messages;
    expect(JSON.stringify(chatMsgs)).not.toContain("anthropic.");

    // chat -> anthropic: the chat mock calls a tool named like *get_weather only; give the local agent a handoff it calls by name.
    chat.setDefault("/chat/completions", (req) => {
      const names = ((req.body.tools ?? []) as { function: { name: string } }[]).map((t) => t.function.name);
      const transfer = names.find((n) => n.startsWith("transfer_to_"));
      const hasResult = req.body.messages.some((m: { role: string }) => m.role === "tool");
      if (transfer && !hasResult) {
        return { kind: "json", body: chatCompletion(null, req.body.model, { tool_calls: [{ id: "call_h2", type: "function", function: { name: transfer, arguments: "{}" } }] }) };
      }
      return chatBackend(req);
    });
    try {
      const claude = new Agent({ name: "Claude", instructions: "Answer.", model: new OpenAIResponsesModel(router.client, "claude"), modelSettings: { reasoning: { effort: "low" } } });
      const front = new Agent({ name: "Front", instructions: "Route.", model: new OpenAIResponsesModel(router.client, "local"), handoffs: [claude] });
      const r2 = await run(front, "hi");
      expect(r2.lastAgent?.name).toBe("Claude");
      expect(r2.finalOutput).toBe("Claude answers");
      const sent = sentMessages(ant).at(-1);
      expect(JSON.stringify(sent.messages)).toContain("call_h2");
    } finally {
      chat.setDefault("/chat/completions", chatBackend);
    }
  });

  it("run with previousResponseId and conversationId on anthropic", async () => {
    const { Agent, OpenAIResponsesModel, run, setTracingDisabled } = await import("@openai/agents");
    setTracingDisabled(true);
    const agent = new Agent({ name: "C", instructions: "Answer.", model: new OpenAIResponsesModel(router.client, "claude"), modelSettings: { reasoning: { effort: "low" } } });
    const first = await run(agent, "hello");
    expect(first.finalOutput).toBe("Claude: hello");
    const second = await run(agent, "again", { previousResponseId: first.lastResponseId });
    expect(second.finalOutput).toBe("Claude: again");
    let assistant = sentMessages(ant).at(-1).messages.find((m: { role: string }) => m.role === "assistant");
    expect(assistant.content[0]).toEqual({ type: "thinking", thinking: "Thinking about hello", signature: SIG });
    const conv = await router.client.conversations.create({});
    await run(agent, "one", { conversationId: conv.id });
    const r = await run(agent, "two", { conversationId: conv.id });
    expect(r.finalOutput).toBe("Claude: two");
    assistant = sentMessages(ant).at(-1).messages.find((m: { role: string }) => m.role === "assistant");
    expect(assistant.content[0]).toEqual({ type: "thinking", thinking: "Thinking about one", signature: SIG });
  });
});

describe("the README's anthropic example, verbatim", () => {
  it("parses, and a router built from it (its url pointed at the mock) sends what the comments say", async () => {
    const { readFileSync } = await import("node:fs");
    const { parse } = await import("yaml");
    const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
    const example = /### Anthropic endpoints\n[\s\S]*?```yaml\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(example).toContain("kind: anthropic");
    const raw = parse(example!.replace("https://api.anthropic.com/v1", `${ant.url}/v1`).replace("${ANTHROPIC_API_KEY}", "sk-ant-readme-0123456789"));
    raw.endpoints.push({ name: "box", url: chat.url, kind: "chat" });
    raw.models["gpt-4.1"] = { endpoints: ["box"] };
    const r = await startTestRouter(raw);
    ant.setDefault("/v1/messages", anthropicBackend);
    try {
      const out = await r.client.responses.create({ model: "claude", instructions: "Be brief.", input: "hello", reasoning: { effort: "low" } });
      expect(out.output_text).toBe("Claude: hello");
      expect(out.model).toBe("claude");
      const req = ant.requests.at(-1)!;
      expect(req.path).toBe("/v1/messages");
      expect(req.headers["x-api-key"]).toBe("sk-ant-readme-0123456789");
      expect(req.headers["anthropic-version"]).toBe("2026-10-21");
      expect(req.body).toMatchObject({ model: "claude-sonnet-4-5", max_tokens: 8192 + 2048, thinking: { type: "enabled", budget_tokens: 2048 } });
      expect(req.body.system).toEqual([{ type: "text", text: "Be brief.", cache_control: { type: "ephemeral" } }]); // prompt_caching: true
      // fallbacks: [gpt-4.1] serves when Anthropic is overloaded
      ant.setDefault("/v1/messages", anthropicError(529, "overloaded_error", "Overloaded"));
      const fb = await r.client.responses.create({ model: "claude", input: "hello" });
      expect(fb.output_text).toBe("Echo: hello");
    } finally {
      await r.close(500);
    }
  });
});

describe("LangChain with Claude's thinking across a tool round trip", () => {
  for (const streaming of [false, true]) {
    it(`the thinking goes back signed (${streaming ? "streamed" : "invoke"})`, async () => {
      const { ChatOpenAI } = await import("@langchain/openai");
      const { HumanMessage, ToolMessage } = await import("@langchain/core/messages");
      const weatherTool = { type: "function" as const, function: { name: "get_weather", description: "weather", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } };
      const llm = new ChatOpenAI({ model: "claude", apiKey: "test-key", useResponsesApi: true, maxRetries: 0, streaming, configuration: { baseURL: `${router.url}/v1` }, modelKwargs: { reasoning: { effort: "low", summary: "auto" } } }).bindTools([weatherTool]);
      const history: any[] = [new HumanMessage("Weather in Oslo?")];
      const first = await llm.invoke(history);
      expect(first.tool_calls?.[0]).toMatchObject({ name: "get_weather", id: "toolu_qa1" });
      history.push(first, new ToolMessage({ content: "light snow", tool_call_id: "toolu_qa1" }));
      const second = await llm.invoke(history);
      expect(second.text).toBe("Oslo: light snow");
      const sent = sentMessages(ant);
      expect(sent[1].thinking?.type).toBe("enabled");
      const assistant = sent[1].messages.find((m: { role: string }) => m.role === "assistant");
      expect(assistant.content[0]).toEqual({ type: "thinking", thinking: THINKING, signature: SIG });
    });
  }
});

describe("the Agents SDK over the Responses WebSocket", () => {
  for (const model of ["claude", "local"]) {
    it(`${model}: a tool loop, then a second run on its history, over one socket`, async () => {
      const { Agent, tool, withResponsesWebSocketSession, setTracingDisabled } = await import("@openai/agents");
      setTracingDisabled(true);
      const calls: string[] = [];
      const getWeather = tool({ name: "get_weather", description: "weather", parameters: z.object({ city: z.string() }), execute: async ({ city }) => (calls.push(city), "light snow") });
      const agent = new Agent({ name: "W", instructions: "Answer.", model, tools: [getWeather], modelSettings: { reasoning: { effort: "low" } } });
      const outputs = await withResponsesWebSocketSession(
        async ({ run }) => {
          const first = await run(agent, "Weather in Oslo?");
          const streamed = await run(agent, "Weather in Oslo again?", { stream: true, previousResponseId: first.lastResponseId });
          for await (const _ of streamed) void _;
          await streamed.completed;
          return [first.finalOutput, streamed.finalOutput, streamed.error];
        },
        { providerOptions: { openAIClient: router.client, useResponsesWebSocket: true } },
      );
      const expected = model === "claude" ? "Oslo: light snow" : "Result: light snow";
      expect(outputs).toEqual([expected, expected, null]);
      const metrics = await (await router.fetch("/metrics")).text();
      expect(metrics).toContain(`responses_router_responses_total{transport="websocket",model="${model}",status="200"}`);
      if (model === "claude") {
        const sent = sentMessages(ant);
        expect(sent[1].thinking?.type).toBe("enabled");
        expect(sent[1].messages.find((m: { role: string }) => m.role === "assistant").content[0]).toEqual({ type: "thinking", thinking: THINKING, signature: SIG });
      }
    });
  }
});

describe("the AI SDK with server-side state on anthropic", () => {
  const opts = (extra: Record<string, unknown>) => ({ openai: { reasoningEffort: "low", forceReasoning: true, ...extra } });

  it("a tool loop in a conversation (providerOptions conversation), then a next turn in it", async () => {
    const { createOpenAI } = await import("@ai-sdk/openai");
    const { generateText, stepCountIs } = await import("ai");
    const openai = createOpenAI({ baseURL: `${router.url}/v1`, apiKey: "test-key" });
    const conv = await router.client.conversations.create({});
    const calls: string[] = [];
    const r = await generateText({ model: openai.responses("claude"), prompt: "Weather in Oslo?", tools: { get_weather: await weatherAi(calls) }, stopWhen: stepCountIs(3), providerOptions: opts({ conversation: conv.id }) });
    expect(r.text).toBe("Oslo: light snow");
    expect(calls).toEqual(["Oslo"]);
    let sent = sentMessages(ant);
    expect(sent[1].messages.find((m: { role: string }) => m.role === "assistant").content[0]).toEqual({ type: "thinking", thinking: THINKING, signature: SIG });
    const next = await generateText({ model: openai.responses("claude"), prompt: "Thanks", tools: { get_weather: await weatherAi(calls) }, providerOptions: opts({ conversation: conv.id }) });
    expect(next.text).toBe("Oslo: light snow");
    sent = sentMessages(ant);
    const roles = sent.at(-1).messages.map((m: { role: string }) => m.role);
    expect(roles).toEqual(["user", "assistant", "user", "assistant", "user"]);
  });

  it("previousResponseId across steps and turns", async () => {
    const { createOpenAI } = await import("@ai-sdk/openai");
    const { generateText } = await import("ai");
    const openai = createOpenAI({ baseURL: `${router.url}/v1`, apiKey: "test-key" });
    const first = await generateText({ model: openai.responses("claude"), prompt: "hello", providerOptions: opts({}) });
    const id = (first.providerMetadata?.openai as { responseId?: string })?.responseId;
    expect(id).toMatch(/^resp_/);
    const second = await generateText({ model: openai.responses("claude"), prompt: "again", providerOptions: opts({ previousResponseId: id }) });
    expect(second.text).toBe("Claude: again");
    const assistant = sentMessages(ant).at(-1).messages.find((m: { role: string }) => m.role === "assistant");
    expect(assistant.content[0]).toEqual({ type: "thinking", thinking: "Thinking about hello", signature: SIG });
  });
});

describe("parallel tool calls from Claude through real clients", () => {
  /** Two tool_use blocks after thinking, then an answer quoting both results. */
  function parallel(req: RecordedRequest): Reply {
    const results = (req.body.messages as { content: { type: string; content?: unknown }[] | string }[]).flatMap((m) => (typeof m.content === "string" ? [] : m.content)).filter((b) => b.type === "tool_result");
    if (!results.length) {
      const think = req.body.thinking?.type === "enabled" ? [thinkingBlock(THINKING, SIG)] : [];
      return messageReply(message([...think, toolUseBlock("toolu_p1", "get_weather", { city: "Oslo" }), toolUseBlock("toolu_p2", "get_weather", { city: "Bergen" })], { stop_reason: "tool_use" }), req);
    }
    return messageReply(message([textBlock(results.map((r) => String(r.content)).join(" | "))]), req);
  }

  it("the AI SDK (store: true, streamed) runs both and sends both results in one user turn", async () => {
    ant.setDefault("/messages", parallel);
    const { createOpenAI } = await import("@ai-sdk/openai");
    const { streamText, tool, stepCountIs } = await import("ai");
    const openai = createOpenAI({ baseURL: `${router.url}/v1`, apiKey: "test-key" });
    const get_weather = tool({ description: "weather", inputSchema: z.object({ city: z.string() }), execute: async ({ city }: { city: string }) => `snow in ${city}` });
    const s = streamText({ model: openai.responses("claude"), prompt: "Weather in Oslo and Bergen?", tools: { get_weather }, stopWhen: stepCountIs(3), providerOptions: { openai: { reasoningEffort: "low", forceReasoning: true } } });
    expect(await s.text).toBe("snow in Oslo | snow in Bergen");
    const sent = sentMessages(ant);
    expect(sent).toHaveLength(2);
    const [, assistant, user] = sent[1].messages;
    expect(assistant.content.map((b: { type: string }) => b.type)).toEqual(["thinking", "tool_use", "tool_use"]);
    expect(user.content.map((b: { tool_use_id?: string }) => b.tool_use_id)).toEqual(["toolu_p1", "toolu_p2"]);
  });

  it("the openai SDK's stream helper sees both calls with their arguments", async () => {
    ant.setDefault("/messages", parallel);
    const stream = router.client.responses.stream({ model: "claude", input: "Weather?", tools: [{ type: "function", name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } }, strict: false }] });
    const done: string[] = [];
    stream.on("response.function_call_arguments.done", (e) => done.push(e.arguments));
    const final = await stream.finalResponse();
    const calls = final.output.filter((o) => o.type === "function_call");
    expect(calls.map((c) => c.type === "function_call" && [c.call_id, JSON.parse(c.arguments).city])).toEqual([["toolu_p1", "Oslo"], ["toolu_p2", "Bergen"]]);
    expect(done.map((a) => JSON.parse(a).city)).toEqual(["Oslo", "Bergen"]);
  });
});

describe("include on a conversation's items and a response's input items (anthropic)", () => {
  it("the reasoning item's encrypted_content shows only when included, and round-trips from the listing", async () => {
    const conv = await router.client.conversations.create({});
    await router.client.responses.create({ model: "claude", conversation: conv.id, input: "hello", reasoning: { effort: "low" } });
    const plain = await router.client.conversations.items.list(conv.id, { order: "asc" });
    const rsPlain = plain.data.find((i) => i.type === "reasoning") as { encrypted_content?: string | null; id: string };
    expect(rsPlain.encrypted_content ?? null).toBeNull();
    const full = await router.client.conversations.items.list(conv.id, { order: "asc", include: ["reasoning.encrypted_content"] });
    const rs = full.data.find((i) => i.type === "reasoning") as { encrypted_content?: string | null };
    expect(rs.encrypted_content).toMatch(/^anthropic\./);
    const one = await router.client.conversations.items.retrieve(rsPlain.id, { conversation_id: conv.id, include: ["reasoning.encrypted_content"] });
    expect((one as { encrypted_content?: string }).encrypted_content).toBe(rs.encrypted_content);
    // Items from the listing sent back whole (store: false) to a new response: the thinking goes back signed.
    const items = full.data.map((item) => { const { status: _s, ...i } = item as { status?: unknown }; return i; });
    const r = await router.client.responses.create({ model: "claude", store: false, input: [...(items as any[]), { role: "user", content: "again" }], reasoning: { effort: "low" } });
    expect(r.output_text).toBe("Claude: again");
    const assistant = sentMessages(ant).at(-1).messages.find((m: { role: string }) => m.role === "assistant");
    expect(assistant.content[0]).toEqual({ type: "thinking", thinking: "Thinking about hello", signature: SIG });
    // input_items with include on a stored response whose input carried the reasoning item
    const stored = await router.client.responses.create({ model: "claude", input: [...(items as any[]), { role: "user", content: "more" }], reasoning: { effort: "low" } });
    const inPlain = await router.client.responses.inputItems.list(stored.id);
    expect((inPlain.data.find((i) => i.type === "reasoning") as { encrypted_content?: string | null }).encrypted_content ?? null).toBeNull();
    const inFull = await router.client.responses.inputItems.list(stored.id, { include: ["reasoning.encrypted_content"] });
    expect((inFull.data.find((i) => i.type === "reasoning") as { encrypted_content?: string | null }).encrypted_content).toBe(rs.encrypted_content);
  });
});

describe("thinking blocks byte for byte through item_reference (AI SDK, streamed)", () => {
  const TRICKY = 'Ünïcødé “quotes” \\ "escaped" \n\ttabs 🤔 \u2028 line-sep, 数学';
  const REDACTED = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP";
  /** A thinking block with tricky text and a redacted one, then a tool call; given the result, an answer. */
  function tricky(req: RecordedRequest): Reply {
    const hasResult = JSON.stringify(req.body.messages).includes("tool_result");
    if (hasResult) return messageReply(message([textBlock("done")]), req);
    return messageReply(message([thinkingBlock(TRICKY, SIG), { type: "redacted_thinking", data: REDACTED }, toolUseBlock("toolu_t1", "get_weather", { city: "Oslo" })], { stop_reason: "tool_use" }), req);
  }

  for (const stream of [false, true]) {
    it(`thinking with unicode and a redacted_thinking block come back exactly (${stream ? "streamText" : "generateText"})`, async () => {
      ant.setDefault("/messages", tricky);
      const { createOpenAI } = await import("@ai-sdk/openai");
      const ai = await import("ai");
      const openai = createOpenAI({ baseURL: `${router.url}/v1`, apiKey: "test-key" });
      const calls: string[] = [];
      const args = { model: openai.responses("claude"), prompt: "Weather?", tools: { get_weather: await weatherAi(calls) }, stopWhen: ai.stepCountIs(3), providerOptions: { openai: { reasoningEffort: "low", forceReasoning: true, reasoningSummary: "auto" } } };
      const text = stream ? await ai.streamText(args).text : (await ai.generateText(args)).text;
      expect(text).toBe("done");
      const sent = sentMessages(ant);
      expect(sent).toHaveLength(2);
      const assistant = sent[1].messages.find((m: { role: string }) => m.role === "assistant");
      expect(assistant.content.slice(0, 2)).toEqual([
        { type: "thinking", thinking: TRICKY, signature: SIG },
        { type: "redacted_thinking", data: REDACTED },
      ]);
      expect(sent[1].thinking?.type).toBe("enabled");
    });
  }
});

describe("an Anthropic-compatible server's leaner shapes (other mocks and providers)", () => {
  const lean = (content: unknown[], stop = "end_turn") => ({ id: "msg_lean", type: "message", role: "assistant", model: "m", content, stop_reason: stop, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 5 } });
  /** Anthropic's stream with the minimum each event carries: no ping, usage only output_tokens at the end, no cache fields. */
  function leanStream(content: any[], stop = "end_turn"): Reply {
    const frames: { event: string; data: unknown }[] = [{ event: "message_start", data: { type: "message_start", message: { ...lean([], stop), stop_reason: null, usage: { input_tokens: 10, output_tokens: 1 } } } }];
    content.forEach((b, index) => {
      if (b.type === "text") {
        frames.push({ event: "content_block_start", data: { type: "content_block_start", index, content_block: { type: "text", text: "" } } });
        frames.push({ event: "content_block_delta", data: { type: "content_block_delta", index, delta: { type: "text_delta", text: b.text } } });
      } else if (b.type === "tool_use") {
        frames.push({ event: "content_block_start", data: { type: "content_block_start", index, content_block: { type: "tool_use", id: b.id, name: b.name, input: {} } } });
        frames.push({ event: "content_block_delta", data: { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: "" } } });
        frames.push({ event: "content_block_delta", data: { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: JSON.stringify(b.input) } } });
      } else if (b.type === "thinking") {
        frames.push({ event: "content_block_start", data: { type: "content_block_start", index, content_block: { type: "thinking", thinking: "" } } });
        frames.push({ event: "content_block_delta", data: { type: "content_block_delta", index, delta: { type: "thinking_delta", thinking: b.thinking } } });
        if (b.signature) frames.push({ event: "content_block_delta", data: { type: "content_block_delta", index, delta: { type: "signature_delta", signature: b.signature } } });
      }
      frames.push({ event: "content_block_stop", data: { type: "content_block_stop", index } });
    });
    frames.push({ event: "message_delta", data: { type: "message_delta", delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 5 } } });
    frames.push({ event: "message_stop", data: { type: "message_stop" } });
    return { kind: "sse", frames };
  }
  const reply = (content: any[], stop?: string) => (req: RecordedRequest): Reply => (req.body.stream ? leanStream(content, stop) : { kind: "json", body: lean(content, stop) });

  for (const stream of [false, true]) {
    it(`text, a tool call and thinking without a signature, usage without cache fields (${stream ? "stream" : "json"})`, async () => {
      ant.setDefault("/messages", reply([{ type: "thinking", thinking: "hmm" }, { type: "text", text: "Hi" }, { type: "tool_use", id: "toolu_l1", name: "get_weather", input: { city: "Oslo" } }], "tool_use"));
      const tools = [{ type: "function" as const, name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } }, strict: false }];
      const r = stream
        ? await router.client.responses.stream({ model: "claude", input: "hi", tools, reasoning: { effort: "low" } }).finalResponse()
        : await router.client.responses.create({ model: "claude", input: "hi", tools, reasoning: { effort: "low" } });
      expect(r.status).toBe("completed");
      expect(r.output.map((o) => o.type)).toEqual(["reasoning", "message", "function_call"]);
      expect(r.output_text).toBe("Hi");
      const call = r.output[2] as { arguments: string; call_id: string };
      expect(JSON.parse(call.arguments)).toEqual({ city: "Oslo" });
      expect(r.usage).toMatchObject({ input_tokens: 10, output_tokens: 5, total_tokens: 15, input_tokens_details: { cached_tokens: 0 } });
      // the next turn: the thinking without a signature cannot be sent back signed; the request stays valid
      ant.setDefault("/messages", reply([{ type: "text", text: "Oslo: snow" }]));
      const next = await router.client.responses.create({ model: "claude", previous_response_id: r.id, input: [{ type: "function_call_output", call_id: call.call_id, output: "snow" }], tools, reasoning: { effort: "low" } });
      expect(next.output_text).toBe("Oslo: snow");
      // streamed or not, the unsigned thinking is not sent back (an empty signature is no signature), so thinking is off for the step
      const last = sentMessages(ant).at(-1);
      expect(last.thinking).toBeUndefined();
      expect(last.messages[1].content.map((b: { type: string }) => b.type)).toEqual(["text", "tool_use"]);
    });
  }
});

describe("edge answers Claude really gives", () => {
  for (const stream of [false, true]) {
    it(`an empty answer (content: [], end_turn) completes, and the chain continues valid (${stream ? "stream" : "json"})`, async () => {
      ant.setDefault("/messages", (req) => messageReply(message([], { stop_reason: "end_turn" }), req));
      const r = stream ? await router.client.responses.stream({ model: "claude", input: "hi" }).finalResponse() : await router.client.responses.create({ model: "claude", input: "hi" });
      expect(r.status).toBe("completed");
      expect(r.output_text).toBe("");
      ant.setDefault("/messages", anthropicBackend);
      const next = await router.client.responses.create({ model: "claude", input: "again", previous_response_id: r.id });
      expect(next.output_text).toBe("Claude: again");
      sentMessages(ant); // roles alternate, no empty content, no empty text block
    });
  }

  it("an empty text block next to a tool call is not sent back as an empty text block", async () => {
    ant.setDefault("/messages", (req) => messageReply(message([textBlock(""), toolUseBlock("toolu_e1", "get_weather", { city: "Oslo" })], { stop_reason: "tool_use" }), req));
    const tools = [{ type: "function" as const, name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } }, strict: false }];
    const r = await router.client.responses.create({ model: "claude", input: "hi", tools });
    ant.setDefault("/messages", anthropicBackend);
    const next = await router.client.responses.create({ model: "claude", previous_response_id: r.id, input: [{ type: "function_call_output", call_id: "toolu_e1", output: "snow" }], tools });
    expect(next.output_text).toBe("Oslo: snow");
    sentMessages(ant);
  });
});

describe("a Codex-shaped turn on anthropic", () => {
  it("Codex's fields (store false, include, prompt_cache_key, verbosity, namespaces, freeform apply_patch, web_search) are taken; the next turn sends the items back", async () => {
    ant.setDefault("/messages", anthropicBackend);
    const tools = [
      { type: "function", name: "shell", description: "Run a command", strict: false, parameters: { type: "object", properties: { command: { type: "array", items: { type: "string" } } }, required: ["command"], additionalProperties: false } },
      { type: "custom", name: "apply_patch", description: "Edit files", format: { type: "grammar", syntax: "lark", definition: "start: /.+/s" } },
      { type: "function", name: "get_weather", description: "weather", strict: false, parameters: { type: "object", properties: { city: { type: "string" } } } },
      { type: "web_search" },
    ];
    const body = {
      model: "claude",
      instructions: "You are Codex.",
      input: [{ type: "message", role: "user", content: [{ type: "input_text", text: "Weather?" }] }],
      tools,
      tool_choice: "auto",
      parallel_tool_calls: false,
      reasoning: { effort: "medium", summary: "auto" },
      store: false,
      stream: true,
      include: ["reasoning.encrypted_content"],
      prompt_cache_key: "0199-codex-session",
      text: { verbosity: "low" },
    };
    const post = (b: unknown) => router.fetch("/v1/responses", { method: "POST", headers: { authorization: "Bearer test-key", "content-type": "application/json", "OpenAI-Beta": "responses=experimental", originator: "codex_cli_rs" }, body: JSON.stringify(b) });
    const res = await post(body);
    expect(res.status).toBe(200);
    const { parseSse } = await import("../helpers/router.js");
    const events = parseSse(await res.text());
    const done = events.find((e) => e.event === "response.completed")!.data.response;
    const items = done.output as { type: string; call_id?: string; encrypted_content?: string }[];
    expect(items.map((i) => i.type)).toEqual(["reasoning", "function_call"]);
    expect(items[0].encrypted_content).toMatch(/^anthropic\./);
    const res2 = await post({ ...body, input: [...body.input, ...items, { type: "function_call_output", call_id: items[1].call_id, output: "snow" }] });
    expect(res2.status).toBe(200);
    const done2 = parseSse(await res2.text()).find((e) => e.event === "response.completed")!.data.response;
    expect(done2.output.at(-1).content[0].text).toBe("Oslo: snow");
    const sent = sentMessages(ant);
    expect(sent[1].thinking?.type).toBe("enabled");
    expect(sent[1].messages[1].content[0]).toEqual({ type: "thinking", thinking: THINKING, signature: SIG });
    expect(sent[1].tool_choice).toEqual({ type: "auto", disable_parallel_tool_use: true });
  });
});

describe("one pool mixing anthropic and chat endpoints", () => {
  it("a tool loop that starts on the anthropic endpoint fails over to the chat one mid-loop", async () => {
    const { Agent, OpenAIResponsesModel, run, tool, setTracingDisabled } = await import("@openai/agents");
    setTracingDisabled(true);
    const calls: string[] = [];
    const getWeather = tool({ name: "get_weather", description: "weather", parameters: z.object({ city: z.string() }), execute: async ({ city }) => (calls.push(city), "light snow") });
    const agent = new Agent({ name: "W", instructions: "Answer.", model: new OpenAIResponsesModel(router.client, "mix"), tools: [getWeather], modelSettings: { reasoning: { effort: "low" } } });
    // Step 1 on anthropic (a tie of least in-flight goes in pool order), step 2 overloaded there: the chat endpoint serves it.
    let n = 0;
    ant.setDefault("/messages", (req) => (++n === 1 ? anthropicBackend(req) : anthropicError(529, "overloaded_error", "Overloaded")));
    const first = await run(agent, "Weather in Oslo?");
    expect(first.finalOutput).toBe("Result: light snow");
    expect(calls).toEqual(["Oslo"]);
    expect(ant.requests.filter((r) => r.path === "/messages").length).toBeGreaterThan(0);
    const chatReq = chat.requests.at(-1)!.body;
    expect(chatReq.model).toBe("llama3.1:8b");
    expect(chatReq.messages.at(-1)).toEqual({ role: "tool", tool_call_id: "toolu_qa1", content: "light snow" });
    expect(JSON.stringify(chatReq)).not.toContain("anthropic.");
    sentMessages(ant);
  });
});
