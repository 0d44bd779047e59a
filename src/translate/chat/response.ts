/**
 * A non-streamed chat completion -> a finished Response object.
 * Output order: reasoning, the assistant message (text and/or refusal), function calls.
 * The backend's reasoning is a `reasoning_text` part, or a summary (`summary_text`) when the
 * request asked for one (`reasoning.summary`): clients such as the AI SDK and LangChain show
 * only summaries. Calls of freeform `custom` tools become `custom_tool_call` items.
 */
import type { ResponseCustomToolCallItem, ResponseFunctionToolCall, ResponseOutputMessage, ResponseReasoningItem } from "openai/resources/responses/responses";
import type { IdGenerator } from "../../wire/ids.js";
import type { Clock } from "../../wire/clock.js";
import { completedAt } from "../skeleton.js";
import type { ChatUsage, Item, ResponseObject, ResponseStatus, Usage } from "../../wire/types.js";
import type { ChatAssistantMessageLike, ChatCompletionLike, ChatTokenLogprob, ToolIdentity, ToolNameMap } from "./chat-types.js";
import { identityFor } from "./tool-names.js";
import { customInputFromArguments } from "../custom-tools.js";

/** A Responses logprob entry. */
export interface ResponsesLogprob {
  token: string;
  logprob: number;
  bytes: number[];
  top_logprobs: { token: string; logprob: number; bytes: number[] }[];
}

export interface TerminalState {
  status: Extract<ResponseStatus, "completed" | "incomplete">;
  incomplete_details: { reason: string } | null;
}

/** chat `finish_reason` -> Response status: length and content_filter make it incomplete. */
export function terminalFromFinishReason(finishReason: string | null | undefined): TerminalState {
  if (finishReason === "length") return { status: "incomplete", incomplete_details: { reason: "max_output_tokens" } };
  if (finishReason === "content_filter") return { status: "incomplete", incomplete_details: { reason: "content_filter" } };
  return { status: "completed", incomplete_details: null };
}

const int = (n: unknown): number => (typeof n === "number" && Number.isFinite(n) ? Math.max(0, Math.trunc(n)) : 0);

export function chatUsageToResponses(u: ChatUsage | null | undefined): Usage {
  const input = int(u?.prompt_tokens);
  const output = int(u?.completion_tokens);
  const total = typeof u?.total_tokens === "number" && Number.isFinite(u.total_tokens) ? int(u.total_tokens) : input + output;
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: int(u?.prompt_tokens_details?.cached_tokens), cache_write_tokens: int(u?.prompt_tokens_details?.cache_write_tokens) },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: int(u?.completion_tokens_details?.reasoning_tokens) },
    total_tokens: total,
  };
}

export function mapLogprobs(content: ChatTokenLogprob[] | null | undefined): ResponsesLogprob[] {
  if (!content || content.length === 0) return [];
  const out: ResponsesLogprob[] = new Array(content.length);
  for (let i = 0; i < content.length; i++) {
    const t = content[i]!;
    const top = t.top_logprobs;
    out[i] = {
      token: t.token,
      logprob: t.logprob,
      bytes: t.bytes ?? [],
      top_logprobs: top ? top.map((x) => ({ token: x.token, logprob: x.logprob, bytes: x.bytes ?? [] })) : [],
    };
  }
  return out;
}

export interface OutputItemOptions {
  logprobs?: ChatTokenLogprob[] | null;
  /** Item status for message and function_call items (default "completed"). */
  status?: "completed" | "incomplete";
  /** Emit the backend's reasoning as a summary (the request set `reasoning.summary`). */
  reasoningSummary?: boolean;
}

/** Whether a request asks for reasoning summaries: then a chat backend's reasoning is emitted as one. */
export function wantsReasoningSummary(reasoning: unknown): boolean {
  if (!reasoning || typeof reasoning !== "object") return false;
  // `generate_summary` is the field's deprecated name.
  const r = reasoning as { summary?: unknown; generate_summary?: unknown };
  const summary = r.summary ?? r.generate_summary;
  return typeof summary === "string" && summary !== "" && summary !== "none";
}

