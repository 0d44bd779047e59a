import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { message, messageReply, startAnthropicMock, textBlock, toolUseBlock, assertMessagesRequest } from "../helpers/anthropic-mock.js";
import { chatCompletion, chatTextChunks, chatToolCallChunks, startMockUpstream, type MockUpstream, type RecordedRequest, type Reply } from "../helpers/mock-upstream.js";
import { slowText } from "../helpers/background.js";
import { startMockSearch, type MockSearch } from "../helpers/mock-search.js";
import { startTestRouter, type TestRouter } from "../helpers/router.js";
import { finalResponse, WsClient } from "../helpers/ws-client.js";

/**
 * The OpenResponses compliance cases (basic text, streaming, a system message, function
 * calling JSON and streamed, an input_image data URL, multi-turn) run through the router as
 * that suite runs them - a plain fetch to `<base>/responses` - against each backend kind,
 * every answer and every streamed event validated with the zod schemas below. The schemas
 * are written here from the fields the suite's ResponseResource and event schemas require
 * (and the openai package's event types), not generated: a field the router leaves out, or
 * sends with the wrong type, fails the case. Then `completed_at` over the paths that end a
 * response (completed, incomplete, failed, cancelled, cache hit, prewarm, WebSocket, GET)
 * and the penalties.
 */

// ---- schemas --------------------------------------------------------------------------

const int = z.number().int();
const ITEM_STATUS = z.enum(["in_progress", "completed", "incomplete"]);

const Logprob = z.object({ token: z.string(), logprob: z.number(), bytes: z.array(int), top_logprobs: z.array(z.object({ token: z.string(), logprob: z.number(), bytes: z.array(int) })) });
const OutputText = z.object({ type: z.literal("output_text"), text: z.string(), annotations: z.array(z.object({ type: z.string() })), logprobs: z.array(Logprob) });
const Refusal = z.object({ type: z.literal("refusal"), refusal: z.string() });
const ReasoningText = z.object({ type: z.literal("reasoning_text"), text: z.string() });

const MessageItem = z.object({ type: z.literal("message"), id: z.string().min(1), status: ITEM_STATUS, role: z.literal("assistant"), content: z.array(z.union([OutputText, Refusal])) });
const FunctionCallItem = z.object({ type: z.literal("function_call"), id: z.string().min(1), call_id: z.string().min(1), name: z.string().min(1), arguments: z.string(), status: ITEM_STATUS });
const ReasoningItem = z.object({ type: z.literal("reasoning"), id: z.string().min(1), summary: z.array(z.object({ type: z.literal("summary_text"), text: z.string() })) });
/** The router's hosted search (the tool loop); as OpenAI's own, the item a stream opens has no `action` until its query is known. */
const WebSearchCallItem = z.object({ type: z.literal("web_search_call"), id: z.string().min(1), status: z.enum(["in_progress", "searching", "completed", "failed"]), action: z.object({ type: z.string() }).optional() });
const OutputItem = z.discriminatedUnion("type", [MessageItem, FunctionCallItem, ReasoningItem, WebSearchCallItem]);

const Usage = z.object({
  input_tokens: int,
  input_tokens_details: z.object({ cached_tokens: int }),
  output_tokens: int,
  output_tokens_details: z.object({ reasoning_tokens: int }),
  total_tokens: int,
});

const ResponseResource = z.object({
  id: z.string().regex(/^resp_/),
  object: z.literal("response"),
  created_at: int,
  completed_at: int.nullable(),
  status: z.enum(["queued", "in_progress", "completed", "incomplete", "failed", "cancelled"]),
  incomplete_details: z.object({ reason: z.string() }).nullable(),
  model: z.string(),
  previous_response_id: z.string().nullable(),
  instructions: z.string().nullable(),
  output: z.array(OutputItem),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  tools: z.array(z.object({ type: z.string() })),
  tool_choice: z.union([z.enum(["none", "auto", "required"]), z.object({ type: z.string() })]),
  truncation: z.enum(["auto", "disabled"]),
  parallel_tool_calls: z.boolean(),
  text: z.object({ format: z.object({ type: z.string() }) }),
  top_p: z.number(),
  presence_penalty: z.number(),
  frequency_penalty: z.number(),
  top_logprobs: int,
  temperature: z.number(),
  reasoning: z.object({ effort: z.string().nullable(), summary: z.string().nullable() }).nullable(),
  usage: Usage.nullable(),
  max_output_tokens: int.nullable(),
  max_tool_calls: int.nullable(),
  store: z.boolean(),
  background: z.boolean(),
  service_tier: z.string(),
  metadata: z.record(z.string(), z.string()),
  safety_identifier: z.string().nullable(),
  prompt_cache_key: z.string().nullable(),
  conversation: z.object({ id: z.string() }).optional(),
  user: z.string().optional(),
});
type ResponseResource = z.infer<typeof ResponseResource>;

