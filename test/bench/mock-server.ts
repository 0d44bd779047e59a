/**
 * The benchmarks' FAST mock upstream: raw node:http, every payload built once at start,
 * no JSON parsing of requests (the model name and `"stream":true` are read with a regex).
 * It speaks both wire formats the router uses upstream:
 *
 *   POST /v1/chat/completions   chat completion JSON, or a chunk stream ending in [DONE]
 *   POST /v1/responses          a Response object, or the native Responses event stream
 *   POST /v1/messages           an Anthropic Message, or the Messages event stream
 *
 * The model name picks the scenario, so a request direct to the mock and the same
 * request through a router get the same answer:
 *   "...-long"  a long stream (LONG_CHUNKS text deltas) for CPU-per-chunk measurements
 *   "...-slow"  a stream that sends one delta per SLOW_INTERVAL_MS and stays open for
 *               SLOW_HOLD_MS (open-streams / RSS measurement)
 *   "...-tool"  a call of the `lookup` function tool, every turn (tool-loop measurements)
 *   "...-mcp"   (chat) a call of the MCP tool `bench__echo` until the request carries a tool
 *               result, then a short answer (the router's MCP tool round); "...-mcp-long":
 *               then a long one
 *   anything else: SMALL_CHUNKS text deltas (a short answer)
 * `--latency-ms N` waits N ms before the response headers (a fixed "model" latency).
 *
 * Run as a child process: `node --import tsx test/bench/mock-server.ts [--port N] [--latency-ms N]`;
 * it reports `{ ready: true, port }` over IPC (or prints it when there is no IPC channel).
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { parseArgs } from "node:util";
import { openaiResponse } from "../helpers/openai-response.js";

export const SMALL_CHUNKS = 16;
export const LONG_CHUNKS = 2000;
export const SLOW_INTERVAL_MS = 1000;

export interface MockOptions {
  port?: number;
  latencyMs?: number;
  longChunks?: number;
  slowHoldMs?: number;
}

const WORDS = ["Hello", " there", ",", " this", " is", " a", " fixed", " small", " answer", " from", " the", " mock", " upstream", ".", " It", " ends"];

function chatChunk(model: string, delta: Record<string, unknown>, finish: string | null): string {
  return `data: ${JSON.stringify({ id: "chatcmpl-bench", object: "chat.completion.chunk", created: 1, model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
}

function chatStream(model: string, n: number): { head: string; deltas: string[]; tail: string } {
  const deltas: string[] = [];
  for (let i = 0; i < n; i++) deltas.push(chatChunk(model, { content: WORDS[i % WORDS.length] }, null));
  const usage = { id: "chatcmpl-bench", object: "chat.completion.chunk", created: 1, model, choices: [], usage: { prompt_tokens: 12, completion_tokens: n, total_tokens: 12 + n } };
  return {
    head: chatChunk(model, { role: "assistant", content: "" }, null),
    deltas,
    tail: chatChunk(model, {}, "stop") + `data: ${JSON.stringify(usage)}\n\ndata: [DONE]\n\n`,
  };
}

function chatCompletion(model: string): string {
  const content = WORDS.join("");
  return JSON.stringify({
    id: "chatcmpl-bench",
    object: "chat.completion",
    created: 1,
    model,
    choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
    usage: { prompt_tokens: 12, completion_tokens: WORDS.length, total_tokens: 12 + WORDS.length },
  });
}

/** What a `kind: openai` endpoint answers, in OpenAI's layout: the router's rewrite of it is measured on what OpenAI sends. */
function nativeResponse(model: string, text: string, status = "completed"): Record<string, unknown> {
  const done = status === "completed";
  return openaiResponse({
    id: "resp_upstreambench0001",
    status,
    completed_at: done ? 2 : null,
    model,
    output: done ? [{ id: "msg_upbench1", type: "message", status: "completed", role: "assistant", content: [{ type: "output_text", text, annotations: [], logprobs: [] }] }] : [],
    usage: done ? { input_tokens: 12, input_tokens_details: { cached_tokens: 0 }, output_tokens: 16, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 28 } : null,
  });
}

