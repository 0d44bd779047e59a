import { APIError } from "openai";
import { zodResponseFormat } from "openai/helpers/zod";
import type { ChatCompletionMessageParam, ChatCompletionTool } from "openai/resources/chat/completions";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { chatChunk, chatCompletion, chatTextChunks, chatToolCallChunks, upstreamError, usageChunk } from "../helpers/mock-upstream.js";
import { useTwoKindRouter } from "../helpers/router.js";

type ErrorBody = { error: { message: string; type: string; param: string | null; code: string | null } };

/**
 * The llama-stack chat-completions verification cases (seed 001), run through the
 * router with the real openai SDK against a scripted chat backend: the router must
 * pass every case through as if it were the backend itself.
 */
const env = useTwoKindRouter();

const WEATHER: ChatCompletionTool[] = [
  {
    type: "function",
    function: {
      name: "get_weather",
      description: "Get the current weather",
      parameters: { type: "object", properties: { location: { type: "string", description: "The city and state" } }, required: ["location"] },
    },
  },
];
const ASK_WEATHER: ChatCompletionMessageParam[] = [
  { role: "system", content: "You are a helpful assistant that can use tools to get information." },
  { role: "user", content: "What's the weather like in San Francisco?" },
];
const weatherCall = { id: "call_w1", type: "function", function: { name: "get_weather", arguments: '{"location":"San Francisco, CA"}' } };