/** The text of a chat message `content` (a string, or text parts some servers send). */
function contentText(content: ChatAssistantMessageLike["content"]): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  let text = "";
  for (const part of content) if (typeof part?.text === "string") text += part.text;
  return text;
}

export function chatMessageToOutputItems(
  message: ChatAssistantMessageLike,
  ids: IdGenerator,
  toolNames?: ToolNameMap,
  opts: OutputItemOptions = {},
): Item[] {
  const status = opts.status ?? "completed";
  // Built as the openai package types them, kept loose (Item) like every stored item.
  const items: Item[] = [];
  const reasoning = message.reasoning_content || message.reasoning;
  if (typeof reasoning === "string" && reasoning) {
    const item: ResponseReasoningItem = opts.reasoningSummary
      ? { id: ids("rs"), type: "reasoning", summary: [{ type: "summary_text", text: reasoning }] }
      : { id: ids("rs"), type: "reasoning", summary: [], content: [{ type: "reasoning_text", text: reasoning }] };
    items.push(loose(item));
  }
  const text = contentText(message.content);
  const parts: ResponseOutputMessage["content"] = [];
  if (text) parts.push({ type: "output_text", text, annotations: [], logprobs: mapLogprobs(opts.logprobs) });
  if (typeof message.refusal === "string" && message.refusal) parts.push({ type: "refusal", refusal: message.refusal });
  if (parts.length) {
    const item: ResponseOutputMessage = { id: ids("msg"), type: "message", role: "assistant", status, content: parts };
    items.push(loose(item));
  }
  for (const call of message.tool_calls ?? []) {
    const fn = call?.function;
    if (!fn || typeof fn.name !== "string") continue;
    const identity = identityFor(toolNames, fn.name);
    const callId = call.id || ids("call");
    if (identity.custom) items.push(customCallItem(ids("ctc"), callId, identity, customInputFromArguments(fn.arguments ?? ""), status));
    else items.push(functionCallItem(ids("fc"), callId, fn.name, fn.arguments ?? "", status, toolNames));
  }
  return items;
}

/** An item built as the openai package types it, kept as the loose Item every stored item is (no copy). */
const loose = (item: object): Item => item as Item;

/** A function_call output item; a flattened namespaced name maps back to {name, namespace}. */
export function functionCallItem(
  id: string,
  callId: string,
  chatName: string,
  args: string,
  status: string,
  toolNames: ToolNameMap | undefined,
): Item {
  const identity = identityFor(toolNames, chatName);
  const item: ResponseFunctionToolCall = { id, type: "function_call", status: status as ResponseFunctionToolCall["status"], call_id: callId, name: identity.name, arguments: args };
  if (identity.namespace !== undefined) item.namespace = identity.namespace;
  return loose(item);
}

/** A custom_tool_call output item (a call of a freeform tool, sent to the backend as a function). */
export function customCallItem(id: string, callId: string, identity: ToolIdentity, input: string, status: string): Item {
  const item: ResponseCustomToolCallItem = { id, type: "custom_tool_call", status: status as ResponseCustomToolCallItem["status"], call_id: callId, name: identity.name, input };
  if (identity.namespace !== undefined) item.namespace = identity.namespace;
  return loose(item);
}

export function chatCompletionToResponse(
  chat: ChatCompletionLike,
  skeleton: ResponseObject,
  ids: IdGenerator,
  clock: Clock,
  toolNames?: ToolNameMap,
  reasoningSummary = false,
): ResponseObject {
  const choice = chat.choices?.[0];
  const terminal = terminalFromFinishReason(choice?.finish_reason);
  const output = choice
    ? chatMessageToOutputItems(choice.message ?? {}, ids, toolNames, {
        logprobs: choice.logprobs?.content,
        status: terminal.status === "incomplete" ? "incomplete" : "completed",
        reasoningSummary,
      })
    : [];
  return {
    ...skeleton,
    status: terminal.status,
    completed_at: completedAt(terminal.status, clock),
    error: null,
    incomplete_details: terminal.incomplete_details,
    output,
    usage: chatUsageToResponses(chat.usage),
  };
}