const seq = { sequence_number: int };
const at = { item_id: z.string().min(1), output_index: int };
const lifecycle = <T extends string>(type: T) => z.object({ type: z.literal(type), ...seq, response: ResponseResource });

/** Every event a response of these cases may carry, keyed by type (an unknown type fails). */
const EVENTS: Record<string, z.ZodType> = {
  "response.created": lifecycle("response.created"),
  "response.queued": lifecycle("response.queued"),
  "response.in_progress": lifecycle("response.in_progress"),
  "response.completed": lifecycle("response.completed"),
  "response.incomplete": lifecycle("response.incomplete"),
  "response.failed": lifecycle("response.failed"),
  "response.output_item.added": z.object({ type: z.literal("response.output_item.added"), ...seq, output_index: int, item: OutputItem }),
  "response.output_item.done": z.object({ type: z.literal("response.output_item.done"), ...seq, output_index: int, item: OutputItem }),
  "response.content_part.added": z.object({ type: z.literal("response.content_part.added"), ...seq, ...at, content_index: int, part: z.union([OutputText, Refusal, ReasoningText]) }),
  "response.content_part.done": z.object({ type: z.literal("response.content_part.done"), ...seq, ...at, content_index: int, part: z.union([OutputText, Refusal, ReasoningText]) }),
  "response.output_text.delta": z.object({ type: z.literal("response.output_text.delta"), ...seq, ...at, content_index: int, delta: z.string(), logprobs: z.array(Logprob) }),
  "response.output_text.done": z.object({ type: z.literal("response.output_text.done"), ...seq, ...at, content_index: int, text: z.string(), logprobs: z.array(Logprob) }),
  "response.function_call_arguments.delta": z.object({ type: z.literal("response.function_call_arguments.delta"), ...seq, ...at, delta: z.string() }),
  "response.function_call_arguments.done": z.object({ type: z.literal("response.function_call_arguments.done"), ...seq, ...at, arguments: z.string() }),
  "response.web_search_call.in_progress": z.object({ type: z.literal("response.web_search_call.in_progress"), ...seq, ...at }),
  "response.web_search_call.searching": z.object({ type: z.literal("response.web_search_call.searching"), ...seq, ...at }),
  "response.web_search_call.completed": z.object({ type: z.literal("response.web_search_call.completed"), ...seq, ...at }),
};

const TERMINAL = new Set(["response.completed", "response.failed", "response.incomplete"]);

/** An answer that validates (the schema's complaint otherwise), as it came: fields the schema does not name kept. */
function validResponse(body: unknown, what: string): ResponseResource {
  const r = ResponseResource.safeParse(body);
  expect(r.success, `${what}: ${r.success ? "" : z.prettifyError(r.error)}`).toBe(true);
  const response = body as ResponseResource;
  // completed_at: an integer no earlier than created_at once completed, null otherwise.
  if (response.status === "completed") expect(response.completed_at, `${what}: completed_at`).toBeGreaterThanOrEqual(response.created_at);
  else expect(response.completed_at, `${what}: completed_at while ${response.status}`).toBeNull();
  return response;
}

function validEvent(event: SseEvent, what: string): void {
  const data = event.data as { type?: string };
  expect(event.event ?? data.type, `${what}: the event line names the data's type`).toBe(data.type);
  const schema = EVENTS[data.type ?? ""];
  expect(schema, `${what}: unexpected event type ${data.type}`).toBeDefined();
  const r = schema!.safeParse(data);
  expect(r.success, `${what} ${data.type}: ${r.success ? "" : z.prettifyError(r.error)}`).toBe(true);
  if ("response" in data) validResponse(data.response, `${what} ${data.type}.response`);
}

