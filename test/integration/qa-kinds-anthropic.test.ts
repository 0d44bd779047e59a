/**
 * kind: anthropic at the seams with the other kinds: reasoning items crossing kinds in one chain,
 * /v1/models metadata, input_tokens and truncation on each kind, a pool mixing kinds, docs/backends.md's
 * anthropic example verbatim, a Codex-shaped turn, and the leaner shapes and edge answers an
 * Anthropic-compatible server gives.
 */
import { describe, expect, it, beforeAll, afterAll } from "vitest";
import { z } from "zod";
import { anthropicError, message, messageReply, sentMessages, textBlock, toolUseBlock } from "../helpers/anthropic-mock.js";
import { anthropicBackend, SIG, THINKING, useClaudeRouter } from "../helpers/claude-env.js";
import { chatCompletion, startMockUpstream, type MockUpstream, type RecordedRequest, type Reply } from "../helpers/mock-upstream.js";
import { startTestRouter, type TestRouter } from "../helpers/router.js";

const env = useClaudeRouter();

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
        { name: "claude-ep", url: env.ant.url, kind: "anthropic", api_key: "sk-ant-test-0123456789" },
        { name: "box", url: env.chat.url, kind: "chat" },
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
    const counted = env.ant.requests.filter((r) => r.path === "/messages/count_tokens").at(-1)!.body;
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
        const sent = sentMessages(env.ant).at(-1);
        expect(JSON.stringify(sent)).not.toContain("one x");
      } else {
        expect(JSON.stringify(env.chat.requests.at(-1)!.body)).not.toContain("one x");
      }
    });
  }

  it("truncation auto on openai is passed to the upstream", async () => {
    const r = await r2.client.responses.create({ model: "gpt-4.1", input: "hello", truncation: "auto" });
    expect(r.truncation).toBe("auto");
    expect(oai.requests.at(-1)!.body.truncation).toBe("auto");
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
        { name: "claude-ep", url: env.ant.url, kind: "anthropic", api_key: "sk-ant-test-0123456789" },
        { name: "box", url: env.chat.url, kind: "chat" },
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
    const sent = sentMessages(env.ant).at(-1);
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
    const summary = (sentMessages(env.ant).at(-1).messages.at(-1).content as { text?: string }[]).map((b) => b.text ?? "").join("");
    expect(summary).toContain("Context checkpoint");
    for (const [model, mock] of [["local", env.chat], ["gpt-4.1", oai]] as const) {
      const next = await r3.client.responses.create({ model, input: [...(compacted.output as any[]), { role: "user", content: "again" }] });
      expect(next.status).toBe("completed");
      const sent = JSON.stringify(mock.requests.at(-1)!.body);
      expect(sent).toContain("Claude: Context checkpoint"); // the summary Claude wrote (the mock echoes the compaction prompt)
      expect(sent).not.toContain("rrc1.");
      expect(sent).not.toContain("anthropic.");
    }
  });

  it("the AI SDK's default store: true multi-turn with reasoning on openai: the referenced reasoning reaches upstream encrypted", async () => {
    const { createOpenAI } = await import("@ai-sdk/openai");
    const { generateText } = await import("ai");
    const openai = createOpenAI({ baseURL: `${r3.url}/v1`, apiKey: "test-key" });
    const opts = { openai: { reasoningEffort: "low", forceReasoning: true } };
    const first = await generateText({ model: openai.responses("gpt-4.1"), prompt: "hello", providerOptions: opts });
    expect(first.text).toBe("Echo: hello");
    const second = await generateText({ model: openai.responses("gpt-4.1"), messages: [{ role: "user", content: "hello" }, ...first.response.messages, { role: "user", content: "again" }], providerOptions: opts });
    expect(second.text).toBe("Echo: again");
    const input = oai.requests.at(-1)!.body.input as { type?: string; encrypted_content?: string; role?: string }[];
    expect(input.map((i) => i.type ?? i.role)).toEqual(["user", "reasoning", "message", "user"]);
    expect(input[1].encrypted_content).toBe("gAAAAopenai-encrypted");
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

describe("docs/backends.md's anthropic example, verbatim", () => {
  it("parses, and a router built from it (its url pointed at the mock) sends what the comments say", async () => {
    const { readFileSync } = await import("node:fs");
    const { parse } = await import("yaml");
    const readme = readFileSync(new URL("../../docs/backends.md", import.meta.url), "utf8");
    const example = /## Anthropic endpoints\n[\s\S]*?```yaml\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(example).toContain("kind: anthropic");
    const raw = parse(example!.replace("https://api.anthropic.com/v1", env.ant.url).replace("${ANTHROPIC_API_KEY}", "sk-ant-readme-0123456789"));
    raw.endpoints.push({ name: "box", url: env.chat.url, kind: "chat" });
    raw.models["gpt-4.1"] = { endpoints: ["box"] };
    const r = await startTestRouter(raw);
    try {
      const out = await r.client.responses.create({ model: "claude", instructions: "Be brief.", input: "hello", reasoning: { effort: "low" } });
      expect(out.output_text).toBe("Claude: hello");
      expect(out.model).toBe("claude");
      const req = env.ant.requests.at(-1)!;
      expect(req.path).toBe("/messages");
      expect(req.headers["x-api-key"]).toBe("sk-ant-readme-0123456789");
      expect(req.headers["anthropic-version"]).toBe("2026-10-21");
      expect(req.body).toMatchObject({ model: "claude-sonnet-4-5", max_tokens: 8192 + 2048, thinking: { type: "enabled", budget_tokens: 2048 } });
      expect(req.body.system).toEqual([{ type: "text", text: "Be brief.", cache_control: { type: "ephemeral" } }]); // prompt_caching: true
      // fallbacks: [gpt-4.1] serves when Anthropic is overloaded
      env.ant.setDefault("/messages", anthropicError(529, "overloaded_error", "Overloaded"));
      const fb = await r.client.responses.create({ model: "claude", input: "hello" });
      expect(fb.output_text).toBe("Echo: hello");
    } finally {
      await r.close(500);
    }
  });

  it("the endpoint url works with or without /v1 (as the Anthropic SDK's base URL has none)", async () => {
    const bare = env.ant.url.replace(/\/v1$/, "");
    expect(bare).not.toBe(env.ant.url);
    const r = await startTestRouter({ endpoints: [{ name: "a", url: bare, kind: "anthropic", api_key: "sk-ant-test-0123456789" }], models: { claude: { endpoints: ["a"] } } });
    try {
      expect((await r.client.responses.create({ model: "claude", input: "hi" })).output_text).toBe("Claude: hi");
      expect(env.ant.requests.at(-1)!.path).toBe("/messages");
    } finally {
      await r.close(500);
    }
  });
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
      env.ant.setDefault("/messages", reply([{ type: "thinking", thinking: "hmm" }, { type: "text", text: "Hi" }, { type: "tool_use", id: "toolu_l1", name: "get_weather", input: { city: "Oslo" } }], "tool_use"));
      const tools = [{ type: "function" as const, name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } }, strict: false }];
      const r = stream
        ? await env.router.client.responses.stream({ model: "claude", input: "hi", tools, reasoning: { effort: "low" } }).finalResponse()
        : await env.router.client.responses.create({ model: "claude", input: "hi", tools, reasoning: { effort: "low" } });
      expect(r.status).toBe("completed");
      expect(r.output.map((o) => o.type)).toEqual(["reasoning", "message", "function_call"]);
      expect(r.output_text).toBe("Hi");
      const call = r.output[2] as { arguments: string; call_id: string };
      expect(JSON.parse(call.arguments)).toEqual({ city: "Oslo" });
      expect(r.usage).toMatchObject({ input_tokens: 10, output_tokens: 5, total_tokens: 15, input_tokens_details: { cached_tokens: 0 } });
      // the next turn: the thinking without a signature cannot be sent back signed; the request stays valid
      env.ant.setDefault("/messages", reply([{ type: "text", text: "Oslo: snow" }]));
      const next = await env.router.client.responses.create({ model: "claude", previous_response_id: r.id, input: [{ type: "function_call_output", call_id: call.call_id, output: "snow" }], tools, reasoning: { effort: "low" } });
      expect(next.output_text).toBe("Oslo: snow");
      // streamed or not, the unsigned thinking is not sent back (an empty signature is no signature), so thinking is off for the step
      const last = sentMessages(env.ant).at(-1);
      expect(last.thinking).toBeUndefined();
      expect(last.messages[1].content.map((b: { type: string }) => b.type)).toEqual(["text", "tool_use"]);
    });
  }
});

