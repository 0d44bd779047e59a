/**
 * kind: anthropic end to end: the openai SDK (HTTP, stream, WebSocket) against the router, in
 * front of Anthropic Messages mocks on loopback whose received requests are checked against the
 * Messages request shape (helpers/anthropic-mock.ts), every stream against the Responses grammar.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { ResponseInputItem } from "openai/resources/responses/responses";
import { anthropicError, message, sentMessages, sseFrames, startAnthropicMock, streamEvents, streamReply, textBlock, thinkingBlock, toolUseBlock, usage } from "../helpers/anthropic-mock.js";
import { assertResponsesGrammar } from "../helpers/grammar.js";
import { metricSample } from "../helpers/metrics-text.js";
import { startMockUpstream, type MockUpstream } from "../helpers/mock-upstream.js";
import { parseSse, startTestRouter, type TestRouter } from "../helpers/router.js";
import { finalResponse, WsClient } from "../helpers/ws-client.js";
import { until } from "../helpers/background.js";
import type { StreamEvent } from "../../src/wire/types.js";

const SECRET = "sk-ant-api03-upstream-secret-0123456789";
const SIG = "EqQBCkgIARABGAIiQHx/sig+with/slashes==";
const TOOLS = [{ type: "function" as const, name: "get_weather", description: "Weather of a city", strict: false, parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } }];

let a: MockUpstream;
let b: MockUpstream;
let c: MockUpstream;
let chat: MockUpstream;
let router: TestRouter;
const sockets: WsClient[] = [];

beforeAll(async () => {
  [a, b, c] = await Promise.all([startAnthropicMock(), startAnthropicMock(), startAnthropicMock()]);
  chat = await startMockUpstream();
  router = await startTestRouter({
    endpoints: [
      { name: "claude-a", url: a.url, kind: "anthropic", api_key: SECRET, anthropic_beta: ["files-api-2025-04-14"] },
      // Given without /v1: the router adds it.
      { name: "claude-b", url: b.url.replace(/\/v1$/, ""), kind: "anthropic", api_key: SECRET },
      { name: "claude-c", url: c.url, kind: "anthropic", api_key: SECRET, anthropic_version: "2023-06-01" },
      { name: "box", url: chat.url, kind: "chat" },
    ],
    models: {
      claude: { endpoints: ["claude-a"], upstream_model: "claude-upstream", max_output_tokens: 2000, anthropic_beta: ["context-1m-2025-08-07"] },
      "claude-pool": { endpoints: [{ name: "claude-a", weight: 10 }, "claude-b"], upstream_model: "claude-upstream" },
      "claude-legacy": { endpoints: ["claude-c"], upstream_model: "claude-old", prompt_caching: false, fallbacks: ["local"] },
      "claude-native": { endpoints: ["claude-a"], structured_output: "native" },
      local: { endpoints: ["box"] },
    },
    compaction: { key: "anthropic-test-compaction-key-0123" },
    routing: { queue_timeout: "500ms", retry: { attempts: 2, max_time: "5s" }, health: { failure_threshold: 50, cooldown: "100ms" } },
  });
});
afterAll(async () => {
  for (const s of sockets) s.ws.socket.terminate?.();
  await router?.close(1000);
  await Promise.all([a?.close(), b?.close(), c?.close(), chat?.close()]);
});
beforeEach(() => {
  for (const m of [a, b, c, chat]) m.requests.length = 0;
});

async function streamEventsOf(body: Record<string, unknown>): Promise<StreamEvent[]> {
  const res = await router.fetch("/v1/responses", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ ...body, stream: true }) });
  expect(res.status).toBe(200);
  const events = parseSse(await res.text()).map((f) => f.data as StreamEvent);
  assertResponsesGrammar(events);
  return events;
}

async function post(body: unknown): Promise<{ status: number; json: any; headers: Headers }> {
  const res = await router.fetch("/v1/responses", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  return { status: res.status, json: await res.json(), headers: res.headers };
}

describe("kind: anthropic, JSON and stream", () => {
  it("answers through the Messages API with x-api-key, the SDK's version and the betas; usage counts the cache in", async () => {
    a.enqueue("/messages", { kind: "json", body: message([textBlock("Bonjour")], { usage: usage({ input_tokens: 10, cache_read_input_tokens: 90, cache_creation_input_tokens: 5, output_tokens: 4 }) }) });
    const r = await router.client.responses.create({ model: "claude", input: "hi", instructions: "Be brief.", max_output_tokens: 300 });
    expect(r).toMatchObject({ object: "response", status: "completed", model: "claude", output_text: "Bonjour" });
    expect(r.usage).toEqual({ input_tokens: 105, input_tokens_details: { cached_tokens: 90, cache_write_tokens: 5 }, output_tokens: 4, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 109 });
    const req = a.requests[0]!;
    expect(req.path).toBe("/messages");
    expect(req.headers["x-api-key"]).toBe(SECRET);
    expect(req.headers.authorization).toBeUndefined();
    expect(req.headers["anthropic-version"]).toBe("2026-10-21");
    expect(req.headers["anthropic-beta"]).toBe("files-api-2025-04-14,context-1m-2025-08-07");
    const [sent] = sentMessages(a);
    expect(sent).toMatchObject({ model: "claude-upstream", max_tokens: 300, system: [{ type: "text", text: "Be brief.", cache_control: { type: "ephemeral" } }], messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }] });
    const metrics = await (await router.fetch("/metrics")).text();
    expect(metricSample(metrics, "responses_router_tokens_total", { model: "claude", upstream: "claude-a", type: "cached", key: "" })).toBeGreaterThanOrEqual(90);
    expect(metricSample(metrics, "responses_router_tokens_total", { model: "claude", upstream: "claude-a", type: "cache_write", key: "" })).toBeGreaterThanOrEqual(5);
  });

  it("streams through the SDK with the exact Responses grammar", async () => {
    const stream = router.client.responses.stream({ model: "claude", input: "hi" });
    const types: string[] = [];
    for await (const ev of stream) types.push(ev.type);
    const final = await stream.finalResponse();
    expect(final.output_text).toBe("Hello from Claude");
    expect(types[0]).toBe("response.created");
    expect(types.at(-1)).toBe("response.completed");
    expect(types.filter((t) => t === "response.output_text.delta").length).toBe(2);
    expect(sentMessages(a)[0].stream).toBe(true);
    expect(sentMessages(a)[0].max_tokens).toBe(2000); // no max_output_tokens: the model's configured default (Anthropic requires one)
  });

  it("serves over the WebSocket, with thinking shown as a summary when asked", async () => {
    a.enqueue("/messages", streamReply(message([thinkingBlock("Plan the greeting.", SIG), textBlock("Hi there")])));
    const ws = new WsClient(router.url);
    sockets.push(ws);
    const events = await ws.create({ model: "claude", input: "hi", reasoning: { effort: "low", summary: "auto" } });
    assertResponsesGrammar(events as StreamEvent[]);
    const final = finalResponse(events);
    expect(final.status).toBe("completed");
    expect(final.output[0]).toMatchObject({ type: "reasoning", summary: [{ type: "summary_text", text: "Plan the greeting." }] });
    expect(final.output[0].encrypted_content).toBeUndefined(); // not asked for in `include`
    expect(events.some((e) => e.type === "response.reasoning_summary_text.delta")).toBe(true);
    expect(sentMessages(a)[0].thinking).toEqual({ type: "enabled", budget_tokens: 2048 });
    ws.close();
  });

  it("maps max_tokens to incomplete, and a refusal to a refusal part", async () => {
    a.enqueue("/messages", { kind: "json", body: message([textBlock("Once upon")], { stop_reason: "max_tokens" }) });
    const cut = await router.client.responses.create({ model: "claude", input: "story" });
    expect(cut).toMatchObject({ status: "incomplete", incomplete_details: { reason: "max_output_tokens" } });
    a.enqueue("/messages", streamReply(message([], { stop_reason: "refusal", stop_details: { type: "refusal", category: null, explanation: "I can't help with that." } })));
    const events = await streamEventsOf({ model: "claude", input: "bad" });
    const done = events.at(-1)!.response as any;
    expect(done.output[0].content).toEqual([{ type: "refusal", refusal: "I can't help with that." }]);
  });

  it("a mid-stream error event ends the stream in response.failed", async () => {
    const evs = streamEvents(message([textBlock("partial answer")]));
    a.enqueue("/messages", { kind: "sse", frames: sseFrames([...evs.slice(0, 3), { type: "error", error: { type: "overloaded_error", message: "Overloaded" } }]) });
    const events = await streamEventsOf({ model: "claude", input: "hi" });
    expect(events.at(-1)).toMatchObject({ type: "response.failed", response: { status: "failed", error: { code: "server_error" } } });
    expect(JSON.stringify(events)).not.toContain(SECRET);
    // A stream that closes before message_stop was cut off: failed, not completed.
    a.enqueue("/messages", { kind: "sse", frames: sseFrames(evs.slice(0, 4)) });
    const cut = await streamEventsOf({ model: "claude", input: "hi" });
    expect(cut.at(-1)).toMatchObject({ type: "response.failed", response: { error: { code: "server_error" } } });
    expect((cut.at(-1)!.response as any).output[0]).toMatchObject({ status: "incomplete" });
    expect((cut.at(-1)!.response as any).output[0].content[0].text).toBe("partial answer");
  });
});

const turn1 = message([thinkingBlock("The user wants weather; call the tool.", SIG), toolUseBlock("toolu_01", "get_weather", { city: "Paris" })], { stop_reason: "tool_use" });

describe("kind: anthropic, a tool loop with thinking", () => {
  it("round-trips the thinking block byte for byte by previous_response_id", async () => {
    a.enqueue("/messages", streamReply(turn1));
    const events = await streamEventsOf({ model: "claude", input: "Weather in Paris?", tools: TOOLS, reasoning: { effort: "medium" } });
    const first = events.at(-1)!.response as any;
    expect(first.output.map((i: any) => i.type)).toEqual(["reasoning", "function_call"]);
    expect(first.output[1]).toMatchObject({ call_id: "toolu_01", name: "get_weather", arguments: '{"city":"Paris"}' });
    const second = await router.client.responses.create({
      model: "claude",
      previous_response_id: first.id,
      input: [{ type: "function_call_output", call_id: "toolu_01", output: "18C, sunny" }],
      tools: TOOLS,
      reasoning: { effort: "medium" },
    });
    expect(second.output_text).toBe("Hello from Claude");
    const sent = sentMessages(a);
    expect(sent[0].tools).toEqual([{ name: "get_weather", description: "Weather of a city", input_schema: TOOLS[0]!.parameters, cache_control: { type: "ephemeral" } }]);
    expect(sent[1].messages).toEqual([
      { role: "user", content: [{ type: "text", text: "Weather in Paris?" }] },
      { role: "assistant", content: [turn1.content[0], { type: "tool_use", id: "toolu_01", name: "get_weather", input: { city: "Paris" }, cache_control: { type: "ephemeral" } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_01", content: "18C, sunny" }] },
    ]);
    expect(sent[1].thinking).toEqual({ type: "enabled", budget_tokens: 8192 });
  });

  it("round-trips it from items sent back with include: reasoning.encrypted_content (store: false)", async () => {
    a.enqueue("/messages", { kind: "json", body: turn1 });
    const first = await router.client.responses.create({ model: "claude", input: "Weather in Paris?", tools: TOOLS, reasoning: { effort: "high" }, store: false, include: ["reasoning.encrypted_content"] });
    expect(first.output[0]!.type).toBe("reasoning");
    expect((first.output[0] as any).encrypted_content).toMatch(/^anthropic\./);
    const input = [{ role: "user", content: "Weather in Paris?" }, ...first.output, { type: "function_call_output", call_id: "toolu_01", output: "18C" }] as ResponseInputItem[];
    await router.client.responses.create({ model: "claude", input, tools: TOOLS, reasoning: { effort: "high" }, store: false });
    const sent = sentMessages(a);
    expect(sent[1].messages[1].content[0]).toEqual({ type: "thinking", thinking: "The user wants weather; call the tool.", signature: SIG });
    expect(JSON.stringify(sent[1].messages[1].content[0])).toBe(JSON.stringify(turn1.content[0]));
  });

  it("round-trips it on the WebSocket with store: false (the connection's history) and in a conversation", async () => {
    const ws = new WsClient(router.url);
    sockets.push(ws);
    a.enqueue("/messages", streamReply(turn1));
    const first = finalResponse(await ws.create({ model: "claude", input: "Weather in Paris?", tools: TOOLS, reasoning: { effort: "low" }, store: false }));
    const events = await ws.create({ model: "claude", previous_response_id: first.id, input: [{ type: "function_call_output", call_id: "toolu_01", output: "18C" }], tools: TOOLS, reasoning: { effort: "low" }, store: false });
    expect(finalResponse(events).status).toBe("completed");
    ws.close();
    const conv = await router.client.conversations.create({});
    a.enqueue("/messages", { kind: "json", body: turn1 });
    await router.client.responses.create({ model: "claude", conversation: conv.id, input: "Weather in Paris?", tools: TOOLS, reasoning: { effort: "low" } });
    await router.client.responses.create({ model: "claude", conversation: conv.id, input: [{ type: "function_call_output", call_id: "toolu_01", output: "18C" }], tools: TOOLS, reasoning: { effort: "low" } });
    const sent = sentMessages(a);
    for (const i of [1, 3]) {
      expect(sent[i].messages[1].content[0]).toEqual(turn1.content[0]);
      expect(sent[i].thinking).toEqual({ type: "enabled", budget_tokens: 2048 });
    }
  });
});

describe("kind: anthropic, routing", () => {
  it("keeps a chain on the endpoint that served its previous turn (so the prompt cache is reused)", async () => {
    // The first turn fails over to claude-b; by weight alone the next ones would go back to claude-a.
    a.enqueue("/messages", anthropicError(529, "overloaded_error", "Overloaded"));
    const served: string[] = [];
    let previous: string | undefined;
    for (let i = 0; i < 4; i++) {
      const before = { a: a.requests.length, b: b.requests.length };
      const r = await router.client.responses.create({ model: "claude-pool", input: `turn ${i}`, previous_response_id: previous });
      previous = r.id;
      served.push(b.requests.length > before.b ? "b" : a.requests.length > before.a ? "a" : "?");
    }
    expect(served).toEqual(["b", "b", "b", "b"]);
    const fresh = await router.client.responses.create({ model: "claude-pool", input: "new chain" });
    expect(fresh.output_text).toBe("Hello from Claude");
    expect(a.requests.filter((r) => r.path === "/messages").length).toBe(2); // the 529, then the new chain
  });

  it("the mock speaks the Messages API as the official @anthropic-ai/sdk reads it", async () => {
    const { default: Anthropic } = await import("@anthropic-ai/sdk");
    const sdk = new Anthropic({ baseURL: a.url.replace(/\/v1$/, ""), apiKey: "test", maxRetries: 0 });
    a.enqueue("/messages", streamReply(turn1));
    const final = await sdk.messages.stream({ model: "claude-upstream", max_tokens: 100, messages: [{ role: "user", content: "hi" }] }).finalMessage();
    expect(final.content).toEqual(turn1.content);
    expect(final.stop_reason).toBe("tool_use");
  });
});

describe("kind: anthropic, inputs and formats", () => {
  it("sends an image by URL and a PDF as a document block", async () => {
    const pdf = Buffer.from("%PDF-1.7 minimal").toString("base64");
    await router.client.responses.create({
      model: "claude",
      input: [
        {
          role: "user",
          content: [
            { type: "input_text", text: "What is in these?" },
            { type: "input_image", image_url: "https://example.com/cat.png", detail: "auto" },
            { type: "input_file", filename: "report.pdf", file_data: `data:application/pdf;base64,${pdf}` },
          ],
        },
      ],
    });
    expect(sentMessages(a)[0].messages[0].content).toEqual([
      { type: "text", text: "What is in these?" },
      { type: "image", source: { type: "url", url: "https://example.com/cat.png" } },
      { type: "document", title: "report.pdf", source: { type: "base64", media_type: "application/pdf", data: pdf } },
    ]);
  });

  it("structured output by a forced tool comes back as output_text, streamed and not", async () => {
    const answer = message([toolUseBlock("toolu_x", "person", { name: "Ada", age: 36 })], { stop_reason: "tool_use" });
    const format = { type: "json_schema" as const, name: "person", strict: true, schema: { type: "object", properties: { name: { type: "string" }, age: { type: "integer" } }, required: ["name", "age"], additionalProperties: false } };
    a.enqueue("/messages", { kind: "json", body: answer });
    const r = await router.client.responses.create({ model: "claude", input: "Ada, 36", text: { format } });
    expect(JSON.parse(r.output_text)).toEqual({ name: "Ada", age: 36 });
    expect(r.output.map((i) => i.type)).toEqual(["message"]);
    a.enqueue("/messages", streamReply(answer));
    const events = await streamEventsOf({ model: "claude", input: "Ada, 36", text: { format } });
    expect(JSON.parse((events.find((e) => e.type === "response.output_text.done") as any).text)).toEqual({ name: "Ada", age: 36 });
    const sent = sentMessages(a);
    expect(sent[0].tool_choice).toEqual({ type: "tool", name: "person" });
    await router.client.responses.create({ model: "claude-native", input: "Ada, 36", text: { format } });
    expect(sentMessages(a)[2].output_config).toEqual({ format: { type: "json_schema", schema: format.schema } });
  });

  it("an older API version gets temperature and top_p, a top-level system only, and no cache breakpoints when off", async () => {
    await router.client.responses.create({ model: "claude-legacy", input: [{ role: "user", content: "a" }, { role: "developer", content: "late rule" }, { role: "user", content: "b" }], temperature: 0.3, top_p: 0.8 });
    expect(c.requests[0]!.headers["anthropic-version"]).toBe("2023-06-01");
    const [sent] = sentMessages(c, "2023-06-01");
    expect(sent).toMatchObject({ model: "claude-old", temperature: 0.3, top_p: 0.8, system: [{ type: "text", text: "late rule" }] });
    expect(JSON.stringify(sent)).not.toContain("cache_control");
  });

  it("counts input tokens with Anthropic's count_tokens", async () => {
    const res = await router.fetch("/v1/responses/input_tokens", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "claude", input: "count me", tools: TOOLS }) });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ object: "response.input_tokens", input_tokens: 42 });
    const req = a.requests.find((r) => r.path === "/messages/count_tokens")!;
    expect(req.headers["x-api-key"]).toBe(SECRET);
    expect(Object.keys(req.body).sort()).toEqual(["messages", "model", "tools"]);
    // A compatible server without count_tokens: the estimate, never an error.
    a.enqueue("/messages/count_tokens", { kind: "json", status: 404, body: { type: "error", error: { type: "not_found_error", message: "Not Found" } } });
    const est = await router.fetch("/v1/responses/input_tokens", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "claude", input: "count me" }) });
    expect(est.status).toBe(200);
    expect(est.headers.get("x-router-token-count")).toBe("estimate");
    expect(((await est.json()) as { input_tokens: number }).input_tokens).toBeGreaterThan(0);
  });
});

describe("kind: anthropic, failures", () => {
  it("fails over a 529 overloaded_error to a second endpoint before the first byte", async () => {
    a.enqueue("/messages", anthropicError(529, "overloaded_error", "Overloaded"));
    const r = await router.client.responses.create({ model: "claude-pool", input: "hi" });
    expect(r.output_text).toBe("Hello from Claude");
    expect(a.requests.filter((x) => x.path === "/messages").length).toBe(1);
    expect(b.requests.filter((x) => x.path === "/messages").length).toBe(1);
    expect(b.requests[0]!.headers["x-api-key"]).toBe(SECRET);
  });

  it("falls back to a chat model when the anthropic pool is overloaded", async () => {
    c.enqueue("/messages", anthropicError(529, "overloaded_error", "Overloaded"), anthropicError(529, "overloaded_error", "Overloaded"));
    const r = await router.client.responses.create({ model: "claude-legacy", input: "hi" });
    expect(r.output_text).toBe("Hello world");
    expect(r.model).toBe("claude-legacy");
    expect(chat.requests.filter((x) => x.path === "/chat/completions").length).toBe(1);
  });

  it("keeps a 429's status and retry-after, maps 400 with the field, never echoes the key", async () => {
    c.enqueue("/messages", anthropicError(429, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit", { "retry-after": "7" }), anthropicError(429, "rate_limit_error", "slow down", { "retry-after": "7" }));
    chat.enqueue("/chat/completions", { kind: "json", status: 429, body: { error: { message: "busy", type: "rate_limit_error" } }, headers: { "retry-after": "7" } });
    const limited = await post({ model: "claude-legacy", input: "hi" });
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("7");
    a.enqueue("/messages", anthropicError(429, "rate_limit_error", "rate limited", { "retry-after": "30", "anthropic-ratelimit-requests-remaining": "0", "anthropic-ratelimit-requests-reset": "2026-11-24T08:00:03Z" }));
    const own = await post({ model: "claude", input: "hi" });
    expect(own.status).toBe(429);
    expect(own.json.error).toMatchObject({ type: "rate_limit_error", code: "rate_limit_exceeded" });
    expect(own.headers.get("retry-after")).toBe("30");
    expect(own.headers.get("anthropic-ratelimit-requests-remaining")).toBe("0");
    a.enqueue("/messages", anthropicError(400, "invalid_request_error", `max_tokens: must be at most 64000 (key ${SECRET})`));
    const bad = await post({ model: "claude", input: "hi", max_output_tokens: 999999 });
    expect(bad.status).toBe(400);
    expect(bad.json.error).toMatchObject({ type: "invalid_request_error", param: "max_output_tokens" });
    expect(JSON.stringify(bad.json)).not.toContain(SECRET);
    a.enqueue("/messages", anthropicError(401, "authentication_error", "invalid x-api-key"));
    const auth = await post({ model: "claude", input: "hi" });
    expect(auth.status).toBe(502);
    expect(auth.json.error.code).toBe("upstream_auth_failed");
    a.enqueue("/messages", anthropicError(413, "request_too_large", "Request exceeds the maximum allowed number of bytes."));
    const big = await post({ model: "claude", input: "hi" });
    expect(big.status).toBe(413);
    expect(big.json.error).toMatchObject({ type: "invalid_request_error", code: "request_too_large" });
  });

  it("answers bad input with OpenAI-shaped 400s naming the param, before any upstream call", async () => {
    // An image by an id that is none of the router's files: not found, as OpenAI answers.
    const unknownImage = await post({ model: "claude", input: [{ role: "user", content: [{ type: "input_image", file_id: "file-abc" }] }] });
    expect([unknownImage.status, unknownImage.json.error.param]).toEqual([404, "input[0].content[0].file_id"]);
    const cases: [unknown, string][] = [
      [[{ role: "user", content: [{ type: "input_file", file_data: "data:application/zip;base64,UEsDBA==" }] }], "input[0].content[0].file_data"],
      [[{ role: "user", content: "x" }, { type: "function_call", call_id: "c1", name: "f", arguments: "not json" }], "input[1].arguments"],
      [[{ role: "developer", content: "only rules" }], "input"],
    ];
    for (const [input, param] of cases) {
      const r = await post({ model: "claude", input });
      expect(r.status, JSON.stringify(input)).toBe(400);
      expect(r.json.error).toMatchObject({ type: "invalid_request_error", param });
      expect(typeof r.json.error.message).toBe("string");
    }
    expect(a.requests.length).toBe(0);
    const emb = await router.fetch("/v1/embeddings", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "claude", input: "x" }) });
    expect(emb.status).toBe(400);
    expect(((await emb.json()) as any).error).toMatchObject({ param: "model", code: "model_not_supported" });
    expect(a.requests.length).toBe(0);
  });
});

describe("kind: anthropic, background and compaction", () => {
  it("runs in the background and stores the finished response", async () => {
    const created = await router.client.responses.create({ model: "claude", input: "hi", background: true });
    expect(created.status).toMatch(/queued|in_progress/);
    const done = await until(async () => {
      const r = await router.client.responses.retrieve(created.id);
      return r.status === "completed" ? r : null;
    }, "the background response to complete");
    expect(done.output_text).toBe("Hello from Claude");
  });

  it("compacts on this kind: the router summarises with the Messages API and seals the summary; the next turn reads it", async () => {
    a.enqueue("/messages", { kind: "json", body: message([textBlock("SUMMARY: user asked about parsers.")]) });
    const history = [
      { role: "user" as const, content: "Refactor the parser" },
      { role: "assistant" as const, content: "Done: parser refactored." },
      { role: "user" as const, content: "Now the lexer" },
    ];
    const compacted = await router.client.responses.compact({ model: "claude", input: history });
    expect(compacted.object).toBe("response.compaction");
    const item = compacted.output.at(-1) as any;
    expect(item.type).toBe("compaction");
    expect(item.encrypted_content).not.toContain("SUMMARY");
    const summaryCall = sentMessages(a)[0];
    expect(summaryCall.messages.at(-1).role).toBe("user");
    await router.client.responses.create({ model: "claude", input: [...(compacted.output as ResponseInputItem[]), { role: "user", content: "continue" }] });
    const next = sentMessages(a)[1];
    expect(JSON.stringify(next.messages)).toContain("SUMMARY: user asked about parsers.");
    expect(JSON.stringify(next.messages)).not.toContain("Done: parser refactored.");
  });

  it("a compaction_trigger answers one sealed compaction item, streamed from the Messages events", async () => {
    a.enqueue("/messages", streamReply(message([textBlock("SUMMARY of the work")], { usage: usage({ input_tokens: 300, output_tokens: 20 }) })));
    const events = await streamEventsOf({ model: "claude", input: [{ role: "user", content: "long work" }, { role: "assistant", content: "done a lot" }, { type: "compaction_trigger" }] });
    expect(events.map((e) => e.type)).toEqual(["response.created", "response.in_progress", "response.output_item.added", "response.compaction.compacting", "response.output_item.done", "response.completed"]);
    const done = events.at(-1)!.response as any;
    expect(done.output.map((i: any) => i.type)).toEqual(["compaction"]);
    expect(done.usage).toMatchObject({ input_tokens: 300, output_tokens: 20 });
    expect(sentMessages(a)[0].stream).toBe(true);
  });

  it("context_management over its threshold compacts first (counted with count_tokens), then answers over the summary", async () => {
    a.enqueue("/messages", { kind: "json", body: message([textBlock("SUMMARY before answering")]) });
    a.enqueue("/messages/count_tokens", { kind: "json", body: { input_tokens: 5000 } });
    const r = await router.client.responses.create({
      model: "claude",
      input: [{ role: "user", content: "first" }, { role: "assistant", content: "reply" }, { role: "user", content: "second" }],
      context_management: [{ type: "compaction", compact_threshold: 1000 }],
    } as never);
    expect(r.output.map((i) => i.type)).toEqual(["compaction", "message"]);
    // Hiding encrypted reasoning never hides a compaction item's content.
    expect((r.output[0] as { encrypted_content?: string }).encrypted_content).toMatch(/^rrc1\./);
    expect(a.requests.map((x) => x.path)).toEqual(["/messages/count_tokens", "/messages", "/messages"]);
    expect(JSON.stringify(sentMessages(a)[1].messages)).toContain("SUMMARY before answering");
  });

  it("check --probe style GET /models reaches the endpoint with its key", async () => {
    const { probeEndpoints } = await import("../../src/upstream/config-probe.js");
    const results = await probeEndpoints(router.config);
    const claude = results.filter((r) => r.endpoint.startsWith("claude-"));
    expect(claude.every((r) => r.ok)).toBe(true);
    expect(a.requests.find((r) => r.path === "/models")!.headers["x-api-key"]).toBe(SECRET);
    expect(JSON.stringify(results)).not.toContain(SECRET);
  });
});
