/**
 * Real clients on kind: anthropic: the OpenAI Agents SDK runs a tool loop (model calls the tool
 * -> tool result -> final answer) through the router, streamed and not, against an Anthropic
 * Messages mock whose requests are checked against the Messages request shape.
 */
import { Agent, OpenAIResponsesModel, run, setTracingDisabled, tool } from "@openai/agents";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { message, messageReply, sentMessages, startAnthropicMock, textBlock, thinkingBlock, toolUseBlock } from "../helpers/anthropic-mock.js";
import type { MockUpstream, RecordedRequest, Reply } from "../helpers/mock-upstream.js";
import { startTestRouter, type TestRouter } from "../helpers/router.js";

const SIG = "EqQBCkgIARAB/agents+sig==";
let mock: MockUpstream;
let router: TestRouter;

/** A tool call (with thinking) while no tool result is in the conversation, then an answer quoting it. */
function backend(req: RecordedRequest): Reply {
  const messages = req.body.messages as { role: string; content: { type: string; content?: unknown }[] }[];
  const result = messages.flatMap((m) => m.content).find((b) => b.type === "tool_result");
  if (!result) return messageReply(message([thinkingBlock("Need the weather tool.", SIG), toolUseBlock("toolu_agents", "get_weather", { city: "Oslo" })], { stop_reason: "tool_use" }), req);
  return messageReply(message([textBlock(`Oslo: ${String(result.content)}`)]), req);
}

beforeAll(async () => {
  setTracingDisabled(true);
  mock = await startAnthropicMock();
  mock.setDefault("/messages", backend);
  router = await startTestRouter({ endpoints: [{ name: "claude-ep", url: mock.url, kind: "anthropic", api_key: "sk-ant-test-0123456789" }], models: { claude: { endpoints: ["claude-ep"] } } });
});
afterAll(async () => {
  await router?.close(1000);
  await mock?.close();
});
beforeEach(() => {
  mock.requests.length = 0;
});

function weatherAgent(calls: string[], reasoning = false) {
  const getWeather = tool({
    name: "get_weather",
    description: "Current weather for a city",
    parameters: z.object({ city: z.string() }),
    execute: async ({ city }) => {
      calls.push(city);
      return "light snow, -3C";
    },
  });
  return new Agent({
    name: "Weather",
    instructions: "Answer with the weather.",
    model: new OpenAIResponsesModel(router.client, "claude"),
    tools: [getWeather],
    ...(reasoning ? { modelSettings: { reasoning: { effort: "low" as const }, providerData: { include: ["reasoning.encrypted_content"] } } } : {}),
  });
}

describe("Agents SDK tool loop on an anthropic backend", () => {
  it("finishes the loop without streaming", async () => {
    const calls: string[] = [];
    const result = await run(weatherAgent(calls), "Weather in Oslo?");
    expect(calls).toEqual(["Oslo"]);
    expect(result.finalOutput).toBe("Oslo: light snow, -3C");
    const sent = sentMessages(mock);
    expect(sent).toHaveLength(2);
    expect(sent[1].messages.at(-1).content[0]).toEqual({ type: "tool_result", tool_use_id: "toolu_agents", content: "light snow, -3C" });
    expect(sent[0].system[0].text).toBe("Answer with the weather.");
  });

  it("finishes the loop streaming, with thinking sent back signed", async () => {
    const calls: string[] = [];
    const result = await run(weatherAgent(calls, true), "Weather in Oslo?", { stream: true });
    let deltas = "";
    for await (const ev of result) {
      if (ev.type === "raw_model_stream_event" && ev.data.type === "output_text_delta") deltas += ev.data.delta;
    }
    await result.completed;
    expect(result.error).toBeNull();
    expect(result.finalOutput).toBe("Oslo: light snow, -3C");
    expect(deltas).toBe("Oslo: light snow, -3C");
    const sent = sentMessages(mock);
    expect(sent.every((b) => b.stream === true)).toBe(true);
    const assistant = sent[1].messages.find((m: { role: string }) => m.role === "assistant");
    expect(assistant.content[0]).toEqual({ type: "thinking", thinking: "Need the weather tool.", signature: SIG });
    expect(sent[1].thinking).toEqual({ type: "enabled", budget_tokens: 2048 });
  });
});