function nativeStream(model: string, n: number): { head: string; deltas: string[]; tail: string } {
  let seq = 0;
  const ev = (type: string, payload: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, ...payload, sequence_number: seq++ })}\n\n`;
  const parts: string[] = [];
  for (let i = 0; i < n; i++) parts.push(WORDS[i % WORDS.length]!);
  const text = parts.join("");
  const at = { item_id: "msg_upbench1", output_index: 0, content_index: 0 };
  let head = ev("response.created", { response: nativeResponse(model, "", "in_progress") });
  head += ev("response.in_progress", { response: nativeResponse(model, "", "in_progress") });
  head += ev("response.output_item.added", { output_index: 0, item: { id: "msg_upbench1", type: "message", status: "in_progress", role: "assistant", content: [] } });
  head += ev("response.content_part.added", { ...at, part: { type: "output_text", text: "", annotations: [], logprobs: [] } });
  const deltas = parts.map((delta) => ev("response.output_text.delta", { ...at, delta, logprobs: [] }));
  let tail = ev("response.output_text.done", { ...at, text, logprobs: [] });
  tail += ev("response.content_part.done", { ...at, part: { type: "output_text", text, annotations: [], logprobs: [] } });
  tail += ev("response.output_item.done", {
    output_index: 0,
    item: { id: "msg_upbench1", type: "message", status: "completed", role: "assistant", content: [{ type: "output_text", text, annotations: [], logprobs: [] }] },
  });
  tail += ev("response.completed", { response: nativeResponse(model, text) });
  return { head, deltas, tail };
}

function anthropicMessage(model: string, content: unknown[], outputTokens: number): Record<string, unknown> {
  return {
    id: "msg_bench01",
    type: "message",
    role: "assistant",
    model,
    content,
    stop_reason: "end_turn",
    stop_sequence: null,
    usage: { input_tokens: 12, output_tokens: outputTokens, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
  };
}

function anthropicStream(model: string, n: number): { head: string; deltas: string[]; tail: string } {
  const ev = (type: string, payload: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, ...payload })}\n\n`;
  let head = ev("message_start", { message: { ...anthropicMessage(model, [], 1), stop_reason: null } });
  head += ev("content_block_start", { index: 0, content_block: { type: "text", text: "" } });
  head += ev("ping", {});
  const deltas: string[] = [];
  for (let i = 0; i < n; i++) deltas.push(ev("content_block_delta", { index: 0, delta: { type: "text_delta", text: WORDS[i % WORDS.length] } }));
  let tail = ev("content_block_stop", { index: 0 });
  tail += ev("message_delta", { delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: n } });
  tail += ev("message_stop", {});
  return { head, deltas, tail };
}

