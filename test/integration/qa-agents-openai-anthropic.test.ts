/**
 * The OpenAI Agents SDK and the openai SDK as real clients of kind: anthropic next to chat:
 * multi-turn agents with function tools, a fallback from anthropic to chat mid-conversation,
 * sessions, handoffs between kinds, the Responses WebSocket; the openai SDK's stream, compact,
 * conversations, include on retrieval and input_tokens.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { anthropicError, message, messageReply, sentMessages, textBlock, thinkingBlock, toolUseBlock } from "../helpers/anthropic-mock.js";
import { anthropicBackend, SIG, THINKING, useClaudeRouter } from "../helpers/claude-env.js";
import { chatBackend } from "../helpers/client-backends.js";
import { chatCompletion, type RecordedRequest, type Reply } from "../helpers/mock-upstream.js";

const env = useClaudeRouter();

describe("the openai SDK on anthropic: stream, compact, conversations", () => {
  it("responses.stream gives the SDK's final response with reasoning and text", async () => {
    const stream = env.router.client.responses.stream({ model: "claude", input: "hello", reasoning: { effort: "low" }, include: ["reasoning.encrypted_content"] });
    const deltas: string[] = [];
    stream.on("response.output_text.delta", (e) => deltas.push(e.delta));
    const final = await stream.finalResponse();
    expect(final.status).toBe("completed");
    expect(final.output_text).toBe("Claude: hello");
    expect(deltas.join("")).toBe("Claude: hello");
    const reasoning = final.output.find((o) => o.type === "reasoning")!;
    expect(reasoning.type === "reasoning" && reasoning.encrypted_content).toMatch(/^anthropic\./);
    const next = await env.router.client.responses.create({ model: "claude", input: "again", previous_response_id: final.id, reasoning: { effort: "low" } });
    expect(next.output_text).toBe("Claude: again");
    const assistant = sentMessages(env.ant).at(-1).messages.find((m: { role: string }) => m.role === "assistant");
    expect(assistant.content[0]).toEqual({ type: "thinking", thinking: "Thinking about hello", signature: SIG });
  });

  it("include reasoning.encrypted_content on retrieval returns the signed block", async () => {
    const r = await env.router.client.responses.create({ model: "claude", input: "hello", reasoning: { effort: "low" } });
    const plain = r.output.find((o) => o.type === "reasoning") as { encrypted_content?: string | null };
    expect(plain.encrypted_content ?? null).toBeNull();
    const got = await env.router.client.responses.retrieve(r.id, { include: ["reasoning.encrypted_content"] });
    const item = got.output.find((o) => o.type === "reasoning") as { encrypted_content?: string | null };
    expect(item.encrypted_content).toMatch(/^anthropic\./);
    const again = await env.router.client.responses.retrieve(r.id);
    expect((again.output.find((o) => o.type === "reasoning") as { encrypted_content?: string | null }).encrypted_content ?? null).toBeNull();
    const items = await env.router.client.responses.inputItems.list(r.id);
    expect(items.data.length).toBeGreaterThan(0);
  });

  it("responses.compact on a stored anthropic chain, then a turn over the compacted window", async () => {
    const first = await env.router.client.responses.create({ model: "claude", input: "hello" });
    const compacted = await env.router.client.responses.compact({ model: "claude", previous_response_id: first.id });
    expect(compacted.object).toBe("response.compaction");
    expect(compacted.output.length).toBeGreaterThan(0);
    const next = await env.router.client.responses.create({ model: "claude", input: [...(compacted.output as any[]), { role: "user", content: "again" }] });
    expect(next.output_text).toBe("Claude: again");
    sentMessages(env.ant);
  });

  it("responses.compact right after a thinking tool loop (tool_use/tool_result in the history), then the loop's next turn", async () => {
    const tools = [{ type: "function" as const, name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } }, strict: false }];
    const first = await env.router.client.responses.create({ model: "claude", input: "Weather in Oslo?", tools, reasoning: { effort: "low" } });
    const call = first.output.find((o) => o.type === "function_call")!;
    const second = await env.router.client.responses.create({ model: "claude", previous_response_id: first.id, input: [{ type: "function_call_output", call_id: (call as { call_id: string }).call_id, output: "snow" }], tools, reasoning: { effort: "low" } });
    expect(second.output_text).toBe("Oslo: snow");
    for (const stream of [false, true]) {
      const compacted = stream
        ? await (async () => {
            const res = await env.router.fetch("/v1/responses", { method: "POST", headers: { authorization: "Bearer test-key", "content-type": "application/json" }, body: JSON.stringify({ model: "claude", previous_response_id: second.id, input: [{ type: "compaction_trigger" }], stream: true }) });
            expect(res.status).toBe(200);
            const { parseSse } = await import("../helpers/router.js");
            return parseSse(await res.text()).find((e) => e.event === "response.completed")!.data.response;
          })()
        : await env.router.client.responses.compact({ model: "claude", previous_response_id: second.id });
      expect(compacted.output.some((o: { type: string }) => o.type === "compaction")).toBe(true);
      const summaryReq = sentMessages(env.ant).at(-1);
      expect(summaryReq.thinking).toBeUndefined();
      const next = await env.router.client.responses.create({ model: "claude", input: [...(compacted.output as any[]), { role: "user", content: "again" }], tools, reasoning: { effort: "low" } });
      expect(next.status).toBe("completed");
      sentMessages(env.ant);
    }
  });

  it("context_management compacts in the middle of a thinking tool loop: the answer request stays valid", async () => {
    const tools = [{ type: "function" as const, name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } }, strict: false }];
    const first = await env.router.client.responses.create({ model: "claude", input: "Weather in Oslo?", tools, reasoning: { effort: "low" } });
    const call = first.output.find((o) => o.type === "function_call") as { call_id: string };
    env.ant.setDefault("/messages/count_tokens", { kind: "json", body: { input_tokens: 5000 } });
    try {
      for (const stream of [false, true]) {
        const body = { model: "claude", previous_response_id: first.id, input: [{ type: "function_call_output", call_id: call.call_id, output: "snow" }], tools, reasoning: { effort: "low" }, context_management: [{ type: "compaction", compact_threshold: 1000 }] };
        const res = await env.router.fetch("/v1/responses", { method: "POST", headers: { authorization: "Bearer test-key", "content-type": "application/json" }, body: JSON.stringify({ ...body, stream }) });
        expect(res.status).toBe(200);
        const text = await res.text();
        const { parseSse } = await import("../helpers/router.js");
        const r = stream ? parseSse(text).find((e) => e.event === "response.completed")!.data.response : JSON.parse(text);
        expect(r.status).toBe("completed");
        expect(r.output[0].type).toBe("compaction");
        sentMessages(env.ant); // every request (summary and answer) is a valid Messages request
      }
    } finally {
      env.ant.setDefault("/messages/count_tokens", { kind: "json", body: { input_tokens: 42 } });
    }
  });

  it("conversations: two turns on anthropic keep the history, items list shows both turns", async () => {
    const conv = await env.router.client.conversations.create({ items: [{ type: "message", role: "user", content: "hello" }] });
    const t1 = await env.router.client.responses.create({ model: "claude", conversation: conv.id, input: [] as any, reasoning: { effort: "low" } });
    expect(t1.output_text).toBe("Claude: hello");
    const t2 = await env.router.client.responses.create({ model: "claude", conversation: conv.id, input: "again", reasoning: { effort: "low" } });
    expect(t2.output_text).toBe("Claude: again");
    const assistant = sentMessages(env.ant).at(-1).messages.find((m: { role: string }) => m.role === "assistant");
    expect(assistant.content[0]).toEqual({ type: "thinking", thinking: "Thinking about hello", signature: SIG });
    const items = await env.router.client.conversations.items.list(conv.id, { order: "asc" });
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
      model: new OpenAIResponsesModel(env.router.client, model),
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
        const sent = sentMessages(env.ant);
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
    env.ant.setDefault("/messages", (req) => (++n === 1 ? anthropicBackend(req) : anthropicError(529, "overloaded_error", "Overloaded")));
    const first = await run(agent, "Weather in Oslo?");
    expect(calls).toEqual(["Oslo"]);
    expect(first.finalOutput).toBe("Result: light snow");
    const chatReq = env.chat.requests.at(-1)!.body;
    expect(chatReq.messages.at(-1)).toEqual({ role: "tool", tool_call_id: "toolu_qa1", content: "light snow" });
    expect(JSON.stringify(chatReq)).not.toContain("anthropic.");
    // Anthropic is back: the next run carries the chat turn's items and the anthropic thinking.
    env.ant.setDefault("/messages", anthropicBackend);
    env.ant.requests.length = 0;
    const second = await run(agent, [...first.history, { role: "user", content: "Thanks" }]);
    expect(second.finalOutput).toBe("Oslo: light snow");
    const sent = sentMessages(env.ant);
    expect(sent).toHaveLength(1);
    const assistants = sent[0].messages.filter((m: { role: string }) => m.role === "assistant");
    expect(assistants[0].content[0]).toEqual({ type: "thinking", thinking: THINKING, signature: SIG });
  });
});

describe("sessions, WebSocket and background on anthropic", () => {
  it("an Agents SDK OpenAIConversationsSession keeps a two-turn tool loop with signed thinking", async () => {
    const { Agent, OpenAIConversationsSession, OpenAIResponsesModel, run, tool, setTracingDisabled } = await import("@openai/agents");
    setTracingDisabled(true);
    const calls: string[] = [];
    const getWeather = tool({ name: "get_weather", description: "weather", parameters: z.object({ city: z.string() }), execute: async ({ city }) => (calls.push(city), "light snow") });
    const agent = new Agent({ name: "W", instructions: "Answer.", model: new OpenAIResponsesModel(env.router.client, "claude"), tools: [getWeather], modelSettings: { reasoning: { effort: "low" } } });
    const session = new OpenAIConversationsSession({ client: env.router.client });
    const first = await run(agent, "Weather in Oslo?", { session });
    expect(first.finalOutput).toBe("Oslo: light snow");
    const second = await run(agent, "And tomorrow?", { session, stream: true });
    for await (const _ of second) void _;
    await second.completed;
    expect(second.error).toBeNull();
    expect(second.finalOutput).toBe("Oslo: light snow");
    expect(calls).toEqual(["Oslo"]);
    const last = sentMessages(env.ant).at(-1);
    const assistant = last.messages.find((m: { role: string }) => m.role === "assistant");
    expect(assistant.content[0]).toEqual({ type: "thinking", thinking: THINKING, signature: SIG });
  });

  it("an Agents SDK tool loop without include sends the thinking back by the reasoning item's id, as OpenAI resolves it", async () => {
    const { Agent, OpenAIResponsesModel, run, tool, setTracingDisabled } = await import("@openai/agents");
    setTracingDisabled(true);
    const getWeather = tool({ name: "get_weather", description: "weather", parameters: z.object({ city: z.string() }), execute: async () => "light snow" });
    const agent = new Agent({ name: "W", model: new OpenAIResponsesModel(env.router.client, "claude"), tools: [getWeather], modelSettings: { reasoning: { effort: "low" } } });
    const result = await run(agent, "Weather in Oslo?");
    expect(result.finalOutput).toBe("Oslo: light snow");
    const sent = sentMessages(env.ant);
    expect(sent).toHaveLength(2);
    expect(sent[1].thinking?.type).toBe("enabled");
    const assistant = sent[1].messages.find((m: { role: string }) => m.role === "assistant");
    expect(assistant.content[0]).toEqual({ type: "thinking", thinking: THINKING, signature: SIG });
  });

  it("WebSocket: a tool turn then its output by previous_response_id sends the signed thinking back", async () => {
    const { WsClient } = await import("../helpers/ws-client.js");
    const ws = new WsClient(env.router.url);
    try {
      const tools = [{ type: "function", name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } }, strict: false }];
      const e1 = await ws.create({ model: "claude", input: "Weather in Oslo?", tools, reasoning: { effort: "low" } } as any);
      const done = e1.find((e) => e.type === "response.completed")!;
      const call = done.response.output.find((o: { type: string }) => o.type === "function_call");
      expect(call.call_id).toBe("toolu_qa1");
      const e2 = await ws.create({ model: "claude", previous_response_id: done.response.id, input: [{ type: "function_call_output", call_id: call.call_id, output: "light snow" }], tools, reasoning: { effort: "low" } } as any);
      const done2 = e2.find((e) => e.type === "response.completed")!;
      expect(done2.response.output.at(-1).content[0].text).toBe("Oslo: light snow");
      const assistant = sentMessages(env.ant).at(-1).messages.find((m: { role: string }) => m.role === "assistant");
      expect(assistant.content[0]).toEqual({ type: "thinking", thinking: THINKING, signature: SIG });
    } finally {
      ws.ws.close();
    }
  });

  it("background on anthropic: stream again with include gives the encrypted thinking", async () => {
    const queued = await env.router.client.responses.create({ model: "claude", input: "hello", background: true, reasoning: { effort: "low" } });
    let done = queued;
    for (let i = 0; i < 100 && !["completed", "failed"].includes(done.status ?? ""); i++) {
      await new Promise((r) => setTimeout(r, 20));
      done = await env.router.client.responses.retrieve(queued.id);
    }
    expect(done.status).toBe("completed");
    expect(done.output_text).toBe("Claude: hello");
    const withInclude = await env.router.client.responses.retrieve(queued.id, { include: ["reasoning.encrypted_content"] });
    expect((withInclude.output[0] as { encrypted_content?: string }).encrypted_content).toMatch(/^anthropic\./);
    const res = await env.router.fetch(`/v1/responses/${queued.id}?stream=true`, { headers: { authorization: "Bearer test-key" } });
    const text = await res.text();
    expect(text).toContain("response.completed");
    expect(text).not.toContain("anthropic.");
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
    env.ant.setDefault("/messages", handoffAnthropic);
    const local = new Agent({ name: "Local", instructions: "Answer.", model: new OpenAIResponsesModel(env.router.client, "local") });
    const triage = new Agent({ name: "Triage", instructions: "Route.", model: new OpenAIResponsesModel(env.router.client, "claude"), handoffs: [local], modelSettings: { reasoning: { effort: "low" } } });
    const r1 = await run(triage, "hello");
    expect(r1.lastAgent?.name).toBe("Local");
    expect(r1.finalOutput).toBe(`Result: {"assistant":"Local"}`); // the chat mock quotes the handoff's tool output
    const chatMsgs = env.chat.requests.at(-1)!.body.messages;
    expect(JSON.stringify(chatMsgs)).not.toContain("anthropic.");

    // chat -> anthropic: the chat mock calls a tool named like *get_weather only; give the local agent a handoff it calls by name.
    env.chat.setDefault("/chat/completions", (req) => {
      const names = ((req.body.tools ?? []) as { function: { name: string } }[]).map((t) => t.function.name);
      const transfer = names.find((n) => n.startsWith("transfer_to_"));
      const hasResult = req.body.messages.some((m: { role: string }) => m.role === "tool");
      if (transfer && !hasResult) {
        return { kind: "json", body: chatCompletion(null, req.body.model, { tool_calls: [{ id: "call_h2", type: "function", function: { name: transfer, arguments: "{}" } }] }) };
      }
      return chatBackend(req);
    });
    try {
      const claude = new Agent({ name: "Claude", instructions: "Answer.", model: new OpenAIResponsesModel(env.router.client, "claude"), modelSettings: { reasoning: { effort: "low" } } });
      const front = new Agent({ name: "Front", instructions: "Route.", model: new OpenAIResponsesModel(env.router.client, "local"), handoffs: [claude] });
      const r2 = await run(front, "hi");
      expect(r2.lastAgent?.name).toBe("Claude");
      expect(r2.finalOutput).toBe("Claude answers");
      const sent = sentMessages(env.ant).at(-1);
      expect(JSON.stringify(sent.messages)).toContain("call_h2");
    } finally {
      env.chat.setDefault("/chat/completions", chatBackend);
    }
  });

  it("run with previousResponseId and conversationId on anthropic", async () => {
    const { Agent, OpenAIResponsesModel, run, setTracingDisabled } = await import("@openai/agents");
    setTracingDisabled(true);
    const agent = new Agent({ name: "C", instructions: "Answer.", model: new OpenAIResponsesModel(env.router.client, "claude"), modelSettings: { reasoning: { effort: "low" } } });
    const first = await run(agent, "hello");
    expect(first.finalOutput).toBe("Claude: hello");
    const second = await run(agent, "again", { previousResponseId: first.lastResponseId });
    expect(second.finalOutput).toBe("Claude: again");
    let assistant = sentMessages(env.ant).at(-1).messages.find((m: { role: string }) => m.role === "assistant");
    expect(assistant.content[0]).toEqual({ type: "thinking", thinking: "Thinking about hello", signature: SIG });
    const conv = await env.router.client.conversations.create({});
    await run(agent, "one", { conversationId: conv.id });
    const r = await run(agent, "two", { conversationId: conv.id });
    expect(r.finalOutput).toBe("Claude: two");
    assistant = sentMessages(env.ant).at(-1).messages.find((m: { role: string }) => m.role === "assistant");
    expect(assistant.content[0]).toEqual({ type: "thinking", thinking: "Thinking about one", signature: SIG });
  });
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
        { providerOptions: { openAIClient: env.router.client, useResponsesWebSocket: true } },
      );
      const expected = model === "claude" ? "Oslo: light snow" : "Result: light snow";
      expect(outputs).toEqual([expected, expected, null]);
      const metrics = await (await env.router.fetch("/metrics")).text();
      expect(metrics).toContain(`responses_router_responses_total{transport="websocket",model="${model}",status="200"}`);
      if (model === "claude") {
        const sent = sentMessages(env.ant);
        expect(sent[1].thinking?.type).toBe("enabled");
        expect(sent[1].messages.find((m: { role: string }) => m.role === "assistant").content[0]).toEqual({ type: "thinking", thinking: THINKING, signature: SIG });
      }
    });
  }
});

describe("include on a conversation's items and a response's input items (anthropic)", () => {
  it("the reasoning item's encrypted_content shows only when included, and round-trips from the listing", async () => {
    const conv = await env.router.client.conversations.create({});
    await env.router.client.responses.create({ model: "claude", conversation: conv.id, input: "hello", reasoning: { effort: "low" } });
    const plain = await env.router.client.conversations.items.list(conv.id, { order: "asc" });
    const rsPlain = plain.data.find((i) => i.type === "reasoning") as { encrypted_content?: string | null; id: string };
    expect(rsPlain.encrypted_content ?? null).toBeNull();
    const full = await env.router.client.conversations.items.list(conv.id, { order: "asc", include: ["reasoning.encrypted_content"] });
    const rs = full.data.find((i) => i.type === "reasoning") as { encrypted_content?: string | null };
    expect(rs.encrypted_content).toMatch(/^anthropic\./);
    const one = await env.router.client.conversations.items.retrieve(rsPlain.id, { conversation_id: conv.id, include: ["reasoning.encrypted_content"] });
    expect((one as { encrypted_content?: string }).encrypted_content).toBe(rs.encrypted_content);
    // Items from the listing sent back whole (store: false) to a new response: the thinking goes back signed.
    const items = full.data.map((item) => { const { status: _s, ...i } = item as { status?: unknown }; return i; });
    const r = await env.router.client.responses.create({ model: "claude", store: false, input: [...(items as any[]), { role: "user", content: "again" }], reasoning: { effort: "low" } });
    expect(r.output_text).toBe("Claude: again");
    const assistant = sentMessages(env.ant).at(-1).messages.find((m: { role: string }) => m.role === "assistant");
    expect(assistant.content[0]).toEqual({ type: "thinking", thinking: "Thinking about hello", signature: SIG });
    // input_items with include on a stored response whose input carried the reasoning item
    const stored = await env.router.client.responses.create({ model: "claude", input: [...(items as any[]), { role: "user", content: "more" }], reasoning: { effort: "low" } });
    const inPlain = await env.router.client.responses.inputItems.list(stored.id);
    expect((inPlain.data.find((i) => i.type === "reasoning") as { encrypted_content?: string | null }).encrypted_content ?? null).toBeNull();
    const inFull = await env.router.client.responses.inputItems.list(stored.id, { include: ["reasoning.encrypted_content"] });
    expect((inFull.data.find((i) => i.type === "reasoning") as { encrypted_content?: string | null }).encrypted_content).toBe(rs.encrypted_content);
  });
});

describe("input_tokens over what clients send", () => {
  it("anthropic: item_references and a bare reasoning item are resolved before count_tokens", async () => {
    const first = await env.router.client.responses.create({ model: "claude", input: "hello", reasoning: { effort: "low" } });
    const [rs, msg] = first.output;
    const counted = await env.router.client.responses.inputTokens.count({
      model: "claude",
      reasoning: { effort: "low" },
      input: [{ role: "user", content: "hello" }, { type: "reasoning", id: rs.id!, summary: [] }, { type: "item_reference", id: msg.id! }, { role: "user", content: "again" }] as any,
    });
    expect(counted.input_tokens).toBe(42);
    const body = env.ant.requests.filter((r) => r.path === "/messages/count_tokens").at(-1)!.body;
    const assistant = body.messages.find((m: { role: string }) => m.role === "assistant");
    expect(assistant.content[0]).toEqual({ type: "thinking", thinking: "Thinking about hello", signature: SIG });
    expect(assistant.content[1]).toMatchObject({ type: "text", text: "Claude: hello" });
  });

  it("chat: an item_reference is resolved before the estimate", async () => {
    const first = await env.router.client.responses.create({ model: "local", input: "hello" });
    const msg = first.output.find((o) => o.type === "message")!;
    const withRef = await env.router.client.responses.inputTokens.count({ model: "local", input: [{ role: "user", content: "hello" }, { type: "item_reference", id: msg.id! }] as any });
    const inline = await env.router.client.responses.inputTokens.count({ model: "local", input: [{ role: "user", content: "hello" }, { role: "assistant", content: "Echo: hello" }] as any });
    expect(withRef.input_tokens).toBe(inline.input_tokens);
  });
});

describe("an Agents SDK agent with an outputType and tools on anthropic", () => {
  for (const thinking of [false, true]) {
    it(`calls its tool, then gives the structured answer through the answer tool (${thinking ? "thinking" : "no thinking"})`, async () => {
      env.ant.setDefault("/messages", (req) => {
        const tools = (req.body.tools ?? []) as { name: string; description?: string }[];
        const answer = tools.find((t) => t.description?.startsWith("Give the final answer"))!;
        const hasResult = JSON.stringify(req.body.messages).includes("tool_result");
        const think = req.body.thinking?.type === "enabled" ? [thinkingBlock(THINKING, SIG)] : [];
        if (!hasResult) return messageReply(message([...think, toolUseBlock("toolu_s1", "get_weather", { city: "Oslo" })], { stop_reason: "tool_use" }), req);
        return messageReply(message([...think, toolUseBlock("toolu_s2", answer.name, { city: "Oslo", summary: "snow" })], { stop_reason: "tool_use" }), req);
      });
      const { Agent, OpenAIResponsesModel, run, tool, setTracingDisabled } = await import("@openai/agents");
      setTracingDisabled(true);
      const getWeather = tool({ name: "get_weather", description: "weather", parameters: z.object({ city: z.string() }), execute: async () => "snow" });
      const agent = new Agent({
        name: "W",
        instructions: "Answer.",
        model: new OpenAIResponsesModel(env.router.client, "claude"),
        tools: [getWeather],
        outputType: z.object({ city: z.string(), summary: z.string() }),
        ...(thinking ? { modelSettings: { reasoning: { effort: "low" as const } } } : {}),
      });
      const result = await run(agent, "Weather in Oslo?");
      expect(result.finalOutput).toEqual({ city: "Oslo", summary: "snow" });
      const sent = sentMessages(env.ant);
      expect(sent).toHaveLength(2);
      if (thinking) expect(sent[1].messages[1].content[0]).toEqual({ type: "thinking", thinking: THINKING, signature: SIG });
    });
  }
});

describe("the WebSocket with store: false across a fallback", () => {
  it("turn 1 on anthropic, turn 2 (previous_response_id on the connection) falls back to chat, turn 3 back on anthropic", async () => {
    const { WsClient } = await import("../helpers/ws-client.js");
    const ws = new WsClient(env.router.url);
    try {
      const tools = [{ type: "function", name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } }, strict: false }];
      const base = { model: "claude-or-local", store: false, tools, reasoning: { effort: "low" } };
      const e1 = await ws.create({ ...base, input: "Weather in Oslo?" } as any);
      const r1 = e1.find((e) => e.type === "response.completed")!.response;
      const call = r1.output.find((o: { type: string }) => o.type === "function_call");
      env.ant.setDefault("/messages", anthropicError(529, "overloaded_error", "Overloaded"));
      const e2 = await ws.create({ ...base, previous_response_id: r1.id, input: [{ type: "function_call_output", call_id: call.call_id, output: "snow" }] } as any);
      const r2 = e2.find((e) => e.type === "response.completed")!.response;
      expect(r2.output.at(-1).content[0].text).toBe("Result: snow");
      expect(env.chat.requests.at(-1)!.body.messages.at(-1)).toEqual({ role: "tool", tool_call_id: call.call_id, content: "snow" });
      env.ant.setDefault("/messages", anthropicBackend);
      env.ant.requests.length = 0;
      const e3 = await ws.create({ ...base, previous_response_id: r2.id, input: "Thanks" } as any);
      const r3 = e3.find((e) => e.type === "response.completed")!.response;
      expect(r3.output.at(-1).content[0].text).toBe("Oslo: snow");
      const sent = sentMessages(env.ant).at(-1);
      expect(sent.messages[1].content[0]).toEqual({ type: "thinking", thinking: THINKING, signature: SIG });
    } finally {
      ws.ws.close();
    }
  });
});

describe("cancelling an anthropic background response", () => {
  it("responses.cancel stops the job, closes the upstream stream, and the response stays cancelled", async () => {
    const { sseFrames, streamEvents } = await import("../helpers/anthropic-mock.js");
    const long = message([textBlock("a long answer ".repeat(40))]);
    env.ant.setDefault("/messages", { kind: "sse", frames: sseFrames(streamEvents(long)), delayMs: 100 });
    const queued = await env.router.client.responses.create({ model: "claude", input: "write a lot", background: true });
    for (let i = 0; i < 100 && env.ant.open() === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(env.ant.open()).toBe(1);
    const cancelled = await env.router.client.responses.cancel(queued.id);
    expect(cancelled.status).toBe("cancelled");
    for (let i = 0; i < 100 && env.ant.open() > 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(env.ant.open()).toBe(0);
    await new Promise((r) => setTimeout(r, 200));
    expect((await env.router.client.responses.retrieve(queued.id)).status).toBe("cancelled");
  });
});