describe("edge answers Claude really gives", () => {
  for (const stream of [false, true]) {
    it(`an empty answer (content: [], end_turn) completes, and the chain continues valid (${stream ? "stream" : "json"})`, async () => {
      env.ant.setDefault("/messages", (req) => messageReply(message([], { stop_reason: "end_turn" }), req));
      const r = stream ? await env.router.client.responses.stream({ model: "claude", input: "hi" }).finalResponse() : await env.router.client.responses.create({ model: "claude", input: "hi" });
      expect(r.status).toBe("completed");
      expect(r.output_text).toBe("");
      env.ant.setDefault("/messages", anthropicBackend);
      const next = await env.router.client.responses.create({ model: "claude", input: "again", previous_response_id: r.id });
      expect(next.output_text).toBe("Claude: again");
      sentMessages(env.ant); // roles alternate, no empty content, no empty text block
    });
  }

  it("an empty text block next to a tool call is not sent back as an empty text block", async () => {
    env.ant.setDefault("/messages", (req) => messageReply(message([textBlock(""), toolUseBlock("toolu_e1", "get_weather", { city: "Oslo" })], { stop_reason: "tool_use" }), req));
    const tools = [{ type: "function" as const, name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } }, strict: false }];
    const r = await env.router.client.responses.create({ model: "claude", input: "hi", tools });
    env.ant.setDefault("/messages", anthropicBackend);
    const next = await env.router.client.responses.create({ model: "claude", previous_response_id: r.id, input: [{ type: "function_call_output", call_id: "toolu_e1", output: "snow" }], tools });
    expect(next.output_text).toBe("Oslo: snow");
    sentMessages(env.ant);
  });
});