// ---- SSE ------------------------------------------------------------------------------

interface SseEvent {
  event: string | undefined;
  data: unknown;
}

/**
 * An SSE parser fed one read at a time: a frame, a line or a UTF-8 character split across
 * reads is joined before it is parsed. Frames end at a blank line (\n\n or \r\n\r\n); `data:`
 * lines join with \n; comments and `[DONE]` are skipped.
 */
class SseParser {
  private readonly decoder = new TextDecoder();
  private buffer = "";
  readonly events: SseEvent[] = [];

  push(bytes: Uint8Array): void {
    this.buffer += this.decoder.decode(bytes, { stream: true });
    this.drain();
  }

  end(): SseEvent[] {
    this.buffer += this.decoder.decode();
    this.drain();
    expect(this.buffer.trim(), "the stream ended mid-frame").toBe("");
    return this.events;
  }

  private drain(): void {
    this.buffer = this.buffer.replace(/\r\n/g, "\n");
    let end: number;
    while ((end = this.buffer.indexOf("\n\n")) !== -1) {
      const frame = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      let event: string | undefined;
      const data: string[] = [];
      for (const line of frame.split("\n")) {
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon === -1 ? line : line.slice(0, colon);
        const value = colon === -1 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "event") event = value;
        else if (field === "data") data.push(value);
      }
      if (data.length === 0 || data.join("\n") === "[DONE]") continue;
      this.events.push({ event, data: JSON.parse(data.join("\n")) });
    }
  }
}

async function readSse(res: Response): Promise<{ events: SseEvent[]; raw: Uint8Array }> {
  const parser = new SseParser();
  const chunks: Uint8Array[] = [];
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    chunks.push(chunk);
    parser.push(chunk);
  }
  return { events: parser.end(), raw: Buffer.concat(chunks) };
}

// ---- backends -------------------------------------------------------------------------

const WEATHER_TOOL = {
  type: "function",
  name: "get_weather",
  description: "Current weather for a city.",
  parameters: { type: "object", properties: { location: { type: "string" } }, required: ["location"], additionalProperties: false },
  strict: true,
};
const CALL_ARGS = '{"location":"San Francisco"}';
/** A 1x1 PNG as a data URL. */
const PIXEL = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

const hasTools = (req: RecordedRequest) => Array.isArray(req.body?.tools) && req.body.tools.length > 0;

/**
 * The chat backend: a call of the first tool when tools are given (until a tool's result came
 * back, unless the question says "forever"), else text.
 */
function chatScript(req: RecordedRequest): Reply {
  const stream = req.body?.stream === true;
  const messages = (req.body?.messages ?? []) as { role: string }[];
  const answered = messages.some((m) => m.role === "tool") && !JSON.stringify(messages).includes("forever");
  if (hasTools(req) && !answered) {
    const name = req.body.tools[0].function.name as string;
    const args = name === "web_search" ? '{"query":"sf weather"}' : CALL_ARGS;
    if (stream) return { kind: "sse", frames: chatToolCallChunks([{ id: "call_chat1", name, args: [args.slice(0, 12), args.slice(12)] }]) };
    return { kind: "json", body: chatCompletion(null, "llama", { tool_calls: [{ id: "call_chat1", type: "function", function: { name, arguments: args } }] }) };
  }
  return stream ? { kind: "sse", frames: [...chatTextChunks(["Hello", " there"]), "data: [DONE]\n\n"] } : { kind: "json", body: chatCompletion("Hello there", "llama") };
}

/** The Messages backend: a tool_use when tools are given, else text. */
function anthropicScript(req: RecordedRequest): Reply {
  if (hasTools(req)) return messageReply(message([toolUseBlock("toolu_01A", req.body.tools[0].name, { location: "San Francisco" })], { stop_reason: "tool_use" }), req);
  return messageReply(message([textBlock("Hello there")]), req);
}