describe("chat completions pass-through: seed 001 cases through the openai SDK", () => {
  it("basic, not streamed: the backend's answer with the client's model name", async () => {
    env.chat.enqueue("/chat/completions", { kind: "json", body: chatCompletion("The capital of France is Paris.", "llama3.1:8b") });
    const messages: ChatCompletionMessageParam[] = [{ role: "user", content: "Which planet do humans live on?" }];
    const r = await env.router.client.chat.completions.create({ model: "local", messages, stream: false });
    expect(r.choices[0]!.message.role).toBe("assistant");
    expect(r.choices[0]!.message.content).toContain("Paris");
    expect(r.model).toBe("local");
    expect(r.usage).toEqual({ prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 });
    expect(env.chat.requests).toHaveLength(1);
    expect(env.chat.requests[0]!.path).toBe("/chat/completions");
    expect(env.chat.requests[0]!.body).toEqual({ model: "llama3.1:8b", messages, stream: false });
  });

  it("basic, streamed: every backend chunk arrives, usage kept", async () => {
    env.chat.enqueue("/chat/completions", { kind: "sse", frames: [...chatTextChunks(["Earth", " is", " home"], "llama3.1:8b"), "data: [DONE]\n\n"] });
    const stream = await env.router.client.chat.completions.create({
      model: "local",
      messages: [{ role: "user", content: "Which planet do humans live on?" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let content = "";
    const models = new Set<string>();
    let usage: unknown = null;
    let chunks = 0;
    for await (const chunk of stream) {
      chunks++;
      models.add(chunk.model);
      content += chunk.choices[0]?.delta.content ?? "";
      if (chunk.usage) usage = chunk.usage;
    }
    expect(content).toBe("Earth is home");
    expect(chunks).toBe(6); // role, 3 deltas, finish, usage
    expect([...models]).toEqual(["local"]);
    expect(usage).toEqual({ prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 });
    expect(env.chat.requests[0]!.body.stream_options).toEqual({ include_usage: true });
  });

  it("image input (not streamed and streamed): content parts reach the backend untouched", async () => {
    const messages: ChatCompletionMessageParam[] = [
      {
        role: "user",
        content: [
          { type: "text", text: "What is in this image?" },
          { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=", detail: "low" } },
        ],
      },
    ];
    env.chat.enqueue("/chat/completions", { kind: "json", body: chatCompletion("A photo of a dog.") });
    const r = await env.router.client.chat.completions.create({ model: "local", messages });
    expect(r.choices[0]!.message.content?.toLowerCase()).toContain("dog");
    env.chat.enqueue("/chat/completions", { kind: "sse", frames: [...chatTextChunks(["A ", "dog"]), "data: [DONE]\n\n"] });
    let streamed = "";
    for await (const c of await env.router.client.chat.completions.create({ model: "local", messages, stream: true })) streamed += c.choices[0]?.delta.content ?? "";
    expect(streamed).toBe("A dog");
    expect(env.chat.requests.map((q) => q.body.messages)).toEqual([messages, messages]);
  });

  it("structured output: response_format json_schema passes through and the SDK parses the answer", async () => {
    const Event = z.object({ name: z.string(), date: z.string(), participants: z.array(z.string()) });
    const json = JSON.stringify({ name: "Science Fair", date: "Friday", participants: ["Alice", "Bob"] });
    env.chat.enqueue("/chat/completions", { kind: "json", body: chatCompletion(json) });
    const r = await env.router.client.chat.completions.parse({
      model: "local",
      messages: [{ role: "user", content: "Alice and Bob are going to a science fair on Friday." }],
      response_format: zodResponseFormat(Event, "calendar_event"),
    });
    expect(r.choices[0]!.message.parsed).toEqual({ name: "Science Fair", date: "Friday", participants: ["Alice", "Bob"] });
    const sent = env.chat.requests[0]!.body.response_format;
    expect(sent.type).toBe("json_schema");
    expect(sent.json_schema.name).toBe("calendar_event");
    expect(sent.json_schema.strict).toBe(true);

    env.chat.enqueue("/chat/completions", { kind: "sse", frames: [...chatTextChunks([json.slice(0, 10), json.slice(10)]), "data: [DONE]\n\n"] });
    const stream = env.router.client.chat.completions.stream({ model: "local", messages: [{ role: "user", content: "again" }], response_format: zodResponseFormat(Event, "calendar_event") });
    expect((await stream.finalChatCompletion()).choices[0]!.message.parsed).toEqual(JSON.parse(json));
  });

  it("tool calling, not streamed", async () => {
    env.chat.enqueue("/chat/completions", { kind: "json", body: chatCompletion(null, "mock", { tool_calls: [weatherCall] }) });
    const r = await env.router.client.chat.completions.create({ model: "local", messages: ASK_WEATHER, tools: WEATHER });
    const call = r.choices[0]!.message.tool_calls![0]!;
    expect(call.type === "function" && call.function.name).toBe("get_weather");
    expect(r.choices[0]!.finish_reason).toBe("tool_calls");
    expect(env.chat.requests[0]!.body.tools).toEqual(WEATHER);
  });

  it("tool calling, streamed: arguments split over chunks (type null after the first) accumulate in the SDK", async () => {
    const fragments = ['{"loca', 'tion":"San Fr', 'ancisco, CA"}'];
    env.chat.enqueue("/chat/completions", { kind: "sse", frames: [chatChunk({ role: "assistant", content: null }), ...chatToolCallChunks([{ id: "call_w1", name: "get_weather", args: fragments }])] });
    const stream = env.router.client.chat.completions.stream({ model: "local", messages: ASK_WEATHER, tools: WEATHER });
    const final = await stream.finalChatCompletion();
    const calls = final.choices[0]!.message.tool_calls!;
    expect(calls).toHaveLength(1);
    expect(calls[0]!.id).toBe("call_w1");
    const fn = calls[0]!.type === "function" ? calls[0]!.function : null;
    expect(fn?.name).toBe("get_weather");
    expect(JSON.parse(fn!.arguments).location.toLowerCase()).toContain("san francisco");
  });

  it("tool_choice required and none reach the backend; each answer comes back as the backend gave it", async () => {
    env.chat.enqueue("/chat/completions", { kind: "json", body: chatCompletion(null, "mock", { tool_calls: [weatherCall] }) });
    const req = await env.router.client.chat.completions.create({ model: "local", messages: ASK_WEATHER, tools: WEATHER, tool_choice: "required" });
    expect(req.choices[0]!.message.tool_calls).toHaveLength(1);

    env.chat.enqueue("/chat/completions", { kind: "json", body: chatCompletion("I cannot check live weather, but it is usually mild.") });
    const none = await env.router.client.chat.completions.create({ model: "local", messages: ASK_WEATHER, tools: WEATHER, tool_choice: "none" });
    expect(none.choices[0]!.message.tool_calls).toBeUndefined();
    expect(none.choices[0]!.message.content).toBeTruthy();

    env.chat.enqueue("/chat/completions", { kind: "sse", frames: [...chatTextChunks(["It is ", "mild."]), "data: [DONE]\n\n"] });
    let content = "";
    for await (const c of await env.router.client.chat.completions.create({ model: "local", messages: ASK_WEATHER, tools: WEATHER, tool_choice: "none", stream: true })) {
      expect(c.choices[0]?.delta.tool_calls).toBeUndefined();
      content += c.choices[0]?.delta.content ?? "";
    }
    expect(content).toBe("It is mild.");
    expect(env.chat.requests.map((q) => q.body.tool_choice)).toEqual(["required", "none", "none"]);
  });

  it("multi-turn tool calling: the tool result turn reaches the backend exactly as sent", async () => {
    env.chat.enqueue("/chat/completions", { kind: "json", body: chatCompletion(null, "mock", { tool_calls: [weatherCall] }) });
    const messages: ChatCompletionMessageParam[] = [...ASK_WEATHER];
    const first = await env.router.client.chat.completions.create({ model: "local", messages, tools: WEATHER });
    const assistant = first.choices[0]!.message;
    messages.push({ role: "assistant", content: assistant.content, tool_calls: assistant.tool_calls });
    messages.push({ role: "tool", tool_call_id: assistant.tool_calls![0]!.id, content: '{"temperature": "70F", "conditions": "sunny"}' });
    env.chat.enqueue("/chat/completions", {
      kind: "sse",
      frames: [chatChunk({ role: "assistant", content: "" }), chatChunk({ content: "It is 70F and sunny" }), chatChunk({}, "stop"), usageChunk(40, 6), "data: [DONE]\n\n"],
    });
    let answer = "";
    for await (const c of await env.router.client.chat.completions.create({ model: "local", messages, tools: WEATHER, stream: true })) answer += c.choices[0]?.delta.content ?? "";
    expect(answer).toContain("70F");
    expect(env.chat.requests[1]!.body.messages).toEqual(messages);
    expect(env.chat.requests[1]!.body.messages[3]).toEqual({ role: "tool", tool_call_id: "call_w1", content: '{"temperature": "70F", "conditions": "sunny"}' });
  });

  it.each([false, true])("input validation errors keep the backend's status and body (stream=%s)", async (stream) => {
    env.chat.enqueue("/chat/completions", upstreamError(400, "Invalid 'tool_choice': 'auto_please'.", "invalid_value", "invalid_request_error", "tool_choice"));
    const err = await env.router.client.chat.completions
      .create({ model: "local", messages: ASK_WEATHER, tools: WEATHER, tool_choice: "auto_please" as never, stream })
      .then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(APIError);
    const e = err as APIError;
    expect(e.status).toBe(400);
    expect(e.error).toEqual({ message: "Invalid 'tool_choice': 'auto_please'.", type: "invalid_request_error", param: "tool_choice", code: "invalid_value" });
    expect(env.chat.requests).toHaveLength(1); // a 4xx is final: no failover
  });

  it("a backend's 422 (vLLM, pydantic) keeps its status", async () => {
    env.chat.enqueue("/chat/completions", { kind: "json", status: 422, body: { detail: "messages.0.role: Input should be 'system', 'user' or 'assistant'" } });
    const res = await env.router.fetch("/v1/chat/completions", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "local", messages: [{ role: "robot", content: "x" }] }) });
    expect(res.status).toBe(422);
    expect(((await res.json()) as ErrorBody).error.message).toContain("Input should be");
  });
});

describe("chat completions pass-through: what the router checks itself", () => {
  const post = (body: string) => env.router.fetch("/v1/chat/completions", { method: "POST", headers: { "content-type": "application/json" }, body });

  it.each([
    ["{not json", 400, null, "invalid_json"],
    ['{"messages":[{"role":"user","content":"hi"}]}', 400, "model", "missing_required_parameter"],
    ['{"model":"local"}', 400, "messages", "missing_required_parameter"],
    ['{"model":"local","messages":"hi"}', 400, "messages", "invalid_type"],
    ['{"model":"local","messages":[]}', 400, "messages", "empty_array"],
    ['{"model":"nope","messages":[{"role":"user","content":"hi"}]}', 404, "model", "model_not_found"],
  ])("%s -> %i %s", async (body, status, param, code) => {
    const res = await post(body);
    expect(res.status).toBe(status);
    const e = ((await res.json()) as ErrorBody).error;
    expect(Object.keys(e).sort()).toEqual(["code", "message", "param", "type"]);
    expect([e.param, e.code, e.type]).toEqual([param, code, "invalid_request_error"]);
    expect(env.chat.requests).toHaveLength(0);
  });

  it("forwards every request field untouched but model, and drops the router extension", async () => {
    const body = {
      messages: [{ role: "user", content: "hi", name: "alice" }],
      tools: WEATHER,
      tool_choice: { type: "function", function: { name: "get_weather" } },
      parallel_tool_calls: false,
      response_format: { type: "json_object" },
      reasoning_effort: "low",
      n: 2,
      seed: 7,
      logprobs: true,
      top_logprobs: 3,
      user: "u-1",
      temperature: 0.2,
      stop: ["\n\n"],
      max_completion_tokens: 64,
      logit_bias: { "50256": -100 },
      vendor_knob: { top_k: 20 },
      model: "local",
      router: { cache: false },
    };
    const res = await post(JSON.stringify(body));
    expect(res.status).toBe(200);
    const { router: _ext, ...expected } = body;
    expect(env.chat.requests[0]!.body).toEqual({ ...expected, model: "llama3.1:8b" });
    expect(Object.keys(env.chat.requests[0]!.body)).toEqual(Object.keys(expected));
  });

  it("a kind: openai endpoint gets /chat/completions too, with the router's key", async () => {
    env.oai.enqueue("/chat/completions", { kind: "json", body: chatCompletion("from openai", "gpt-4.1-2025-04-14") });
    const r = await env.router.client.chat.completions.create({ model: "gpt-4.1", messages: [{ role: "user", content: "hi" }] });
    expect(r.choices[0]!.message.content).toBe("from openai");
    expect(r.model).toBe("gpt-4.1-2025-04-14"); // no upstream_model mapping: the backend's own name stays
    expect(env.oai.requests[0]!.path).toBe("/chat/completions");
    expect(env.oai.requests[0]!.headers.authorization).toBe("Bearer sk-upstream-secret-0123456789");
    expect(env.chat.requests).toHaveLength(0);
  });
});

describe("chat completions pass-through: secrets", () => {
  it("an upstream that echoes the endpoint's key in an in-band error chunk does not pass it on", async () => {
    env.oai.enqueue("/chat/completions", {
      kind: "sse",
      frames: [chatChunk({ role: "assistant", content: "Hi" }), { data: { error: { message: "Incorrect API key provided: sk-upstream-secret-0123456789", type: "invalid_request_error" } } }],
    });
    const res = await env.router.fetch("/v1/chat/completions", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-4.1", messages: [{ role: "user", content: "hi" }], stream: true }),
    });
    const text = await res.text();
    expect(text).toContain("Incorrect API key provided");
    expect(text).not.toContain("sk-upstream-secret-0123456789");
  });
});