describe("a Codex-shaped turn on anthropic", () => {
  it("Codex's fields (store false, include, prompt_cache_key, verbosity, namespaces, freeform apply_patch, web_search) are taken; the next turn sends the items back", async () => {
    env.ant.setDefault("/messages", anthropicBackend);
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
    const post = (b: unknown) => env.router.fetch("/v1/responses", { method: "POST", headers: { authorization: "Bearer test-key", "content-type": "application/json", "OpenAI-Beta": "responses=experimental", originator: "codex_cli_rs" }, body: JSON.stringify(b) });
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
    const sent = sentMessages(env.ant);
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
    const agent = new Agent({ name: "W", instructions: "Answer.", model: new OpenAIResponsesModel(env.router.client, "mix"), tools: [getWeather], modelSettings: { reasoning: { effort: "low" } } });
    // Step 1 on anthropic (a tie of least in-flight goes in pool order), step 2 overloaded there: the chat endpoint serves it.
    let n = 0;
    env.ant.setDefault("/messages", (req) => (++n === 1 ? anthropicBackend(req) : anthropicError(529, "overloaded_error", "Overloaded")));
    const first = await run(agent, "Weather in Oslo?");
    expect(first.finalOutput).toBe("Result: light snow");
    expect(calls).toEqual(["Oslo"]);
    expect(env.ant.requests.filter((r) => r.path === "/messages").length).toBeGreaterThan(0);
    const chatReq = env.chat.requests.at(-1)!.body;
    expect(chatReq.model).toBe("llama3.1:8b");
    expect(chatReq.messages.at(-1)).toEqual({ role: "tool", tool_call_id: "toolu_qa1", content: "light snow" });
    expect(JSON.stringify(chatReq)).not.toContain("anthropic.");
    sentMessages(env.ant);
  });
});

