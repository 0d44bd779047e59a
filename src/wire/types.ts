/**
 * Wire shapes of the Responses and Chat Completions APIs, kept deliberately
 * loose: the router forwards unknown fields, and validation of client input
 * happens in responses/create/validate.ts. These aliases document intent.
 */
import type { Response, ResponseStreamEvent, ResponseUsage } from "openai/resources/responses/responses";
import type { ResponseStatus } from "./protocol.js";

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
export type JsonObject = { [k: string]: unknown };

/** An input or output item of the Responses API (message, function_call, function_call_output, reasoning, ...). */
export type Item = JsonObject & { type?: string; id?: string };

/** A validated POST /v1/responses body. Unknown fields are kept (native pass-through forwards them). */
export interface CreateResponseRequest extends JsonObject {
  model: string;
  input?: string | Item[];
  instructions?: string | null;
  previous_response_id?: string | null;
  stream?: boolean;
  store?: boolean;
  background?: boolean;
  tools?: JsonObject[];
  tool_choice?: unknown;
  parallel_tool_calls?: boolean;
  text?: JsonObject;
  reasoning?: JsonObject | null;
  max_output_tokens?: number | null;
  temperature?: number | null;
  presence_penalty?: number | null;
  frequency_penalty?: number | null;
  top_p?: number | null;
  metadata?: Record<string, string> | null;
  include?: string[];
  truncation?: string | null;
  user?: string;
}

export type { ResponseStatus } from "./protocol.js";

/** Token usage exactly as the openai package types it (every field OpenAI requires). */
export type Usage = ResponseUsage;

/** The Response object as the router returns it. */
export interface ResponseObject extends JsonObject {
  id: string;
  object: "response";
  created_at: number;
  status: ResponseStatus;
  error: { code: string; message: string } | null;
  incomplete_details: { reason: string } | null;
  model: string;
  output: Item[];
  usage: Usage | null;
}

/** One Responses stream event (type + sequence_number + payload), as backends send it and the event log keeps it. */
export type StreamEvent = JsonObject & { type: string; sequence_number: number };

/**
 * A Response object the router builds, typed by the openai package so a field OpenAI
 * requires cannot go missing. `output_text` is the SDK's own convenience property (never on
 * the wire); `usage` is null until the response finishes, as in OpenAI's own snapshots.
 * OpenAI always sends `completed_at` (null until the response completes) and the penalties
 * (0 unless asked), though the package types the first as optional and lacks the others.
 */
export type EmittedResponse = Omit<Response, "output_text" | "usage" | "completed_at"> & {
  usage: ResponseUsage | null;
  store: boolean;
  completed_at: number | null;
  presence_penalty: number;
  frequency_penalty: number;
};

type WithEmittedResponse<E> = E extends { response: Response } ? Omit<E, "response"> & { response: EmittedResponse } : E;

/** A stream event the router builds itself: one of the openai package's ResponseStreamEvent types. */
export type EmittedEvent = WithEmittedResponse<ResponseStreamEvent>;

/** Chat completions shapes (only what the router reads). */
export interface ChatMessage extends JsonObject {
  role: string;
  content?: unknown;
  tool_calls?: ChatToolCall[];
  tool_call_id?: string;
  reasoning_content?: string;
}
export interface ChatToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}
export interface ChatUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  total_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number; cache_write_tokens?: number } | null;
  completion_tokens_details?: { reasoning_tokens?: number } | null;
}
