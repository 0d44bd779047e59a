import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/**
 * A real chat-completions backend: llama.cpp (node-llama-cpp's prebuilt CPU
 * binary) running a GGUF file, behind the small part of the OpenAI chat API a
 * `kind: chat` endpoint uses: POST /v1/chat/completions (JSON, or SSE chunks with
 * `stream_options.include_usage`) and GET /v1/models. The prompt is built with the
 * chat template from the GGUF file; token counts are llama.cpp's own.
 *
 * node-llama-cpp is installed by `npm run test:llama` into test/e2e/llama only, so
 * it is imported at run time and the root type-check does not need it.
 */

// The few node-llama-cpp shapes this server uses.
type Token = number;
interface LlamaModel {
  tokenizer: unknown;
  isEogToken(t: Token): boolean;
  detokenize(tokens: readonly Token[], specialTokens?: boolean): string;
  createContext(o: { contextSize: number; threads: number; sequences: number }): Promise<LlamaContext>;
  dispose(): Promise<void>;
}
interface LlamaContext {
  getSequence(): LlamaSequence;
  dispose(): Promise<void>;
}
interface LlamaSequence {
  clearHistory(): Promise<void>;
  readonly nextTokenIndex: number;
  compareContextTokens(tokens: Token[]): { firstDifferentIndex: number };
  eraseContextTokenRanges(ranges: { start: number; end: number }[]): Promise<void>;
  evaluate(tokens: Token[], o: { temperature: number; seed?: number; grammarEvaluationState?: unknown }): AsyncGenerator<Token>;
}
interface ChatWrapper {
  wrapperName: string;
  generateContextState(o: { chatHistory: HistoryItem[] }): { contextText: { tokenize(t: unknown): Token[] } };
}
type HistoryItem = { type: "system"; text: string } | { type: "user"; text: string } | { type: "model"; response: string[] };
interface NodeLlamaCpp {
  getLlama(o: { gpu: false; build: "never"; logLevel: unknown; maxThreads: number }): Promise<{
    loadModel(o: { modelPath: string }): Promise<LlamaModel>;
    createGrammarForJsonSchema(schema: object): Promise<unknown>;
    dispose(): Promise<void>;
  }>;
  LlamaGrammarEvaluationState: new (o: { model: LlamaModel; grammar: unknown }) => unknown;
  resolveChatWrapper(model: LlamaModel): ChatWrapper | null;
  LlamaLogLevel: { warn: unknown };
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** With the prompt cache on: how many prompt tokens were reused from the last request's context. */
  prompt_tokens_details?: { cached_tokens: number };
}

export interface LlamaChatServer {
  url: string;
  /** What the last finished generation produced, as the backend counted it. */
  last: { text: string; usage: Usage; finishReason: "stop" | "length" } | null;
  /** The chat messages of every request received, oldest first. */
  received: { role: string; content: unknown }[][];
  chatTemplate: string;
  /** Prompt tokens received, and how many of them the prompt cache already held (never evaluated again). */
  stats: { requests: number; promptTokens: number; cachedTokens: number };
  close(): Promise<void>;
}

const PACKAGE = join(dirname(fileURLToPath(import.meta.url)), "node_modules", "node-llama-cpp", "dist", "index.js");

/**
 * `promptCache: true` keeps the context between requests and evaluates only what follows the
 * longest prefix shared with an earlier request (llama.cpp's `cache_prompt`), so a
 * conversation's next turn on the same server skips re-reading its history. `slots` (default
 * 1) sequences each keep one prefix, like llama.cpp's `--parallel` slots: a request takes the
 * slot sharing the longest prefix with it, else the least recently used one. Generation stays
 * one request at a time.
 */