/** A Response as OpenAI returns it today, with every field (completed_at, the penalties, ...). */
function openaiResponse(req: RecordedRequest, output: unknown[], status: string): Record<string, unknown> {
  const done = status === "completed";
  return {
    id: "resp_upstream_0001",
    object: "response",
    created_at: 1_700_000_000,
    status,
    background: false,
    billing: { payer: "developer" },
    completed_at: done ? 1_700_000_003 : null,
    error: null,
    frequency_penalty: req.body?.frequency_penalty ?? 0,
    incomplete_details: null,
    instructions: req.body?.instructions ?? null,
    max_output_tokens: null,
    max_tool_calls: null,
    model: "gpt-4.1-2025-04-14",
    output: done ? output : [],
    parallel_tool_calls: true,
    presence_penalty: req.body?.presence_penalty ?? 0,
    previous_response_id: null,
    prompt_cache_key: null,
    prompt_cache_retention: null,
    reasoning: { effort: null, summary: null },
    safety_identifier: null,
    service_tier: done ? "default" : "auto",
    store: false,
    temperature: 1,
    text: { format: { type: "text" }, verbosity: "medium" },
    tool_choice: "auto",
    tools: req.body?.tools ?? [],
    top_logprobs: 0,
    top_p: 1,
    truncation: "disabled",
    usage: done ? { input_tokens: 12, input_tokens_details: { cached_tokens: 0 }, output_tokens: 6, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 18 } : null,
    user: null,
    metadata: {},
  };
}

/** The native backend: OpenAI's own objects and event grammar (text or a function call). */
function openaiScript(req: RecordedRequest): Reply {
  const call = hasTools(req);
  const item = call
    ? { id: "fc_up1", type: "function_call", status: "completed", arguments: CALL_ARGS, call_id: "call_up1", name: req.body.tools[0].name }
    : { id: "msg_up1", type: "message", status: "completed", role: "assistant", content: [{ type: "output_text", text: "Hello there", annotations: [], logprobs: [] }] };
  if (req.body?.stream !== true) return { kind: "json", body: openaiResponse(req, [item], "completed") };
  const frames: { event: string; data: unknown }[] = [];
  const ev = (type: string, payload: Record<string, unknown>) => frames.push({ event: type, data: { type, sequence_number: frames.length, ...payload } });
  ev("response.created", { response: openaiResponse(req, [], "in_progress") });
  ev("response.in_progress", { response: openaiResponse(req, [], "in_progress") });
  const ids = { item_id: item.id, output_index: 0 };
  if (call) {
    ev("response.output_item.added", { output_index: 0, item: { ...item, status: "in_progress", arguments: "" } });
    ev("response.function_call_arguments.delta", { ...ids, delta: '{"location":', obfuscation: "ab" });
    ev("response.function_call_arguments.delta", { ...ids, delta: '"San Francisco"}', obfuscation: "cd" });
    ev("response.function_call_arguments.done", { ...ids, arguments: CALL_ARGS });
  } else {
    ev("response.output_item.added", { output_index: 0, item: { ...item, status: "in_progress", content: [] } });
    ev("response.content_part.added", { ...ids, content_index: 0, part: { type: "output_text", text: "", annotations: [], logprobs: [] } });
    ev("response.output_text.delta", { ...ids, content_index: 0, delta: "Hello", logprobs: [], obfuscation: "x" });
    ev("response.output_text.delta", { ...ids, content_index: 0, delta: " there", logprobs: [], obfuscation: "y" });
    ev("response.output_text.done", { ...ids, content_index: 0, text: "Hello there", logprobs: [] });
    ev("response.content_part.done", { ...ids, content_index: 0, part: (item as { content: unknown[] }).content[0] });
  }
  ev("response.output_item.done", { output_index: 0, item });
  ev("response.completed", { response: openaiResponse(req, [item], "completed") });
  return { kind: "sse", frames };
}

// ---- the router -----------------------------------------------------------------------

let chat: MockUpstream;
let claude: MockUpstream;
let oai: MockUpstream;
let router: TestRouter;
let search: MockSearch;

const KINDS = [
  { kind: "chat", model: "chat-model", upstream: () => chat },
  { kind: "anthropic", model: "claude-model", upstream: () => claude },
  { kind: "openai", model: "gpt-native", upstream: () => oai },
] as const;