describe("Vercel AI SDK and LangChain on an anthropic backend", () => {
  it("the AI SDK's openai.responses model generates and streams text, and runs a tool step", async () => {
    const { createOpenAI } = await import("@ai-sdk/openai");
    const { generateText, streamText, tool: aiTool, stepCountIs } = await import("ai");
    const openai = createOpenAI({ baseURL: `${router.url}/v1`, apiKey: "test-key" });
    const calls: string[] = [];
    const tools = {
      get_weather: aiTool({
        description: "Current weather for a city",
        inputSchema: z.object({ city: z.string() }),
        execute: async ({ city }: { city: string }) => {
          calls.push(city);
          return "light snow, -3C";
        },
      }),
    };
    // store: false, so the SDK sends earlier steps' items whole rather than as item_reference ids.
    const providerOptions = { openai: { store: false } };
    const plain = await generateText({ model: openai.responses("claude"), prompt: "Hi?" });
    expect(plain.finishReason).toBe("tool-calls"); // the mock calls the tool when no result is in the conversation
    const r = await generateText({ model: openai.responses("claude"), prompt: "Weather in Oslo?", tools, stopWhen: stepCountIs(3), providerOptions });
    expect(calls).toEqual(["Oslo"]);
    expect(r.text).toBe("Oslo: light snow, -3C");
    const s = streamText({ model: openai.responses("claude"), prompt: "Weather in Oslo?", tools, stopWhen: stepCountIs(3), providerOptions });
    let text = "";
    for await (const part of s.textStream) text += part;
    expect(text).toBe("Oslo: light snow, -3C");
    for (const body of sentMessages(mock)) expect(body.model).toBe("claude");
  });

  it("LangChain's ChatOpenAI with the Responses API answers and streams", async () => {
    const { ChatOpenAI } = await import("@langchain/openai");
    const llm = new ChatOpenAI({ model: "claude", useResponsesApi: true, apiKey: "test-key", configuration: { baseURL: `${router.url}/v1` }, maxRetries: 0 });
    mock.setDefault("/messages", (req) => messageReply(message([textBlock("Hi from LangChain")]), req));
    try {
      const msg = await llm.invoke("hello");
      expect(msg.text).toBe("Hi from LangChain");
      let streamed = "";
      for await (const chunk of await llm.stream("hello")) streamed += chunk.text;
      expect(streamed).toBe("Hi from LangChain");
    } finally {
      mock.setDefault("/messages", backend);
    }
  });
});

describe("traces on an anthropic backend", () => {
  it("the upstream attempt's span names the provider anthropic and carries traceparent to the endpoint, never the key", async () => {
    const { startOtlpReceiver, KIND } = await import("../helpers/otlp-receiver.js");
    const receiver = await startOtlpReceiver();
    const key = "sk-ant-trace-secret-0123456789";
    const r = await startTestRouter(
      { endpoints: [{ name: "claude-ep", url: mock.url, kind: "anthropic", api_key: key }], models: { claude: { endpoints: ["claude-ep"], upstream_model: "claude-up" } }, tracing: { endpoint: receiver.url } },
      { env: {} },
    );
    try {
      mock.setDefault("/messages", (req) => messageReply(message([textBlock("traced")]), req));
      await r.client.responses.create({ model: "claude", input: "hi" });
      await r.runtime.tracing.flush();
      const attempt = receiver.spans.find((s) => s.kind === KIND.client && s.attributes["router.upstream"] === "claude-ep");
      expect(attempt?.attributes).toMatchObject({ "gen_ai.provider.name": "anthropic", "gen_ai.request.model": "claude-up" });
      expect(mock.requests.at(-1)!.headers.traceparent).toMatch(/^00-/);
      expect(mock.requests.at(-1)!.headers["x-api-key"]).toBe(key);
      expect(JSON.stringify(receiver.spans)).not.toContain(key);
    } finally {
      mock.setDefault("/messages", backend);
      await r.close(500);
      await receiver.close();
    }
  });
});