export async function startLlamaChatServer(
  modelPath: string,
  opts: { threads?: number; modelName?: string; promptCache?: boolean; contextSize?: number; slots?: number } = {},
): Promise<LlamaChatServer> {
  const lib = (await import(pathToFileURL(PACKAGE).href)) as NodeLlamaCpp;
  const threads = opts.threads ?? 1; // the default (all cores) is far slower on a 2-core box shared with the router
  const llama = await lib.getLlama({ gpu: false, build: "never", logLevel: lib.LlamaLogLevel.warn, maxThreads: threads });
  const model = await llama.loadModel({ modelPath });
  const slots = opts.slots ?? 1;
  const context = await model.createContext({ contextSize: opts.contextSize ?? 512, threads, sequences: slots });
  const sequences = Array.from({ length: slots }, () => ({ seq: context.getSequence(), usedAt: 0 }));
  let clock = 0;
  const wrapper = lib.resolveChatWrapper(model);
  if (!wrapper) throw new Error("node-llama-cpp found no chat wrapper for the model's chat template");
  const modelName = opts.modelName ?? "tiny-random";
  let busy: Promise<void> = Promise.resolve();

  const state: LlamaChatServer = { url: "", last: null, received: [], chatTemplate: wrapper.wrapperName, stats: { requests: 0, promptTokens: 0, cachedTokens: 0 }, close: async () => {} };

  /** One generation at a time: the context has one sequence. */
  function generate(body: ChatBody, onText: (delta: string) => void, signal: AbortSignal, grammar?: unknown): Promise<{ text: string; usage: Usage; finishReason: "stop" | "length" }> {
    const run = busy.then(async () => {
      const prompt = wrapper!.generateContextState({ chatHistory: toHistory(body.messages) }).contextText.tokenize(model.tokenizer);
      const slot = pickSlot(sequences, prompt);
      slot.usedAt = ++clock;
      const sequence = slot.seq;
      // Reuse the longest prefix the context already holds (at least the last prompt token is evaluated again).
      const reuse = opts.promptCache ? Math.min(sequence.compareContextTokens(prompt).firstDifferentIndex, prompt.length - 1) : 0;
      if (reuse > 0 && sequence.nextTokenIndex > reuse) await sequence.eraseContextTokenRanges([{ start: reuse, end: sequence.nextTokenIndex }]);
      else if (reuse === 0) await sequence.clearHistory();
      state.stats.requests++;
      state.stats.promptTokens += prompt.length;
      state.stats.cachedTokens += reuse;
      const max = body.max_completion_tokens ?? body.max_tokens ?? 16;
      const out: Token[] = [];
      let text = "";
      let finishReason: "stop" | "length" = "length";
      const grammarEvaluationState = grammar ? new lib.LlamaGrammarEvaluationState({ model, grammar }) : undefined;
      for await (const token of sequence.evaluate(prompt.slice(reuse), { temperature: body.temperature ?? 0, seed: body.seed, grammarEvaluationState })) {
        if (model.isEogToken(token)) {
          finishReason = "stop";
          break;
        }
        out.push(token);
        const full = model.detokenize(out);
        // Hold back a trailing partial UTF-8 sequence until its next byte arrives.
        if (!full.endsWith("\uFFFD") && full.length > text.length) {
          onText(full.slice(text.length));
          text = full;
        }
        if (out.length >= max || signal.aborted) break;
      }
      const full = model.detokenize(out);
      if (full.length > text.length) onText(full.slice(text.length));
      const usage: Usage = { prompt_tokens: prompt.length, completion_tokens: out.length, total_tokens: prompt.length + out.length };
      if (opts.promptCache) usage.prompt_tokens_details = { cached_tokens: reuse };
      return { text: full, usage, finishReason };
    });
    busy = run.then(
      () => {},
      () => {},
    );
    return run;
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: Error) => {
      if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: err.message, type: "server_error", param: null, code: null } }));
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method === "GET" && req.url === "/v1/models") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ object: "list", data: [{ id: modelName, object: "model", owned_by: "llama.cpp" }] }));
      return;
    }
    if (req.method !== "POST" || req.url !== "/v1/chat/completions") {
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: "not found", type: "invalid_request_error", param: null, code: null } }));
      return;
    }
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as ChatBody;
    state.received.push(body.messages);
    const gone = new AbortController();
    res.on("close", () => gone.abort());
    const id = `chatcmpl-${Date.now().toString(36)}`;
    const created = Math.floor(Date.now() / 1000);
    const base = { id, created, model: body.model ?? modelName, system_fingerprint: "llama.cpp" };
    const forced = forcedTool(body);
    if (forced) {
      // As llama.cpp's server does for a required tool choice: the output is constrained to the call's JSON by a grammar.
      const grammar = await llama.createGrammarForJsonSchema(forced.schema);
      const r = await generate({ ...body, max_tokens: 64 }, () => {}, gone.signal, grammar);
      state.last = r;
      const call = { index: 0, id: `call_${id}`, type: "function", function: { name: forced.name, arguments: r.text.trim() } };
      if (!body.stream) {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ ...base, object: "chat.completion", choices: [{ index: 0, message: { role: "assistant", content: null, tool_calls: [call] }, finish_reason: "tool_calls" }], usage: r.usage }));
        return;
      }
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) => res.write(`data: ${JSON.stringify({ ...base, object: "chat.completion.chunk", choices, ...extra })}\n\n`);
      chunk([{ index: 0, delta: { role: "assistant", content: null, tool_calls: [call] }, finish_reason: null }]);
      chunk([{ index: 0, delta: {}, finish_reason: "tool_calls" }]);
      if (body.stream_options?.include_usage) chunk([], { usage: r.usage });
      res.end("data: [DONE]\n\n");
      return;
    }
    if (!body.stream) {
      const r = await generate(body, () => {}, gone.signal);
      state.last = r;
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ ...base, object: "chat.completion", choices: [{ index: 0, message: { role: "assistant", content: r.text }, finish_reason: r.finishReason }], usage: r.usage }));
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    const send = (choices: unknown[], extra: Record<string, unknown> = {}) => res.write(`data: ${JSON.stringify({ ...base, object: "chat.completion.chunk", choices, ...extra })}\n\n`);
    send([{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }]);
    const r = await generate(body, (delta) => send([{ index: 0, delta: { content: delta }, finish_reason: null }]), gone.signal);
    state.last = r;
    send([{ index: 0, delta: {}, finish_reason: r.finishReason }]);
    if (body.stream_options?.include_usage) send([], { usage: r.usage });
    res.end("data: [DONE]\n\n");
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  state.close = async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await busy;
    await context.dispose();
    await model.dispose();
    await llama.dispose();
  };
  return state;
}