beforeAll(async () => {
  chat = await startMockUpstream();
  chat.setDefault("/chat/completions", chatScript);
  claude = await startAnthropicMock();
  claude.setDefault("/messages", anthropicScript);
  oai = await startMockUpstream();
  oai.setDefault("/responses", openaiScript);
  search = await startMockSearch(() => ({ json: { results: [{ url: "https://example.org/sf", title: "SF weather", content: "Fog." }] } }));
  router = await startTestRouter({
    endpoints: [
      { name: "box", url: chat.url, kind: "chat" },
      { name: "claude-ep", url: claude.url, kind: "anthropic", api_key: "sk-ant-test-0123456789" },
      { name: "oai", url: oai.url, kind: "openai", api_key: "sk-upstream-secret-0123456789" },
    ],
    models: {
      "chat-model": { endpoints: ["box"], upstream_model: "llama3.1:8b" },
      "claude-model": { endpoints: ["claude-ep"], upstream_model: "claude-upstream" },
      "gpt-native": { endpoints: ["oai"], upstream_model: "gpt-4.1" },
      "chat-cached": { endpoints: ["box"], upstream_model: "llama3.1:8b", cache: { ttl: "1m" } },
    },
    background: { concurrency: 1, cancel_wait: "2s" },
    tools: { web_search: { provider: "searxng", url: search.url }, max_rounds: 2 },
    routing: { retry: { attempts: 1 } },
  });
});

afterAll(async () => {
  await router?.close(1000);
  await Promise.all([chat?.close(), claude?.close(), oai?.close(), search?.close()]);
});

const post = (body: unknown) => router.fetch("/v1/responses", { method: "POST", headers: { authorization: "Bearer test-key", "content-type": "application/json" }, body: JSON.stringify(body) });

async function createJson(body: Record<string, unknown>, what: string): Promise<ResponseResource> {
  const res = await post(body);
  const json = await res.json();
  expect(res.status, `${what}: ${JSON.stringify(json)}`).toBe(200);
  return validResponse(json, what);
}

/** A streamed create: every event validated, the final response from its terminal event. */
async function createStream(body: Record<string, unknown>, what: string): Promise<{ events: Record<string, any>[]; final: ResponseResource; raw: Uint8Array }> {
  const res = await post({ ...body, stream: true });
  expect(res.status, what).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
  const { events, raw } = await readSse(res);
  events.forEach((e) => validEvent(e, what));
  const data = events.map((e) => e.data as Record<string, any>);
  data.forEach((e, i) => expect(e.sequence_number, `${what}: sequence numbers`).toBe(i));
  const terminal = data.filter((e) => TERMINAL.has(e.type));
  expect(terminal, `${what}: one terminal event, last`).toHaveLength(1);
  expect(data.at(-1)).toBe(terminal[0]);
  return { events: data, final: validResponse(terminal[0]!.response, `${what} final`), raw };
}

const user = (content: unknown) => ({ type: "message", role: "user", content });
const outputText = (r: ResponseResource) => r.output.flatMap((i) => (i.type === "message" ? i.content : [])).map((p) => (p.type === "output_text" ? p.text : "")).join("");

// ---- the cases ------------------------------------------------------------------------

