import { createHash } from "node:crypto";
import { canonicalJson, keyedFields } from "../wire/canonical-json.js";
import type { CachedResponse, ResponseCache } from "../store/types.js";

/** A chat completion object as a backend returns it (only what the cache reads is typed). */
export interface ChatCompletion {
  id: string;
  object: "chat.completion";
  created: number;
  model: string;
  choices: ChatChoice[];
  usage?: Record<string, unknown> | null;
  system_fingerprint?: string | null;
  [k: string]: unknown;
}

interface ChatChoice {
  index: number;
  message: { role: string; content: string | null; tool_calls?: ToolCall[]; refusal?: string | null; reasoning_content?: string; [k: string]: unknown };
  finish_reason: string | null;
  logprobs?: { content?: unknown[] | null; refusal?: unknown[] | null } | null;
}

interface ToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

/**
 * The same rule as the response cache (responses/create/cache-key.ts): every request field is
 * keyed except these, which cannot change the answer and are not echoed in a completion:
 * delivery (`stream`, `stream_options`), bookkeeping (`store`, `metadata`), `user` (abuse
 * monitoring only), and `model`, keyed as the router's model name instead. `service_tier`
 * is keyed: the completion echoes it.
 */
export const CHAT_CACHE_UNKEYED: ReadonlySet<string> = new Set(["model", "stream", "stream_options", "store", "metadata", "user"]);

/** The chat cache key: every answer-shaping field of the request, canonical JSON, in a namespace of its own. */
export function chatCacheKey(model: string, body: Record<string, unknown>): string {
  const keyed = keyedFields(body, CHAT_CACHE_UNKEYED);
  keyed.model = model;
  return `chat:${createHash("sha256").update(canonicalJson(keyed)).digest("hex")}`;
}

/** Only answers that ended on their own are worth serving again. */
export function cacheable(c: ChatCompletion): boolean {
  return c.choices.length > 0 && c.choices.every((ch) => ch.finish_reason === "stop" || ch.finish_reason === "tool_calls");
}

/**
 * The shared response cache holds chat completions too, under `chat:` keys that
 * a Responses cache key (a bare hex digest) can never equal.
 */
export function chatCache(cache: ResponseCache) {
  return {
    async get(key: string): Promise<ChatCompletion | null> {
      const hit = (await cache.get(key)) as unknown as { chat?: ChatCompletion } | null;
      return hit?.chat ?? null;
    },
    set(key: string, chat: ChatCompletion, ttlMs: number): Promise<void> {
      return cache.set(key, { chat } as unknown as CachedResponse, ttlMs);
    },
  };
}

/**
 * Folds a chat chunk stream into the completion object it stands for, so that a
 * streamed answer can be cached and later served as JSON or replayed as chunks.
 */
export class ChatChunkAccumulator {
  private id = "";
  private created = 0;
  private model = "";
  private fingerprint: string | null = null;
  private usage: Record<string, unknown> | null = null;
  private readonly choices = new Map<number, ChatChoice & { calls: Map<number, ToolCall> }>();

  push(chunk: Record<string, unknown>): void {
    if (typeof chunk.id === "string") this.id ||= chunk.id;
    if (typeof chunk.created === "number") this.created ||= chunk.created;
    if (typeof chunk.model === "string") this.model ||= chunk.model;
    if (typeof chunk.system_fingerprint === "string") this.fingerprint = chunk.system_fingerprint;
    if (chunk.usage && typeof chunk.usage === "object") this.usage = chunk.usage as Record<string, unknown>;
    for (const raw of (Array.isArray(chunk.choices) ? chunk.choices : []) as Record<string, unknown>[]) {
      const index = typeof raw.index === "number" ? raw.index : 0;
      let ch = this.choices.get(index);
      if (!ch) {
        ch = { index, message: { role: "assistant", content: null }, finish_reason: null, logprobs: null, calls: new Map() };
        this.choices.set(index, ch);
      }
      const delta = (raw.delta ?? {}) as Record<string, unknown>;
      const m = ch.message;
      if (typeof delta.role === "string") m.role = delta.role;
      if (typeof delta.content === "string") m.content = (m.content ?? "") + delta.content;
      if (typeof delta.refusal === "string") m.refusal = (m.refusal ?? "") + delta.refusal;
      const reasoning = delta.reasoning_content ?? delta.reasoning;
      if (typeof reasoning === "string") m.reasoning_content = (m.reasoning_content ?? "") + reasoning;
      for (const tc of (Array.isArray(delta.tool_calls) ? delta.tool_calls : []) as Record<string, unknown>[]) {
        const ti = typeof tc.index === "number" ? tc.index : ch.calls.size;
        const fn = (tc.function ?? {}) as { name?: string | null; arguments?: string | null };
        const call = ch.calls.get(ti) ?? { id: "", type: "function" as const, function: { name: "", arguments: "" } };
        if (typeof tc.id === "string" && tc.id) call.id = tc.id;
        if (fn.name) call.function.name += fn.name;
        if (fn.arguments) call.function.arguments += fn.arguments;
        ch.calls.set(ti, call);
      }
      const lp = raw.logprobs as { content?: unknown[] | null; refusal?: unknown[] | null } | null | undefined;
      if (lp && typeof lp === "object") {
        ch.logprobs ??= {};
        for (const k of ["content", "refusal"] as const) if (Array.isArray(lp[k])) ch.logprobs[k] = [...(ch.logprobs[k] ?? []), ...lp[k]!];
      }
      if (typeof raw.finish_reason === "string") ch.finish_reason = raw.finish_reason;
    }
  }

  result(): ChatCompletion {
    const choices = [...this.choices.values()]
      .sort((a, b) => a.index - b.index)
      .map(({ calls, ...ch }) => {
        const tool_calls = [...calls.entries()].sort(([a], [b]) => a - b).map(([, c]) => c);
        return { ...ch, message: tool_calls.length > 0 ? { ...ch.message, tool_calls } : ch.message };
      });
    return { id: this.id, object: "chat.completion", created: this.created, model: this.model, system_fingerprint: this.fingerprint, choices, usage: this.usage };
  }
}

/**
 * A cached completion as the chunk stream a backend would have sent: per choice a
 * role + content chunk, one chunk with every tool call whole, a finish chunk, then
 * (when the client asked `stream_options.include_usage`) the usage chunk.
 */
export function completionToChunks(c: ChatCompletion, includeUsage: boolean): Record<string, unknown>[] {
  const base = { id: c.id, object: "chat.completion.chunk", created: c.created, model: c.model, system_fingerprint: c.system_fingerprint ?? null };
  const withUsage = includeUsage ? { usage: null } : {};
  const chunks: Record<string, unknown>[] = [];
  const push = (choice: Record<string, unknown>) => chunks.push({ ...base, choices: [choice], ...withUsage });
  for (const ch of c.choices) {
    const { role, content, tool_calls, refusal, reasoning_content } = ch.message;
    const delta: Record<string, unknown> = { role, content: content ?? (tool_calls ? null : "") };
    if (refusal) delta.refusal = refusal;
    if (reasoning_content) delta.reasoning_content = reasoning_content;
    push({ index: ch.index, delta, logprobs: ch.logprobs ?? null, finish_reason: null });
    if (tool_calls?.length) {
      push({ index: ch.index, delta: { tool_calls: tool_calls.map((tc, index) => ({ index, ...tc })) }, logprobs: null, finish_reason: null });
    }
    push({ index: ch.index, delta: {}, logprobs: null, finish_reason: ch.finish_reason });
  }
  if (includeUsage) chunks.push({ ...base, choices: [], usage: c.usage ?? null });
  return chunks;
}
