/**
 * Chat Completions wire shapes as the translation core reads and writes them.
 * Deliberately loose: backends (vLLM, llama.cpp, Ollama, LM Studio, ...) differ in
 * which optional fields they send, and some send `null` where OpenAI omits a key.
 */
import type { ChatMessage, ChatUsage, JsonObject } from "../../wire/types.js";

/** A chat tool definition as sent upstream. */
export interface ChatTool {
  type: "function";
  function: { name: string; description?: string; parameters?: unknown; strict?: boolean };
}

/** The body POSTed to `/v1/chat/completions`. */
export interface ChatRequestBody extends JsonObject {
  model: string;
  messages: ChatMessage[];
  stream?: boolean;
  stream_options?: { include_usage: boolean };
  tools?: ChatTool[];
  tool_choice?: "auto" | "none" | "required" | { type: "function"; function: { name: string } };
  parallel_tool_calls?: boolean;
  response_format?: JsonObject;
  max_tokens?: number;
  reasoning_effort?: string;
  temperature?: number;
  top_p?: number;
  user?: string;
  logprobs?: boolean;
  top_logprobs?: number;
}

/** One token's log probability as chat completions report it. */
export interface ChatTokenLogprob {
  token: string;
  logprob: number;
  bytes?: number[] | null;
  top_logprobs?: { token: string; logprob: number; bytes?: number[] | null }[] | null;
}

export interface ChatChoiceLogprobs {
  content?: ChatTokenLogprob[] | null;
  refusal?: ChatTokenLogprob[] | null;
}

/** A tool call inside a complete (non-streamed) assistant message. */
export interface ChatToolCallLike {
  id?: string | null;
  type?: string | null;
  function?: { name?: string | null; arguments?: string | null } | null;
}

/** The assistant message of a non-streamed completion. */
export interface ChatAssistantMessageLike {
  role?: string;
  content?: string | { type?: string; text?: string }[] | null;
  refusal?: string | null;
  reasoning_content?: string | null;
  /** Some servers (vLLM, OpenRouter, Ollama) name it `reasoning`. */
  reasoning?: string | null;
  tool_calls?: ChatToolCallLike[] | null;
}

/** A non-streamed `chat.completion`. */
export interface ChatCompletionLike {
  id?: string;
  model?: string;
  created?: number;
  choices: {
    index?: number;
    message: ChatAssistantMessageLike;
    finish_reason?: string | null;
    logprobs?: ChatChoiceLogprobs | null;
  }[];
  usage?: ChatUsage | null;
}

/** One tool-call fragment of a streamed delta: `id`/`name` usually only in the first. */
export interface ChatToolCallDelta {
  index?: number | null;
  id?: string | null;
  /** "function", or `null`/absent on some backends. */
  type?: string | null;
  function?: { name?: string | null; arguments?: string | null } | null;
}

export interface ChatDelta {
  role?: string | null;
  content?: string | null;
  refusal?: string | null;
  reasoning_content?: string | null;
  reasoning?: string | null;
  tool_calls?: ChatToolCallDelta[] | null;
}

/** A streamed `chat.completion.chunk`. The usage chunk has `choices: []`. */
export interface ChatChunkLike {
  id?: string;
  model?: string;
  created?: number;
  choices?: {
    index?: number;
    delta?: ChatDelta | null;
    finish_reason?: string | null;
    logprobs?: ChatChoiceLogprobs | null;
  }[];
  usage?: ChatUsage | null;
  /** Some servers report a mid-stream failure as a chunk carrying `error`. */
  error?: { message?: string; code?: string | number | null; type?: string } | null;
}

/** The Responses-side identity of a function: a bare name, optionally inside a namespace. */
export interface ToolIdentity {
  name: string;
  namespace?: string;
  /** A freeform `custom` tool sent as a one-string-parameter function: its calls become `custom_tool_call` items. */
  custom?: true;
}

/**
 * How function names differ between the two APIs for one request. Only names that
 * differ are listed (namespaced functions flattened to one chat-safe name), and every
 * freeform `custom` tool (its calls map back to `custom_tool_call`).
 * Plain objects, so the map survives JSON (background jobs, logs).
 */
export interface ToolNameMap {
  /** chat function name -> Responses identity. */
  fromChat: Record<string, ToolIdentity>;
  /** `namespaceKey(ns, name)` -> chat function name. */
  toChat: Record<string, string>;
}

/** Null-prototype records: tool names such as `__proto__` stay plain keys. */
export const emptyToolNameMap = (): ToolNameMap => ({ fromChat: Object.create(null), toChat: Object.create(null) });

/** Key of a namespaced function in `ToolNameMap.toChat`. */
export const namespaceKey = (namespace: string, name: string): string => `${namespace}\u0000${name}`;