describe.each(KINDS)("OpenResponses compliance cases on kind: $kind", ({ kind, model, upstream }) => {
  it("basic text: one user message, a completed response with text", async () => {
    const r = await createJson({ model, input: [user("Say hello in exactly 3 words.")] }, `${kind} basic`);
    expect(r.status).toBe("completed");
    expect(r.model).toBe(model);
    expect(outputText(r)).toBe("Hello there");
    // Kept as it was answered: GET returns the same completed_at.
    const got = await router.fetch(`/v1/responses/${r.id}`, { headers: { authorization: "Bearer test-key" } });
    expect(validResponse(await got.json(), `${kind} GET`).completed_at).toBe(r.completed_at);
  });

  it("streaming: every event validates, the final response comes from response.completed", async () => {
    const { events, final } = await createStream({ model, input: [user("Count from 1 to 5.")] }, `${kind} streaming`);
    expect(events.slice(0, 2).map((e) => e.type)).toEqual(["response.created", "response.in_progress"]);
    expect(events.slice(0, 2).map((e) => e.response.completed_at)).toEqual([null, null]);
    expect(events.some((e) => e.type === "response.output_text.delta")).toBe(true);
    expect(final.status).toBe("completed");
    expect(outputText(final)).toBe("Hello there");
    const got = await router.fetch(`/v1/responses/${final.id}`, { headers: { authorization: "Bearer test-key" } });
    expect(validResponse(await got.json(), `${kind} GET streamed`).completed_at).toBe(final.completed_at);
  });

  it("a system-role message in input", async () => {
    const r = await createJson({ model, input: [{ type: "message", role: "system", content: "You are a pirate." }, user("Say hello.")] }, `${kind} system`);
    expect(r.status).toBe("completed");
    const sent = upstream().requests.at(-1)!.body;
    expect(JSON.stringify(sent)).toContain("You are a pirate.");
  });

  it("function tool calling: a function_call output item", async () => {
    const r = await createJson({ model, input: [user("What's the weather like in San Francisco?")], tools: [WEATHER_TOOL] }, `${kind} tool call`);
    expect(r.status).toBe("completed");
    const call = r.output.find((i) => i.type === "function_call");
    expect(call).toMatchObject({ type: "function_call", name: "get_weather", status: "completed" });
    expect(JSON.parse((call as { arguments: string }).arguments)).toEqual({ location: "San Francisco" });
    expect(r.tools).toEqual([expect.objectContaining({ type: "function", name: "get_weather" })]);
  });

  it("function tool calling streamed: added, arguments delta and done, done - all with a function_call", async () => {
    const { events, final } = await createStream({ model, input: [user("What's the weather like in San Francisco?")], tools: [WEATHER_TOOL] }, `${kind} tool call streamed`);
    const added = events.find((e) => e.type === "response.output_item.added" && e.item.type === "function_call");
    const done = events.find((e) => e.type === "response.output_item.done" && e.item.type === "function_call");
    expect(added).toBeDefined();
    expect(done).toBeDefined();
    const deltas = events.filter((e) => e.type === "response.function_call_arguments.delta" && e.item_id === added!.item.id);
    expect(deltas.length).toBeGreaterThan(0);
    const argsDone = events.find((e) => e.type === "response.function_call_arguments.done");
    expect(argsDone).toMatchObject({ item_id: added!.item.id, output_index: added!.output_index });
    expect(JSON.parse(deltas.map((d) => d.delta).join(""))).toEqual({ location: "San Francisco" });
    expect(JSON.parse(argsDone!.arguments)).toEqual({ location: "San Francisco" });
    expect(done!.item).toMatchObject({ id: added!.item.id, name: "get_weather", status: "completed" });
    expect(final.output.find((i) => i.type === "function_call")).toEqual(done!.item);
  });

  it("an input_image data URL in user content", async () => {
    const r = await createJson({ model, input: [user([{ type: "input_text", text: "What is in this image?" }, { type: "input_image", image_url: PIXEL }])] }, `${kind} image`);
    expect(r.status).toBe("completed");
    // The picture reached the backend (as an image_url part, an image block, or as sent).
    expect(JSON.stringify(upstream().requests.at(-1)!.body)).toContain(PIXEL.slice("data:image/png;base64,".length, 60));
  });

  it("multi-turn: user, assistant with string content, user", async () => {
    const input = [user("My name is Alice."), { type: "message", role: "assistant", content: "Hello Alice! Nice to meet you." }, user("What is my name?")];
    const r = await createJson({ model, input }, `${kind} multi-turn`);
    expect(r.status).toBe("completed");
    expect(JSON.stringify(upstream().requests.at(-1)!.body)).toContain("Hello Alice! Nice to meet you.");
  });
});

describe("the SSE parser", () => {
  it("reads a stream split at every possible place the same as whole", async () => {
    const { events, raw } = await createStream({ model: "chat-model", input: [user("Hi, café ☕")], instructions: "Réponds en français ✓" }, "split");
    for (const size of [1, 2, 3, 7, 64]) {
      const parser = new SseParser();
      for (let i = 0; i < raw.length; i += size) parser.push(raw.subarray(i, i + size));
      expect(parser.end().map((e) => e.data)).toEqual(events);
    }
    const crlf = new SseParser();
    crlf.push(new TextEncoder().encode('event: response.created\r\ndata: {"a":\r'));
    crlf.push(new TextEncoder().encode('\ndata: 1}\r\n\r\n: a comment\n\ndata: [DONE]\n\n'));
    expect(crlf.end()).toEqual([{ event: "response.created", data: { a: 1 } }]);
  });
});

// ---- completed_at ---------------------------------------------------------------------