describe("encrypted reasoning in streamed events follows include", () => {
  for (const transport of ["sse", "websocket"] as const) {
    it(`no event carries Claude's block unless included (${transport})`, async () => {
      const body = { model: "claude", input: "hello", reasoning: { effort: "low" as const } };
      const events = async (include: boolean) => {
        const b = include ? { ...body, include: ["reasoning.encrypted_content"] } : body;
        if (transport === "sse") {
          const res = await env.router.fetch("/v1/responses", { method: "POST", headers: { authorization: "Bearer test-key", "content-type": "application/json" }, body: JSON.stringify({ ...b, stream: true }) });
          return res.text();
        }
        const { WsClient } = await import("../helpers/ws-client.js");
        const ws = new WsClient(env.router.url);
        try {
          return JSON.stringify(await ws.create(b as any));
        } finally {
          ws.ws.close();
        }
      };
      const hidden = await events(false);
      expect(hidden).toContain("response.completed");
      expect(hidden).not.toContain("anthropic.");
      const shown = await events(true);
      expect(shown.split("anthropic.").length - 1).toBeGreaterThanOrEqual(2); // output_item.done and response.completed
    });
  }
});

describe("two router instances on one Redis", () => {
  it("a reasoning item sent back bare to the other instance gets Claude's signed block from the shared store", async () => {
    const { startRedis } = await import("../helpers/redis-server.js");
    const redis = await startRedis();
    const cfg = {
      endpoints: [{ name: "claude-ep", url: env.ant.url, kind: "anthropic", api_key: "sk-ant-test-0123456789" }],
      models: { claude: { endpoints: ["claude-ep"], upstream_model: "claude-up" } },
      storage: { redis_url: redis.url, prefix: `rrqa:${process.pid}:` },
    };
    const a = await startTestRouter(cfg);
    const b = await startTestRouter(cfg);
    try {
      const tools = [{ type: "function" as const, name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } }, strict: false }];
      const first = await a.client.responses.create({ model: "claude", input: "Weather in Oslo?", tools, reasoning: { effort: "low" } });
      const [rs, call] = first.output as unknown as [{ id: string }, { call_id: string; name: string; arguments: string }];
      const second = await b.client.responses.create({
        model: "claude",
        tools,
        reasoning: { effort: "low" },
        input: [
          { role: "user", content: "Weather in Oslo?" },
          { type: "reasoning", id: rs.id, summary: [] },
          { type: "function_call", call_id: call.call_id, name: call.name, arguments: call.arguments },
          { type: "function_call_output", call_id: call.call_id, output: "snow" },
        ] as any,
      });
      expect(second.output_text).toBe("Oslo: snow");
      const sent = sentMessages(env.ant).at(-1);
      expect(sent.thinking?.type).toBe("enabled");
      expect(sent.messages[1].content[0]).toEqual({ type: "thinking", thinking: THINKING, signature: SIG });
    } finally {
      await a.close(500);
      await b.close(500);
      await redis.stop();
    }
  });
});

describe("a bare reasoning item is completed only from what the caller's key may read", () => {
  it("another key's rs_ id stays bare: its thinking is neither sent nor stored nor shown", async () => {
    const r = await startTestRouter({
      server: { api_keys: [{ name: "team-a", key: "test-key" }, { name: "team-b", key: "key-b" }] },
      endpoints: [{ name: "claude-ep", url: env.ant.url, kind: "anthropic", api_key: "sk-ant-test-0123456789" }],
      models: { claude: { endpoints: ["claude-ep"], upstream_model: "claude-up" } },
    });
    try {
      const tools = [{ type: "function" as const, name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } }, strict: false }];
      const first = await r.client.responses.create({ model: "claude", input: "Weather in Oslo?", tools, reasoning: { effort: "low" } });
      const [rs, call] = first.output as unknown as [{ id: string }, { call_id: string; name: string; arguments: string }];
      const OpenAI = (await import("openai")).default;
      const other = new OpenAI({ baseURL: `${r.url}/v1`, apiKey: "key-b", maxRetries: 0 });
      const input = [
        { role: "user", content: "Weather in Oslo?" },
        { type: "reasoning", id: rs.id, summary: [] },
        { type: "function_call", call_id: call.call_id, name: call.name, arguments: call.arguments },
        { type: "function_call_output", call_id: call.call_id, output: "snow" },
      ];
      const second = await other.responses.create({ model: "claude", tools, reasoning: { effort: "low" }, input: input as any });
      expect(second.output_text).toBe("Oslo: snow");
      const sent = sentMessages(env.ant).at(-1);
      expect(JSON.stringify(sent)).not.toContain(SIG);
      expect(sent.thinking).toBeUndefined();
      const items = await other.responses.inputItems.list(second.id, { include: ["reasoning.encrypted_content"] });
      expect(JSON.stringify(items)).not.toContain("anthropic.");
    } finally {
      await r.close(500);
    }
  });
});

