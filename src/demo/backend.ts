import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { exampleFor } from "./example-json.js";
import { demoEmbeddingsAnswer } from "./embeddings.js";

/**
 * The demo backend behind `npm run demo`: a tiny chat-completions server with canned
 * answers, so a newcomer sees /v1/responses, streaming, tool calls, structured output,
 * chaining and background jobs work before connecting a real model. Not a model: every
 * answer says so. Loopback only. Speaks what `kind: chat` endpoints send: POST /v1/chat/completions (JSON
 * or SSE chunks, tool calls, usage), POST /v1/embeddings (deterministic demo vectors:
 * embeddings.ts, for file_search) and GET /v1/models (health probes).
 */
export const DEMO_MODEL = "demo";
export const DEMO_LABEL = "[demo backend: canned answer, not a real model]";

interface ChatMessage {
  role: string;
  content?: unknown;
  tool_calls?: unknown[];
}
interface ChatTool {
  type?: string;
  function?: { name?: string; parameters?: unknown };
}
interface ChatRequest {
  model?: string;
  messages?: ChatMessage[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  tools?: ChatTool[];
  tool_choice?: unknown;
  response_format?: { type?: string; json_schema?: { schema?: unknown } };
}

/** `json`: a structured answer (streamed in pieces: it has no spaces to split at). */
type Answer = { kind: "text"; text: string; json?: boolean } | { kind: "tool"; name: string; args: string };

export interface DemoBackend {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Starts the demo backend on 127.0.0.1:port (0: any free port). `delayMs` paces stream chunks. */
export async function startDemoBackend(port: number, opts: { delayMs?: number } = {}): Promise<DemoBackend> {
  const delayMs = opts.delayMs ?? 40;
  let calls = 0;
  const server: Server = createServer((req, res) => {
    handle(req, res, ++calls, delayMs).catch((err: Error) => {
      if (!res.headersSent) send(res, 500, { error: { message: `demo backend: ${err.message}`, type: "server_error", param: null, code: null } });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });
  const actual = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${actual}/v1`,
    port: actual,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function handle(req: IncomingMessage, res: ServerResponse, n: number, delayMs: number): Promise<void> {
  const path = (req.url ?? "").split("?")[0];
  if (req.method === "GET" && path === "/v1/models") {
    return send(res, 200, { object: "list", data: [{ id: DEMO_MODEL, object: "model", created: 0, owned_by: "responses-router-demo" }] });
  }
  if (req.method === "POST" && path === "/v1/embeddings") {
    let body: { input?: unknown; model?: string };
    try {
      body = JSON.parse(await readBody(req)) as { input?: unknown; model?: string };
    } catch {
      return send(res, 400, { error: { message: "demo backend: the body is not JSON", type: "invalid_request_error", param: null, code: null } });
    }
    return send(res, 200, demoEmbeddingsAnswer(body.input, body.model ?? DEMO_MODEL));
  }
  if (req.method !== "POST" || path !== "/v1/chat/completions") {
    return send(res, 404, { error: { message: `demo backend: no route ${req.method} ${path}`, type: "invalid_request_error", param: null, code: "unknown_url" } });
  }
  let body: ChatRequest;
  try {
    body = JSON.parse(await readBody(req)) as ChatRequest;
  } catch {
    return send(res, 400, { error: { message: "demo backend: the body is not JSON", type: "invalid_request_error", param: null, code: null } });
  }
  const answer = answerFor(body);
  const id = `chatcmpl-demo${n}`;
  const model = body.model ?? DEMO_MODEL;
  const created = Math.floor(Date.now() / 1000);
  const promptTokens = countWords(JSON.stringify(body.messages ?? []));
  const completionTokens = countWords(answer.kind === "text" ? answer.text : answer.args) + 1;
  const usage = { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
  const toolCall = answer.kind === "tool" ? { id: `call_demo${n}`, type: "function", function: { name: answer.name, arguments: answer.args } } : null;
  const finish = toolCall ? "tool_calls" : "stop";

  if (!body.stream) {
    const message = toolCall ? { role: "assistant", content: null, tool_calls: [toolCall] } : { role: "assistant", content: (answer as { text: string }).text };
    return send(res, 200, { id, object: "chat.completion", created, model, choices: [{ index: 0, message, finish_reason: finish }], usage });
  }
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null, extra: Record<string, unknown> = {}) =>
    res.write(`data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices: [{ index: 0, delta, finish_reason: finishReason }], ...extra })}\n\n`);
  chunk({ role: "assistant", content: "" });
  if (toolCall) {
    chunk({ tool_calls: [{ index: 0, id: toolCall.id, type: "function", function: { name: toolCall.function.name, arguments: "" } }] });
    for (const piece of pieces(toolCall.function.arguments, 12)) {
      await sleep(delayMs);
      chunk({ tool_calls: [{ index: 0, function: { arguments: piece } }] });
    }
  } else {
    const reply = answer as { text: string; json?: boolean };
    for (const word of reply.json ? pieces(reply.text, 12) : reply.text.split(/(?<= )/)) {
      await sleep(delayMs);
      if (res.destroyed) return;
      chunk({ content: word });
    }
  }
  chunk({}, finish);
  if (body.stream_options?.include_usage) res.write(`data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices: [], usage })}\n\n`);
  res.end("data: [DONE]\n\n");
}

/**
 * A tool call when tools are offered and the last message is the user's; else JSON when the
 * request asks for it (an example that satisfies its schema); else text.
 */
export function answerFor(body: ChatRequest): Answer {
  const messages = body.messages ?? [];
  const last = messages.at(-1);
  const tools = (body.tools ?? []).filter((t) => t.type === "function" && t.function?.name);
  if (tools.length > 0 && body.tool_choice !== "none" && last?.role === "user") {
    const fn = tools[0]!.function!;
    return { kind: "tool", name: fn.name!, args: JSON.stringify(exampleFor(fn.parameters ?? { type: "object", properties: {} })) };
  }
  const said = textOf(last?.content).slice(0, 200);
  const format = body.response_format;
  if (format?.type === "json_schema") return { kind: "text", text: JSON.stringify(exampleFor(format.json_schema?.schema)), json: true };
  if (format?.type === "json_object") return { kind: "text", text: JSON.stringify({ demo: DEMO_LABEL, you_said: said }), json: true };
  const earlier = messages.filter((m) => m.role === "user" || m.role === "assistant").length - 1;
  if (last?.role === "tool") {
    return { kind: "text", text: `${DEMO_LABEL} The tool answered: ${textOf(last.content).slice(0, 200)}` };
  }
  const chain = earlier > 0 ? ` I can see ${earlier} earlier message${earlier === 1 ? "" : "s"} in this conversation.` : "";
  return {
    kind: "text",
    text: `${DEMO_LABEL} You said: "${said}".${chain} Point the router at Ollama, vLLM or OpenAI in router.yaml for real answers.`,
  };
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((p) => (p && typeof p === "object" && typeof (p as { text?: unknown }).text === "string" ? (p as { text: string }).text : "")).join("");
  return "";
}

const countWords = (s: string) => s.split(/\s+/).filter(Boolean).length;

function* pieces(s: string, size: number): Generator<string> {
  for (let i = 0; i < s.length; i += size) yield s.slice(i, i + size);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    req.setEncoding("utf8");
    req.on("data", (d: string) => (text += d));
    req.on("end", () => resolve(text));
    req.on("error", reject);
  });
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