describe("completed_at", () => {
  it("kind: openai keeps the upstream's own value, JSON and streamed", async () => {
    expect((await createJson({ model: "gpt-native", input: "hi" }, "native json")).completed_at).toBe(1_700_000_003);
    expect((await createStream({ model: "gpt-native", input: "hi" }, "native stream")).final.completed_at).toBe(1_700_000_003);
  });

  it("is null for an incomplete response (JSON and streamed)", async () => {
    chat.enqueue("/chat/completions", { kind: "json", body: chatCompletion("trunc", "llama", { finish_reason: "length" }) });
    const r = await createJson({ model: "chat-model", input: "hi", max_output_tokens: 16 }, "incomplete json");
    expect(r).toMatchObject({ status: "incomplete", completed_at: null, incomplete_details: { reason: "max_output_tokens" } });
    chat.enqueue("/chat/completions", { kind: "sse", frames: [...chatTextChunks(["trunc"], "llama", "length"), "data: [DONE]\n\n"] });
    const { final } = await createStream({ model: "chat-model", input: "hi" }, "incomplete stream");
    expect(final).toMatchObject({ status: "incomplete", completed_at: null });
    const got = await router.fetch(`/v1/responses/${final.id}`, { headers: { authorization: "Bearer test-key" } });
    expect(await got.json()).toMatchObject({ status: "incomplete", completed_at: null });
  });

  it("is null for a response that failed mid-stream, as streamed and as stored", async () => {
    chat.enqueue("/chat/completions", { kind: "sse", frames: chatTextChunks(["Hel", "lo"]), dieAfter: 2 });
    const { final } = await createStream({ model: "chat-model", input: "hi" }, "failed stream");
    expect(final).toMatchObject({ status: "failed", completed_at: null });
    const got = await router.fetch(`/v1/responses/${final.id}`, { headers: { authorization: "Bearer test-key" } });
    expect(await got.json()).toMatchObject({ status: "failed", completed_at: null });
  });

  it("background: null while queued, then set when it completes; null once cancelled", async () => {
    const queued = await createJson({ model: "chat-model", input: "hi", background: true }, "background queued");
    expect(queued).toMatchObject({ status: "queued", completed_at: null });
    let done = queued;
    for (let i = 0; i < 200 && (done.status === "queued" || done.status === "in_progress"); i++) {
      await new Promise((r) => setTimeout(r, 25));
      done = validResponse(await (await router.fetch(`/v1/responses/${queued.id}`, { headers: { authorization: "Bearer test-key" } })).json(), "background poll");
    }
    expect(done.status).toBe("completed");
    expect(done.completed_at).toBeGreaterThanOrEqual(done.created_at);

    chat.enqueue("/chat/completions", slowText(100));
    const slow = await createJson({ model: "chat-model", input: "count slowly", background: true }, "background slow");
    const cancelled = await router.fetch(`/v1/responses/${slow.id}/cancel`, { method: "POST", headers: { authorization: "Bearer test-key" } });
    expect(cancelled.status).toBe(200);
    expect(validResponse(await cancelled.json(), "cancelled")).toMatchObject({ status: "cancelled", completed_at: null });
    const got = await router.fetch(`/v1/responses/${slow.id}`, { headers: { authorization: "Bearer test-key" } });
    expect(validResponse(await got.json(), "cancelled GET")).toMatchObject({ status: "cancelled", completed_at: null });
  });

  it("a cache hit is a new response with its own completed_at; a prewarm completes at once", async () => {
    const body = { model: "chat-cached", input: [user("cache me")] };
    const miss = await createJson(body, "cache miss");
    const calls = chat.requests.length;
    const hit = await createJson(body, "cache hit");
    expect(chat.requests.length).toBe(calls);
    expect(hit.id).not.toBe(miss.id);
    expect(hit.completed_at).toBeGreaterThanOrEqual(hit.created_at);
    const { final } = await createStream(body, "cache hit streamed");
    expect(final.completed_at).toBeGreaterThanOrEqual(final.created_at);

    const warm = await createJson({ model: "chat-model", input: [user("warm up")], prompt_cache_options: { prewarm: true } }, "prewarm");
    expect(warm).toMatchObject({ status: "completed", output: [] });
  });

  it("the tool loop: one response over its rounds, completed_at set once it completes, null when it stops incomplete", async () => {
    const r = await createJson({ model: "chat-model", input: "Weather in SF?", tools: [{ type: "web_search" }] }, "tool loop");
    expect(r.output.map((i) => [i.type, (i as { status?: string }).status])).toEqual([["web_search_call", "completed"], ["message", "completed"]]);
    expect(search.requests.length).toBeGreaterThan(0);
    expect(r.output[0]).toMatchObject({ action: { type: "search", query: "sf weather" } });
    const { final } = await createStream({ model: "chat-model", input: "Weather in SF?", tools: [{ type: "web_search" }] }, "tool loop streamed");
    expect(final.status).toBe("completed");
    expect(final.output[0]).toMatchObject({ type: "web_search_call", action: { type: "search", query: "sf weather" } });
    const stopped = await createJson({ model: "chat-model", input: "Search forever.", tools: [{ type: "web_search" }] }, "tool loop at max_rounds");
    expect(stopped).toMatchObject({ status: "incomplete", completed_at: null });
  });

  it("over a WebSocket: null in the opening snapshots, set on response.completed", async () => {
    const ws = new WsClient(router.url);
    try {
      const events = await ws.create({ model: "claude-model", input: [user("hi")] } as never);
      for (const e of events) if (e.response) expect(e.response.completed_at, e.type).toEqual(e.type === "response.completed" ? expect.any(Number) : null);
      const final = validResponse(finalResponse(events), "websocket");
      expect(final.status).toBe("completed");
      // generate: false answers at once with a completed response (no backend is called).
      const warm = validResponse(finalResponse(await ws.create({ model: "chat-model", input: [user("warm")], generate: false } as never)), "generate false");
      expect(warm).toMatchObject({ status: "completed", output: [] });
    } finally {
      ws.close();
    }
  });
});