/** A turn that calls the `lookup` tool (or `name`): the chat chunk stream, or the native event stream. */
function toolStream(path: "chat" | "responses", model: string, name = "lookup", args = '{"q":"next"}'): { head: string; deltas: string[]; tail: string } {
  if (path === "chat") {
    const head = chatChunk(model, { role: "assistant", content: null }, null) + chatChunk(model, { tool_calls: [{ index: 0, id: "call_bench1", type: "function", function: { name, arguments: "" } }] }, null);
    const deltas = [chatChunk(model, { tool_calls: [{ index: 0, function: { arguments: args } }] }, null)];
    const usage = { id: "chatcmpl-bench", object: "chat.completion.chunk", created: 1, model, choices: [], usage: { prompt_tokens: 40, completion_tokens: 8, total_tokens: 48 } };
    return { head, deltas, tail: chatChunk(model, {}, "tool_calls") + `data: ${JSON.stringify(usage)}\n\ndata: [DONE]\n\n` };
  }
  let seq = 0;
  const ev = (type: string, payload: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, ...payload, sequence_number: seq++ })}\n\n`;
  const call = { id: "fc_upbench1", type: "function_call", status: "completed", call_id: "call_bench1", name: "lookup", arguments: args };
  const base = nativeResponse(model, "", "in_progress");
  const done = { ...nativeResponse(model, ""), output: [call] };
  const head = ev("response.created", { response: base }) + ev("response.in_progress", { response: base }) + ev("response.output_item.added", { output_index: 0, item: { ...call, status: "in_progress", arguments: "" } });
  const deltas = [ev("response.function_call_arguments.delta", { item_id: call.id, output_index: 0, delta: args })];
  const tail = ev("response.function_call_arguments.done", { item_id: call.id, output_index: 0, arguments: args }) + ev("response.output_item.done", { output_index: 0, item: call }) + ev("response.completed", { response: done });
  return { head, deltas, tail };
}

interface Payloads {
  json: Buffer;
  stream: { head: Buffer; deltas: Buffer[]; tail: Buffer; all: Buffer };
}

type Route = "chat" | "responses" | "messages";

const JSON_HEADERS = { "content-type": "application/json" };
const SSE_HEADERS = { "content-type": "text/event-stream", "cache-control": "no-cache" };
const MODEL = /"model"\s*:\s*"([^"]{1,200})"/;
const STREAM = /"stream"\s*:\s*true/;
const TOOL_RESULT = /"role"\s*:\s*"tool"/;

export async function startFastMock(opts: MockOptions = {}): Promise<{ port: number; close(): Promise<void> }> {
  const latency = opts.latencyMs ?? 0;
  const longChunks = opts.longChunks ?? LONG_CHUNKS;
  const slowHold = opts.slowHoldMs ?? 120_000;
  const cache = new Map<string, Payloads>();

  const payloads = (path: Route, model: string, mcpCall = false): Payloads => {
    const key = `${path} ${model}${mcpCall ? " call" : ""}`;
    const p = cache.get(key);
    if (p) return p;
    const n = model.endsWith("-long") ? longChunks : model.endsWith("-slow") ? Math.ceil(slowHold / SLOW_INTERVAL_MS) : SMALL_CHUNKS;
    if (path === "messages") return cached(key, JSON.stringify(anthropicMessage(model, [{ type: "text", text: WORDS.join("") }], WORDS.length)), anthropicStream(model, n));
    const s = mcpCall ? toolStream(path, model, "bench__echo", '{"text":"bench"}') : model.endsWith("-tool") ? toolStream(path, model) : path === "chat" ? chatStream(model, n) : nativeStream(model, n);
    const json = path === "chat" ? chatCompletion(model) : JSON.stringify(nativeResponse(model, WORDS.join("")));
    return cached(key, json, s);
  };

  const cached = (key: string, json: string, s: { head: string; deltas: string[]; tail: string }): Payloads => {
    const deltas = s.deltas.map((d) => Buffer.from(d));
    const p: Payloads = { json: Buffer.from(json), stream: { head: Buffer.from(s.head), deltas, tail: Buffer.from(s.tail), all: Buffer.from(s.head + s.deltas.join("") + s.tail) } };
    if (cache.size < 64) cache.set(key, p);
    return p;
  };

  const reply = (res: ServerResponse, path: Route, model: string, stream: boolean, mcpCall: boolean) => {
    const p = payloads(path, model, mcpCall);
    if (!stream) {
      res.writeHead(200, { ...JSON_HEADERS, "content-length": p.json.length });
      res.end(p.json);
      return;
    }
    res.writeHead(200, SSE_HEADERS);
    if (model.endsWith("-slow")) {
      // First event at once, then one delta per interval: a stream that stays open.
      res.write(p.stream.head);
      let i = 0;
      const timer = setInterval(() => {
        if (res.destroyed || i >= p.stream.deltas.length) {
          clearInterval(timer);
          if (!res.destroyed) res.end(p.stream.tail);
          return;
        }
        res.write(p.stream.deltas[i++]);
      }, SLOW_INTERVAL_MS);
      res.on("close", () => clearInterval(timer));
      return;
    }
    if (model.endsWith("-long")) {
      // Many upstream chunks, as a token stream arrives: one write per delta.
      res.write(p.stream.head);
      for (const d of p.stream.deltas) res.write(d);
      res.end(p.stream.tail);
      return;
    }
    res.end(p.stream.all);
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = req.url ?? "/";
    const path: Route | null = url.endsWith("/chat/completions") ? "chat" : url.endsWith("/responses") ? "responses" : url.endsWith("/messages") ? "messages" : null;
    if (req.method !== "POST" || !path) {
      req.resume();
      res.writeHead(url.endsWith("/models") ? 200 : 404, JSON_HEADERS);
      res.end(url.endsWith("/models") ? '{"object":"list","data":[]}' : '{"error":{"message":"not found","type":"invalid_request_error","param":null,"code":null}}');
      return;
    }
    let body = "";
    req.setEncoding("utf8");
    let full = "";
    req.on("data", (c: string) => {
      if (body.length < 4096) body += c;
      else if (full.length < 65_536) full += c;
    });
    req.on("end", () => {
      const model = MODEL.exec(body)?.[1] ?? "mock";
      const stream = STREAM.test(body);
      const mcpCall = path === "chat" && (model.endsWith("-mcp") || model.endsWith("-mcp-long")) && !TOOL_RESULT.test(body + full);
      if (latency > 0) setTimeout(() => reply(res, path, model, stream, mcpCall), latency);
      else reply(res, path, model, stream, mcpCall);
    });
  });
  server.keepAliveTimeout = 60_000;
  server.headersTimeout = 70_000;
  server.maxRequestsPerSocket = 0;
  await new Promise<void>((r) => server.listen(opts.port ?? 0, "127.0.0.1", 4096, r));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

const isMain = process.argv[1] && import.meta.url.endsWith(process.argv[1].replace(/^.*\//, ""));
if (isMain) {
  const { values } = parseArgs({ options: { port: { type: "string" }, "latency-ms": { type: "string" }, "long-chunks": { type: "string" }, "slow-hold-ms": { type: "string" } } });
  const mock = await startFastMock({
    port: values.port ? Number(values.port) : 0,
    latencyMs: values["latency-ms"] ? Number(values["latency-ms"]) : 0,
    longChunks: values["long-chunks"] ? Number(values["long-chunks"]) : undefined,
    slowHoldMs: values["slow-hold-ms"] ? Number(values["slow-hold-ms"]) : undefined,
  });
  const msg = { ready: true, port: mock.port };
  if (process.send) process.send(msg);
  else console.log(JSON.stringify(msg));
  process.on("SIGTERM", () => void mock.close().then(() => process.exit(0)));
  process.on("disconnect", () => void mock.close().then(() => process.exit(0)));
}
