import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A scripted OpenAI-compatible upstream on loopback: a real HTTP server that
 * answers /chat/completions, /responses, /embeddings and /models. Each test
 * queues replies (or sets a default), and every request received is recorded
 * so tests can assert what the router sent upstream.
 */
export type Reply =
  | { kind: "json"; status?: number; body: unknown; headers?: Record<string, string> }
  | { kind: "sse"; frames: (string | { event?: string; data: unknown })[]; delayMs?: number; dieAfter?: number; status?: number; holdOpenMs?: number }
  | { kind: "hang" }
  /** Bytes written exactly as given, one write per chunk with `gapMs` between (so each is its own read). */
  | { kind: "raw"; chunks: (string | Uint8Array)[]; gapMs?: number; status?: number; contentType?: string }
  | { kind: "destroy" };

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage["headers"];
  body: any;
}

export type Script = (req: RecordedRequest) => Reply | undefined;

export interface MockUpstream {
  url: string; // base URL including /v1
  port: number;
  requests: RecordedRequest[];
  /** Replies served in order for the given path suffix ("/chat/completions", "/responses", ...). */
  enqueue(path: string, ...replies: Reply[]): void;
  /** Fallback when nothing is queued for a path. */
  setDefault(path: string, reply: Reply | Script): void;
  /** Number of currently open upstream requests. */
  open(): number;
  /** Requests whose client (the router) went away before the reply finished. */
  aborted: number;
  close(): Promise<void>;
}