// ---- the penalties --------------------------------------------------------------------

describe("presence_penalty and frequency_penalty", () => {
  it("echo the request's values (0 by default) and reach a chat backend", async () => {
    const r = await createJson({ model: "chat-model", input: "hi", presence_penalty: 0.5, frequency_penalty: -1.5 }, "penalties chat");
    expect(r).toMatchObject({ presence_penalty: 0.5, frequency_penalty: -1.5 });
    expect(chat.requests.at(-1)!.body).toMatchObject({ presence_penalty: 0.5, frequency_penalty: -1.5 });
    const plain = await createJson({ model: "chat-model", input: "hi" }, "no penalties");
    expect(plain).toMatchObject({ presence_penalty: 0, frequency_penalty: 0 });
    expect(chat.requests.at(-1)!.body).not.toHaveProperty("presence_penalty");
  });

  it("are echoed but not sent to an anthropic backend (the Messages API has none)", async () => {
    const r = await createJson({ model: "claude-model", input: "hi", presence_penalty: 1, frequency_penalty: 2 }, "penalties anthropic");
    expect(r).toMatchObject({ presence_penalty: 1, frequency_penalty: 2 });
    const sent = claude.requests.at(-1)!.body;
    assertMessagesRequest(sent);
    expect(sent).not.toHaveProperty("presence_penalty");
    expect(sent).not.toHaveProperty("frequency_penalty");
  });

  it("streamed, every snapshot carries them", async () => {
    const { events } = await createStream({ model: "chat-model", input: "hi", frequency_penalty: 0.25 }, "penalties stream");
    for (const e of events.filter((e) => e.response)) expect(e.response).toMatchObject({ presence_penalty: 0, frequency_penalty: 0.25 });
  });

  it.each([
    ["presence_penalty", 2.5, "decimal_above_max_value"],
    ["presence_penalty", -3, "decimal_below_min_value"],
    ["frequency_penalty", 9, "decimal_above_max_value"],
    ["frequency_penalty", -2.01, "decimal_below_min_value"],
    ["frequency_penalty", "high", "invalid_type"],
  ] as const)("%s = %s is a 400 naming the param", async (param, value, code) => {
    const calls = chat.requests.length;
    const res = await post({ model: "chat-model", input: "hi", [param]: value });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: Record<string, unknown> };
    expect(body.error).toEqual({ message: expect.stringContaining(param), type: "invalid_request_error", param, code });
    expect(chat.requests.length).toBe(calls);
  });
});