interface ChatTool {
  type: string;
  function?: { name: string; parameters?: { properties?: Record<string, { type?: string }>; required?: string[] } };
}

interface ChatBody {
  model?: string;
  tools?: ChatTool[];
  tool_choice?: string | { type: string; function?: { name: string } };
  messages: { role: string; content: unknown }[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  max_tokens?: number;
  max_completion_tokens?: number;
  temperature?: number;
  seed?: number;
}

/**
 * llama.cpp's slot choice: the slot sharing the longest prefix with the prompt, if that prefix is
 * at least half the prompt (its --slot-prompt-similarity 0.5); else the least recently used slot,
 * so a new conversation does not overwrite another one's cache for a shared system prompt.
 */
function pickSlot<S extends { seq: LlamaSequence; usedAt: number }>(slots: S[], prompt: Token[]): S {
  let best: S | undefined;
  let bestShared = 0;
  let lru = slots[0]!;
  for (const s of slots) {
    const shared = s.seq.nextTokenIndex === 0 ? 0 : s.seq.compareContextTokens(prompt).firstDifferentIndex;
    if (shared > bestShared) {
      best = s;
      bestShared = shared;
    }
    if (s.usedAt < lru.usedAt) lru = s;
  }
  return best && bestShared >= prompt.length / 2 ? best : lru;
}

/** Chat messages as node-llama-cpp's chat history (text parts joined; tool turns as user text). */
function toHistory(messages: ChatBody["messages"]): HistoryItem[] {
  return messages.map((m) => {
    const text = typeof m.content === "string" ? m.content : Array.isArray(m.content) ? m.content.map((p: { text?: string }) => p.text ?? "").join("") : "";
    if (m.role === "system" || m.role === "developer") return { type: "system", text };
    if (m.role === "assistant") return { type: "model", response: [text] };
    return { type: "user", text };
  });
}

/**
 * The function a request forces (`tool_choice` "required" or a named function), with the JSON schema its
 * arguments are generated under: each string parameter takes the one value "ping" and each number 1, so a
 * random-weight model writes a call an MCP tool accepts (the tokens are still the model's own).
 */
function forcedTool(body: ChatBody): { name: string; schema: object } | null {
  const fns = (body.tools ?? []).filter((t) => t.type === "function" && t.function);
  const choice = body.tool_choice;
  const named = typeof choice === "object" && choice?.type === "function" ? choice.function?.name : undefined;
  if (!fns.length || (choice !== "required" && !named)) return null;
  const fn = (named ? fns.find((t) => t.function!.name === named) : fns[0])?.function;
  if (!fn) return null;
  const properties: Record<string, object> = {};
  for (const [key, p] of Object.entries(fn.parameters?.properties ?? {})) {
    if (!(fn.parameters?.required ?? []).includes(key)) continue;
    properties[key] = p.type === "number" || p.type === "integer" ? { const: 1 } : { enum: ["ping"] };
  }
  return { name: fn.name, schema: { type: "object", properties } };
}