export async function startMockUpstream(port = 0): Promise<MockUpstream> {
  const queues = new Map<string, Reply[]>();
  const defaults = new Map<string, Reply | Script>();
  const requests: RecordedRequest[] = [];
  const sockets = new Set<import("node:net").Socket>();
  let open = 0;
  const state = { aborted: 0 };

  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString("utf8");
    let body: any = text;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      // keep raw text
    }
    const path = (req.url ?? "/").replace(/^\/v1/, "").split("?")[0]!;
    const rec: RecordedRequest = { method: req.method ?? "GET", path, headers: req.headers, body };
    requests.push(rec);
    const queued = queues.get(path)?.shift();
    const fallback = defaults.get(path);
    const reply = queued ?? (typeof fallback === "function" ? fallback(rec) : fallback) ?? defaultReply(path, rec);
    open++;
    let finished = false;
    res.on("close", () => {
      open--;
      if (!finished) state.aborted++;
    });
    await serve(reply, res);
    finished = true;
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(port, "127.0.0.1", r));
  const actual = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${actual}/v1`,
    port: actual,
    requests,
    enqueue(path, ...replies) {
      const q = queues.get(path) ?? [];
      q.push(...replies);
      queues.set(path, q);
    },
    setDefault(path, reply) {
      defaults.set(path, reply);
    },
    open: () => open,
    get aborted() {
      return state.aborted;
    },
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

async function serve(reply: Reply, res: ServerResponse): Promise<void> {
  if (reply.kind === "hang") {
    await new Promise<void>((r) => res.on("close", r));
    return;
  }
  if (reply.kind === "destroy") {
    res.socket?.destroy();
    return;
  }
  if (reply.kind === "raw") {
    res.writeHead(reply.status ?? 200, { "content-type": reply.contentType ?? "text/event-stream" });
    for (const c of reply.chunks) {
      if (res.destroyed) return;
      res.write(c);
      await sleep(reply.gapMs ?? 1);
    }
    res.end();
    return;
  }
  if (reply.kind === "json") {
    res.writeHead(reply.status ?? 200, { "content-type": "application/json", ...reply.headers });
    res.end(JSON.stringify(reply.body));
    return;
  }
  res.writeHead(reply.status ?? 200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  let i = 0;
  for (const f of reply.frames) {
    if (res.destroyed) return;
    if (reply.dieAfter !== undefined && i >= reply.dieAfter) {
      await sleep(30); // let what was written reach the router first
      res.socket?.destroy();
      return;
    }
    if (typeof f === "string") res.write(f);
    else res.write(`${f.event ? `event: ${f.event}\n` : ""}data: ${typeof f.data === "string" ? f.data : JSON.stringify(f.data)}\n\n`);
    i++;
    if (reply.delayMs) await sleep(reply.delayMs);
  }
  if (reply.dieAfter !== undefined && i >= reply.dieAfter) {
    await sleep(30);
    res.socket?.destroy();
    return;
  }
  if (reply.holdOpenMs) await sleep(reply.holdOpenMs);
  res.end();
}

function defaultReply(path: string, rec: RecordedRequest): Reply {
  if (path === "/chat/completions") {
    const model = rec.body?.model ?? "mock";
    return rec.body?.stream ? { kind: "sse", frames: [...chatTextChunks(["Hello", " world"], model), "data: [DONE]\n\n"] } : { kind: "json", body: chatCompletion("Hello world", model) };
  }
  if (path === "/models") return { kind: "json", body: { object: "list", data: [{ id: "mock", object: "model" }] } };
  if (path === "/embeddings") return { kind: "json", body: { object: "list", data: [{ object: "embedding", index: 0, embedding: [0.1, 0.2] }], model: rec.body?.model, usage: { prompt_tokens: 2, total_tokens: 2 } } };
  if (path === "/responses") {
    const resp = nativeResponse("Hello from upstream", rec.body?.model ?? "gpt-4.1");
    return rec.body?.stream ? { kind: "sse", frames: nativeEvents(resp) } : { kind: "json", body: resp };
  }
  return { kind: "json", status: 404, body: { error: { message: "not found", type: "invalid_request_error", param: null, code: null } } };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---------- builders for scripted bodies ----------

export function chatCompletion(content: string | null, model = "mock", extra: { tool_calls?: unknown[]; finish_reason?: string; usage?: unknown; reasoning_content?: string; refusal?: string } = {}) {
  return {
    id: "chatcmpl-1",
    object: "chat.completion",
    created: 1,
    model,
    choices: [
      {
        index: 0,
        message: { role: "assistant", content, tool_calls: extra.tool_calls, reasoning_content: extra.reasoning_content, refusal: extra.refusal },
        finish_reason: extra.finish_reason ?? (extra.tool_calls ? "tool_calls" : "stop"),
      },
    ],
    usage: extra.usage ?? { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 },
  };
}

export function chatChunk(delta: Record<string, unknown>, finish: string | null = null, model = "mock") {
  return { data: { id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model, choices: [{ index: 0, delta, finish_reason: finish }] } };
}

export function usageChunk(prompt: number, completion: number, extra: Record<string, unknown> = {}, model = "mock") {
  return { data: { id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model, choices: [], usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion, ...extra } } };
}

export function chatTextChunks(parts: string[], model = "mock", finish = "stop") {
  return [
    chatChunk({ role: "assistant", content: "" }, null, model),
    ...parts.map((p) => chatChunk({ content: p }, null, model)),
    chatChunk({}, finish, model),
    usageChunk(5, parts.length, {}, model),
  ];
}

/** A tool call streamed in fragments, arguments split across chunks, `type` null after the first. */
export function chatToolCallChunks(calls: { id: string; name: string; args: string[] }[], textFirst?: string) {
  const frames: ReturnType<typeof chatChunk>[] = [];
  if (textFirst) frames.push(chatChunk({ role: "assistant", content: textFirst }));
  calls.forEach((c, index) => {
    frames.push(chatChunk({ tool_calls: [{ index, id: c.id, type: "function", function: { name: c.name, arguments: "" } }] }));
    for (const a of c.args) frames.push(chatChunk({ tool_calls: [{ index, id: null, type: null, function: { arguments: a } }] }));
  });
  frames.push(chatChunk({}, "tool_calls"));
  frames.push(usageChunk(9, 4));
  return [...frames, "data: [DONE]\n\n"];
}

export function nativeResponse(text: string, model = "gpt-4.1", id = "resp_upstream123", extraOutput: unknown[] = []) {
  return {
    id,
    object: "response",
    created_at: 1,
    status: "completed",
    error: null,
    incomplete_details: null,
    instructions: null,
    model,
    output: [
      ...extraOutput,
      { id: "msg_up1", type: "message", status: "completed", role: "assistant", content: [{ type: "output_text", text, annotations: [], logprobs: [] }] },
    ],
    parallel_tool_calls: true,
    tool_choice: "auto",
    tools: [],
    temperature: 1,
    top_p: 1,
    store: false,
    metadata: {},
    usage: { input_tokens: 3, input_tokens_details: { cached_tokens: 1, cache_write_tokens: 0 }, output_tokens: 4, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 7 },
  };
}

/** The OpenAI event stream for a finished response with one text message (plus optional leading items). */
export function nativeEvents(resp: ReturnType<typeof nativeResponse>, deltas?: string[]) {
  const frames: { event: string; data: unknown }[] = [];
  let seq = 0;
  const ev = (type: string, payload: Record<string, unknown>) => frames.push({ event: type, data: { type, ...payload, sequence_number: seq++ } });
  const base = { ...resp, status: "in_progress", output: [], usage: null };
  ev("response.created", { response: base });
  ev("response.in_progress", { response: base });
  resp.output.forEach((item: any, output_index) => {
    if (item.type !== "message") {
      ev("response.output_item.added", { output_index, item });
      ev("response.output_item.done", { output_index, item });
      return;
    }
    const text = item.content[0].text as string;
    ev("response.output_item.added", { output_index, item: { ...item, status: "in_progress", content: [] } });
    ev("response.content_part.added", { item_id: item.id, output_index, content_index: 0, part: { type: "output_text", text: "", annotations: [], logprobs: [] } });
    const half = Math.ceil(text.length / 2);
    for (const delta of deltas ?? [text.slice(0, half), text.slice(half)]) ev("response.output_text.delta", { item_id: item.id, output_index, content_index: 0, delta, logprobs: [] });
    ev("response.output_text.done", { item_id: item.id, output_index, content_index: 0, text, logprobs: [] });
    ev("response.content_part.done", { item_id: item.id, output_index, content_index: 0, part: item.content[0] });
    ev("response.output_item.done", { output_index, item });
  });
  ev("response.completed", { response: resp });
  return frames;
}

export function upstreamError(status: number, message: string, code: string | null = null, type = "invalid_request_error", param: string | null = null): Reply {
  return { kind: "json", status, body: { error: { message, type, param, code } } };
}

/** "Hello" as an upstream streams it for `url`: chat chunks and [DONE] for /chat/completions, else native Responses events (SSE text). */
function helloSseFrames(url: string): string[] {
  if (url.endsWith("/chat/completions")) return [...chatTextChunks(["Hel", "lo"]).map((f) => `data: ${JSON.stringify(f.data)}\n\n`), "data: [DONE]\n\n"];
  return nativeEvents(nativeResponse("Hello")).map((f) => `event: ${f.event}\ndata: ${JSON.stringify(f.data)}\n\n`);
}

/**
 * An upstream (chat and native routes) that answers a stream's headers at once and holds its
 * events ("Hello") until the test calls `send`: `hold(send, res)` runs per request.
 * Returns the server and its `/v1` base URL.
 */
export async function startHeldSseUpstream(hold: (send: () => void, res: ServerResponse) => void): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.flushHeaders();
      const frames = helloSseFrames(req.url!);
      hold(() => res.end(frames.join("")), res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1` };
}
