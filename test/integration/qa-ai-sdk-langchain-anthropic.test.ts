/**
 * The Vercel AI SDK and LangChain as real clients of kind: anthropic next to chat: the AI SDK's
 * default store: true (item_reference) multi-step with Claude's signed thinking, store: false,
 * fallbacks between the kinds mid tool loop, conversations, structured answers, parallel calls;
 * LangChain tool round trips with thinking; docs/clients.md's examples verbatim.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { anthropicError, message, messageReply, sentMessages, textBlock, thinkingBlock, toolUseBlock } from "../helpers/anthropic-mock.js";
import { anthropicBackend, SIG, THINKING, useClaudeRouter } from "../helpers/claude-env.js";
import { REASONING } from "../helpers/client-backends.js";
import type { RecordedRequest, Reply } from "../helpers/mock-upstream.js";

const env = useClaudeRouter();

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
      baseURL: `${env.router.url}/v1`,
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
    const sent = sentMessages(env.ant);
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
    const last = sentMessages(env.ant).at(-1);
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
    const assistant = sentMessages(env.ant)[1].messages.find((m: { role: string }) => m.role === "assistant");
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
    const msgs = env.chat.requests.at(-1)!.body.messages;
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
      const llm = new ChatOpenAI({ model: "claude", apiKey: "test-key", useResponsesApi: true, maxRetries: 0, streaming, configuration: { baseURL: `${env.router.url}/v1` } }).bindTools([weatherTool]);
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
      const sent = sentMessages(env.ant);
      expect(sent).toHaveLength(3);
      expect(sent[1].messages.at(-1).content[0]).toEqual({ type: "tool_result", tool_use_id: "toolu_qa1", content: "light snow" });
      expect(sent[2].messages.map((m: { role: string }) => m.role)).toEqual(["user", "assistant", "user", "assistant", "user"]);
    });
  }
});

describe("docs/clients.md's examples, verbatim, on an anthropic model", () => {
  it("the AI SDK example (reasoningSummary auto, forceReasoning, plus an effort for Claude) shows Claude's thinking", async () => {
    const { createOpenAI } = await import("@ai-sdk/openai");
    const { generateText } = await import("ai");
    const openai = createOpenAI({ baseURL: `${env.router.url}/v1`, apiKey: "test-key" });
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
      configuration: { baseURL: `${env.router.url}/v1` },
      modelKwargs: { reasoning: { summary: "auto" } },
    });
    const weatherTool = { type: "function" as const, function: { name: "get_weather", description: "weather", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } };
    const msg = await llm.bindTools([weatherTool]).invoke("What is the weather in Oslo?");
    expect(msg.tool_calls?.[0]).toMatchObject({ name: "get_weather", args: { city: "Oslo" } });
  });

  it("the Agents SDK example (setDefaultOpenAIClient) runs", async () => {
    const { Agent, OpenAIResponsesModel, run, setDefaultOpenAIClient, setTracingDisabled } = await import("@openai/agents");
    setDefaultOpenAIClient(env.router.client);
    setTracingDisabled(true);
    const agent = new Agent({ name: "helper", model: new OpenAIResponsesModel(env.router.client, "claude"), tools: [] });
    const result = await run(agent, "What is the weather in Oslo?");
    expect(result.finalOutput).toBe("Claude: What is the weather in Oslo?");
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
    env.ant.setDefault("/messages", structured);
    const { zodTextFormat } = await import("openai/helpers/zod");
    const parsed = await env.router.client.responses.parse({ model: "claude", input: "Weather?", text: { format: zodTextFormat(Weather, "weather") } });
    expect(parsed.output_parsed).toEqual({ city: "Oslo", temperature: -3 });
    const stream = env.router.client.responses.stream({ model: "claude", input: "Weather?", text: { format: zodTextFormat(Weather, "weather") } });
    const final = await stream.finalResponse();
    expect(final.output_parsed).toEqual({ city: "Oslo", temperature: -3 });
    sentMessages(env.ant);
  });

  it("LangChain withStructuredOutput (Responses API)", async () => {
    env.ant.setDefault("/messages", structured);
    const { ChatOpenAI } = await import("@langchain/openai");
    const llm = new ChatOpenAI({ model: "claude", apiKey: "test-key", useResponsesApi: true, maxRetries: 0, configuration: { baseURL: `${env.router.url}/v1` } });
    const out = await llm.withStructuredOutput(Weather, { name: "weather" }).invoke("Weather?");
    expect(out).toEqual({ city: "Oslo", temperature: -3 });
    sentMessages(env.ant);
  });

  it("the AI SDK's generateObject (Output.object) and a tool loop ending in an object", async () => {
    env.ant.setDefault("/messages", structured);
    const { createOpenAI } = await import("@ai-sdk/openai");
    const ai = await import("ai");
    const openai = createOpenAI({ baseURL: `${env.router.url}/v1`, apiKey: "test-key" });
    const r = await ai.generateText({ model: openai.responses("claude"), prompt: "Weather?", output: ai.Output.object({ schema: Weather }) });
    expect(r.output).toEqual({ city: "Oslo", temperature: -3 });
    sentMessages(env.ant);
  });
});

describe("the AI SDK's default store: true tool loop across a fallback", () => {
  const opts = { openai: { reasoningEffort: "low", forceReasoning: true } };

  it("step 1 on anthropic, step 2 on chat (Anthropic overloaded): the references resolve, chat gets the call and its output", async () => {
    const { createOpenAI } = await import("@ai-sdk/openai");
    const { generateText, stepCountIs } = await import("ai");
    let n = 0;
    env.ant.setDefault("/messages", (req) => (++n === 1 ? anthropicBackend(req) : anthropicError(529, "overloaded_error", "Overloaded")));
    const openai = createOpenAI({ baseURL: `${env.router.url}/v1`, apiKey: "test-key" });
    const calls: string[] = [];
    const r = await generateText({ model: openai.responses("claude-or-local"), prompt: "Weather in Oslo?", tools: { get_weather: await weatherAi(calls) }, stopWhen: stepCountIs(3), providerOptions: opts });
    expect(calls).toEqual(["Oslo"]);
    expect(r.text).toBe("Result: light snow");
    const msgs = env.chat.requests.at(-1)!.body.messages;
    expect(msgs.at(-1)).toEqual({ role: "tool", tool_call_id: "toolu_qa1", content: "light snow" });
    expect(msgs.at(-2).tool_calls[0]).toMatchObject({ id: "toolu_qa1", function: { name: "get_weather" } });
  });

  it("step 1 on chat (Anthropic overloaded), step 2 on anthropic: tool_use/tool_result pair, thinking off for the step", async () => {
    const { createOpenAI } = await import("@ai-sdk/openai");
    const { generateText, stepCountIs } = await import("ai");
    let n = 0;
    env.ant.setDefault("/messages", (req) => (++n === 1 ? anthropicError(529, "overloaded_error", "Overloaded") : anthropicBackend(req)));
    const openai = createOpenAI({ baseURL: `${env.router.url}/v1`, apiKey: "test-key" });
    const calls: string[] = [];
    const r = await generateText({ model: openai.responses("claude-or-local"), prompt: "Weather in Oslo?", tools: { get_weather: await weatherAi(calls) }, stopWhen: stepCountIs(3), providerOptions: opts });
    expect(calls).toEqual(["Oslo"]);
    expect(r.text).toBe("Oslo: light snow");
    const last = sentMessages(env.ant).at(-1);
    expect(last.thinking).toBeUndefined();
    const assistant = last.messages.find((m: { role: string }) => m.role === "assistant");
    expect(assistant.content).toEqual([expect.objectContaining({ type: "tool_use", id: "call_w1", name: "get_weather", input: { city: "Oslo" } })]);
  });
});

describe("LangChain with Claude's thinking across a tool round trip", () => {
  for (const streaming of [false, true]) {
    it(`the thinking goes back signed (${streaming ? "streamed" : "invoke"})`, async () => {
      const { ChatOpenAI } = await import("@langchain/openai");
      const { HumanMessage, ToolMessage } = await import("@langchain/core/messages");
      const weatherTool = { type: "function" as const, function: { name: "get_weather", description: "weather", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } };
      const llm = new ChatOpenAI({ model: "claude", apiKey: "test-key", useResponsesApi: true, maxRetries: 0, streaming, configuration: { baseURL: `${env.router.url}/v1` }, modelKwargs: { reasoning: { effort: "low", summary: "auto" } } }).bindTools([weatherTool]);
      const history: any[] = [new HumanMessage("Weather in Oslo?")];
      const first = await llm.invoke(history);
      expect(first.tool_calls?.[0]).toMatchObject({ name: "get_weather", id: "toolu_qa1" });
      history.push(first, new ToolMessage({ content: "light snow", tool_call_id: "toolu_qa1" }));
      const second = await llm.invoke(history);
      expect(second.text).toBe("Oslo: light snow");
      const sent = sentMessages(env.ant);
      expect(sent[1].thinking?.type).toBe("enabled");
      const assistant = sent[1].messages.find((m: { role: string }) => m.role === "assistant");
      expect(assistant.content[0]).toEqual({ type: "thinking", thinking: THINKING, signature: SIG });
    });
  }
});

describe("the AI SDK with server-side state on anthropic", () => {
  const opts = (extra: Record<string, unknown>) => ({ openai: { reasoningEffort: "low", forceReasoning: true, ...extra } });

  it("a tool loop in a conversation (providerOptions conversation), then a next turn in it", async () => {
    const { createOpenAI } = await import("@ai-sdk/openai");
    const { generateText, stepCountIs } = await import("ai");
    const openai = createOpenAI({ baseURL: `${env.router.url}/v1`, apiKey: "test-key" });
    const conv = await env.router.client.conversations.create({});
    const calls: string[] = [];
    const r = await generateText({ model: openai.responses("claude"), prompt: "Weather in Oslo?", tools: { get_weather: await weatherAi(calls) }, stopWhen: stepCountIs(3), providerOptions: opts({ conversation: conv.id }) });
    expect(r.text).toBe("Oslo: light snow");
    expect(calls).toEqual(["Oslo"]);
    let sent = sentMessages(env.ant);
    expect(sent[1].messages.find((m: { role: string }) => m.role === "assistant").content[0]).toEqual({ type: "thinking", thinking: THINKING, signature: SIG });
    const next = await generateText({ model: openai.responses("claude"), prompt: "Thanks", tools: { get_weather: await weatherAi(calls) }, providerOptions: opts({ conversation: conv.id }) });
    expect(next.text).toBe("Oslo: light snow");
    sent = sentMessages(env.ant);
    const roles = sent.at(-1).messages.map((m: { role: string }) => m.role);
    expect(roles).toEqual(["user", "assistant", "user", "assistant", "user"]);
  });

  it("previousResponseId across steps and turns", async () => {
    const { createOpenAI } = await import("@ai-sdk/openai");
    const { generateText } = await import("ai");
    const openai = createOpenAI({ baseURL: `${env.router.url}/v1`, apiKey: "test-key" });
    const first = await generateText({ model: openai.responses("claude"), prompt: "hello", providerOptions: opts({}) });
    const id = (first.providerMetadata?.openai as { responseId?: string })?.responseId;
    expect(id).toMatch(/^resp_/);
    const second = await generateText({ model: openai.responses("claude"), prompt: "again", providerOptions: opts({ previousResponseId: id }) });
    expect(second.text).toBe("Claude: again");
    const assistant = sentMessages(env.ant).at(-1).messages.find((m: { role: string }) => m.role === "assistant");
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
    env.ant.setDefault("/messages", parallel);
    const { createOpenAI } = await import("@ai-sdk/openai");
    const { streamText, tool, stepCountIs } = await import("ai");
    const openai = createOpenAI({ baseURL: `${env.router.url}/v1`, apiKey: "test-key" });
    const get_weather = tool({ description: "weather", inputSchema: z.object({ city: z.string() }), execute: async ({ city }: { city: string }) => `snow in ${city}` });
    const s = streamText({ model: openai.responses("claude"), prompt: "Weather in Oslo and Bergen?", tools: { get_weather }, stopWhen: stepCountIs(3), providerOptions: { openai: { reasoningEffort: "low", forceReasoning: true } } });
    expect(await s.text).toBe("snow in Oslo | snow in Bergen");
    const sent = sentMessages(env.ant);
    expect(sent).toHaveLength(2);
    const [, assistant, user] = sent[1].messages;
    expect(assistant.content.map((b: { type: string }) => b.type)).toEqual(["thinking", "tool_use", "tool_use"]);
    expect(user.content.map((b: { tool_use_id?: string }) => b.tool_use_id)).toEqual(["toolu_p1", "toolu_p2"]);
  });

  it("interleaved thinking (thinking, call, thinking, call) comes back in its order through the AI SDK's references", async () => {
    const SIG2 = "EqQBCkgIARAB/second+sig==";
    env.ant.setDefault("/messages", (req) => {
      if (JSON.stringify(req.body.messages).includes("tool_result")) return parallel(req);
      return messageReply(message([thinkingBlock("First Oslo.", SIG), toolUseBlock("toolu_p1", "get_weather", { city: "Oslo" }), thinkingBlock("Then Bergen.", SIG2), toolUseBlock("toolu_p2", "get_weather", { city: "Bergen" })], { stop_reason: "tool_use" }), req);
    });
    const { createOpenAI } = await import("@ai-sdk/openai");
    const { generateText, tool, stepCountIs } = await import("ai");
    const openai = createOpenAI({ baseURL: `${env.router.url}/v1`, apiKey: "test-key" });
    const get_weather = tool({ description: "weather", inputSchema: z.object({ city: z.string() }), execute: async ({ city }: { city: string }) => `snow in ${city}` });
    const r = await generateText({ model: openai.responses("claude"), prompt: "Weather in Oslo and Bergen?", tools: { get_weather }, stopWhen: stepCountIs(3), providerOptions: { openai: { reasoningEffort: "low", forceReasoning: true } } });
    expect(r.text).toBe("snow in Oslo | snow in Bergen");
    const assistant = sentMessages(env.ant)[1].messages[1];
    expect(assistant.content.map((b: { type: string; signature?: string; id?: string }) => b.signature ?? b.id)).toEqual([SIG, "toolu_p1", SIG2, "toolu_p2"]);
  });

  it("the openai SDK's stream helper sees both calls with their arguments", async () => {
    env.ant.setDefault("/messages", parallel);
    const stream = env.router.client.responses.stream({ model: "claude", input: "Weather?", tools: [{ type: "function", name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } }, strict: false }] });
    const done: string[] = [];
    stream.on("response.function_call_arguments.done", (e) => done.push(e.arguments));
    const final = await stream.finalResponse();
    const calls = final.output.filter((o) => o.type === "function_call");
    expect(calls.map((c) => c.type === "function_call" && [c.call_id, JSON.parse(c.arguments).city])).toEqual([["toolu_p1", "Oslo"], ["toolu_p2", "Bergen"]]);
    expect(done.map((a) => JSON.parse(a).city)).toEqual(["Oslo", "Bergen"]);
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
      env.ant.setDefault("/messages", tricky);
      const { createOpenAI } = await import("@ai-sdk/openai");
      const ai = await import("ai");
      const openai = createOpenAI({ baseURL: `${env.router.url}/v1`, apiKey: "test-key" });
      const calls: string[] = [];
      const args = { model: openai.responses("claude"), prompt: "Weather?", tools: { get_weather: await weatherAi(calls) }, stopWhen: ai.stepCountIs(3), providerOptions: { openai: { reasoningEffort: "low", forceReasoning: true, reasoningSummary: "auto" } } };
      const text = stream ? await ai.streamText(args).text : (await ai.generateText(args)).text;
      expect(text).toBe("done");
      const sent = sentMessages(env.ant);
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

describe("LangChain's server-side state and zdr on anthropic", () => {
  const weatherTool = { type: "function" as const, function: { name: "get_weather", description: "weather", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } };

  it("previous_response_id as a call option carries the tool loop, thinking signed", async () => {
    const { ChatOpenAI } = await import("@langchain/openai");
    const { ToolMessage } = await import("@langchain/core/messages");
    const llm = new ChatOpenAI({ model: "claude", apiKey: "test-key", useResponsesApi: true, maxRetries: 0, configuration: { baseURL: `${env.router.url}/v1` }, modelKwargs: { reasoning: { effort: "low" } } }).bindTools([weatherTool]);
    const first = await llm.invoke("Weather in Oslo?");
    const id = first.response_metadata?.id ?? first.id;
    expect(String(id)).toMatch(/^resp_/);
    const second = await llm.invoke([new ToolMessage({ content: "light snow", tool_call_id: "toolu_qa1" })], { previous_response_id: id } as never);
    expect(second.text).toBe("Oslo: light snow");
    const assistant = sentMessages(env.ant)[1].messages.find((m: { role: string }) => m.role === "assistant");
    expect(assistant.content[0]).toEqual({ type: "thinking", thinking: THINKING, signature: SIG });
  });

  // With zdrEnabled LangChain sends reasoning back only when it has its encrypted_content (as for OpenAI): include asks for it.
  it("zdrEnabled (store: false, encrypted reasoning sent back by the client) keeps the thinking signed", async () => {
    const { ChatOpenAI } = await import("@langchain/openai");
    const { HumanMessage, ToolMessage } = await import("@langchain/core/messages");
    const llm = new ChatOpenAI({ model: "claude", apiKey: "test-key", useResponsesApi: true, zdrEnabled: true, maxRetries: 0, configuration: { baseURL: `${env.router.url}/v1` }, modelKwargs: { reasoning: { effort: "low" }, include: ["reasoning.encrypted_content"] } }).bindTools([weatherTool]);
    const history: any[] = [new HumanMessage("Weather in Oslo?")];
    const first = await llm.invoke(history);
    history.push(first, new ToolMessage({ content: "light snow", tool_call_id: "toolu_qa1" }));
    const second = await llm.invoke(history);
    expect(second.text).toBe("Oslo: light snow");
    const sent = sentMessages(env.ant);
    expect(sent[1].messages[1].content[0]).toEqual({ type: "thinking", thinking: THINKING, signature: SIG });
  });
});

describe("AI SDK options Claude cannot honour are answered as documented", () => {
  it("logprobs (include message.output_text.logprobs, top_logprobs) answers with empty logprobs", async () => {
    const { createOpenAI } = await import("@ai-sdk/openai");
    const { generateText, streamText } = await import("ai");
    const openai = createOpenAI({ baseURL: `${env.router.url}/v1`, apiKey: "test-key" });
    const r = await generateText({ model: openai.responses("claude"), prompt: "hi", providerOptions: { openai: { logprobs: 2 } } });
    expect(r.text).toBe("Claude: hi");
    const s = streamText({ model: openai.responses("claude"), prompt: "hi", providerOptions: { openai: { logprobs: true } } });
    expect(await s.text).toBe("Claude: hi");
    sentMessages(env.ant);
  });

  it("a file by an id the router's Files do not hold is a 404, surfaced by the SDK", async () => {
    const { createOpenAI } = await import("@ai-sdk/openai");
    const { generateText } = await import("ai");
    const openai = createOpenAI({ baseURL: `${env.router.url}/v1`, apiKey: "test-key" });
    const call = generateText({ model: openai.responses("claude"), maxRetries: 0, messages: [{ role: "user", content: [{ type: "text", text: "read" }, { type: "file", data: "file-abc123", mediaType: "application/pdf" }] }] });
    await expect(call).rejects.toMatchObject({ statusCode: 404 });
    expect(env.ant.requests.filter((r) => r.path === "/messages")).toHaveLength(0);
  });
});