describe("instructions are not carried over a previous_response_id (as OpenAI documents)", () => {
  for (const model of ["claude", "local"]) {
    it(model, async () => {
      const first = await env.router.client.responses.create({ model, instructions: "Talk like a pirate.", input: "hello" });
      await env.router.client.responses.create({ model, input: "again", previous_response_id: first.id });
      const sent = model === "claude" ? sentMessages(env.ant).at(-1) : env.chat.requests.at(-1)!.body;
      expect(JSON.stringify(sent)).not.toContain("pirate");
    });
  }
});

describe("chat completions and embeddings for an anthropic model (docs/api.md)", () => {
  it("/v1/chat/completions is forwarded to the endpoint's OpenAI-compatible route; /v1/embeddings is a 400", async () => {
    env.ant.setDefault("/chat/completions", (req) => ({ kind: "json", body: chatCompletion("compat answer", req.body.model) }));
    const out = await env.router.client.chat.completions.create({ model: "claude", messages: [{ role: "user", content: "hi" }] });
    expect(out.choices[0].message.content).toBe("compat answer");
    expect(out.model).toBe("claude");
    const req = env.ant.requests.find((r) => r.path === "/chat/completions")!;
    expect(req.body.model).toBe("claude-up");
    expect(req.headers["x-api-key"]).toBe("sk-ant-test-0123456789");
    const emb = env.router.client.embeddings.create({ model: "claude", input: "hi" });
    await expect(emb).rejects.toMatchObject({ status: 400, code: "model_not_supported" });
  });
});

describe("tool call ids from another backend reach Anthropic in the form it accepts", () => {
  it("a chat backend's call id with '.' and ':' (vLLM's Kimi parser) continued on anthropic: tool_use and tool_result ids match and are [a-zA-Z0-9_-]", async () => {
    const KIMI_ID = "functions.get_weather:0";
    env.chat.setDefault("/chat/completions", (req) => {
      if (req.body.messages.some((m: { role: string }) => m.role === "tool")) return { kind: "json", body: chatCompletion("ok", req.body.model) };
      return { kind: "json", body: chatCompletion(null, req.body.model, { tool_calls: [{ id: KIMI_ID, type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } }] }) };
    });
    const tools = [{ type: "function" as const, name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } }, strict: false }];
    const first = await env.router.client.responses.create({ model: "local", input: "Weather in Oslo?", tools });
    const call = first.output.find((o) => o.type === "function_call") as { call_id: string };
    expect(call.call_id).toBe(KIMI_ID);
    const second = await env.router.client.responses.create({ model: "claude", previous_response_id: first.id, input: [{ type: "function_call_output", call_id: KIMI_ID, output: "snow" }], tools });
    expect(second.output_text).toBe("Oslo: snow");
    const sent = sentMessages(env.ant).at(-1);
    const use = sent.messages[1].content.find((b: { type: string }) => b.type === "tool_use");
    const result = sent.messages[2].content[0];
    expect(use.id).toMatch(/^[a-zA-Z0-9_-]+$/);
    expect(result.tool_use_id).toBe(use.id);
    // the client's own items keep the id it knows
    const items = await env.router.client.responses.inputItems.list(second.id);
    expect(JSON.stringify(items)).toContain(KIMI_ID);
  });
});
