/**
 * A Messages API answer -> a finished Response object. Output follows the content blocks in
 * order: thinking and redacted_thinking -> a reasoning item (the thinking as reasoning_text, or
 * as a summary when reasoning.summary was asked; the whole block in encrypted_content), text ->
 * output_text parts of one assistant message, tool_use -> function_call (a freeform custom
 * tool's -> custom_tool_call with the `input` parameter as its input; the answer tool of a
 * structured output -> output_text). stop_reason max_tokens -> incomplete, refusal -> a refusal part.
 */
import type { ResponseOutputMessage, ResponseReasoningItem } from "openai/resources/responses/responses";
import type { IdGenerator } from "../../wire/ids.js";
import type { Clock } from "../../wire/clock.js";
import { completedAt } from "../skeleton.js";
import type { Item, ResponseObject, ResponseStatus, Usage } from "../../wire/types.js";
import type { ToolNameMap } from "../chat/chat-types.js";
import { identityFor } from "../chat/tool-names.js";
import { customCallItem, functionCallItem } from "../chat/response.js";
import { customInputFromArguments } from "../custom-tools.js";
import { encodeThinking, type Message, type ThinkingParam } from "./types.js";

export interface AnswerOptions {
  toolNames?: ToolNameMap;
  /** The tool whose input is the structured answer: shown as output_text. */
  answerTool?: string | null;
  /** Thinking shown as a reasoning summary rather than reasoning_text. */
  thinkingAsSummary?: boolean;
}

export interface TerminalState {
  status: Extract<ResponseStatus, "completed" | "incomplete">;
  incomplete_details: { reason: "max_output_tokens" | "content_filter" } | null;
}

/**
 * stop_reason -> Response status. max_tokens and a full context window end a response
 * incomplete; pause_turn (a server tool's long turn, which the router never asks for) ends it
 * with what came; refusal is a completed response whose message carries a refusal part.
 */
export function terminalFromStopReason(stop: string | null | undefined): TerminalState {
  if (stop === "max_tokens" || stop === "model_context_window_exceeded") return { status: "incomplete", incomplete_details: { reason: "max_output_tokens" } };
  return { status: "completed", incomplete_details: null };
}

/** What a refusal part says: Anthropic's explanation when it gives one. */
export function refusalText(details: Message["stop_details"] | null | undefined): string {
  return details?.explanation || "The model declined to answer this request.";
}

type AnthropicUsage = Partial<Pick<Message["usage"], "input_tokens" | "output_tokens" | "cache_read_input_tokens" | "cache_creation_input_tokens" | "output_tokens_details">>;

const int = (n: unknown): number => (typeof n === "number" && Number.isFinite(n) ? Math.max(0, Math.trunc(n)) : 0);

/** Anthropic counts cached input apart; OpenAI's input_tokens includes it (cached_tokens = read from the cache). */
export function anthropicUsageToResponses(u: AnthropicUsage | null | undefined): Usage {
  const read = int(u?.cache_read_input_tokens);
  const written = int(u?.cache_creation_input_tokens);
  const input = int(u?.input_tokens) + read + written;
  const output = int(u?.output_tokens);
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: read, cache_write_tokens: written },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: int(u?.output_tokens_details?.thinking_tokens) },
    total_tokens: input + output,
  };
}

/** A reasoning item for one thinking block; `text` shown as reasoning_text or as a summary. */
export function reasoningItem(id: string, block: ThinkingParam, asSummary: boolean): Item {
  const item: ResponseReasoningItem = { id, type: "reasoning", summary: [], encrypted_content: encodeThinking(block) };
  if (block.type === "thinking" && block.thinking) {
    if (asSummary) item.summary = [{ type: "summary_text", text: block.thinking }];
    else item.content = [{ type: "reasoning_text", text: block.thinking }];
  }
  return item as unknown as Item;
}

/** Whether a tool_use of this name is a freeform custom tool's call (a custom_tool_call item). */
export const isCustomTool = (toolNames: ToolNameMap | undefined, name: string): boolean => identityFor(toolNames, name).custom === true;

export function messageToResponse(msg: Message, skeleton: ResponseObject, ids: IdGenerator, clock: Clock, opts: AnswerOptions = {}): ResponseObject {
  const terminal = terminalFromStopReason(msg.stop_reason);
  const status = terminal.status === "completed" ? "completed" : "incomplete";
  const output: Item[] = [];
  let message: (ResponseOutputMessage & { id: string }) | null = null;
  const text = (t: string) => {
    if (!message) {
      message = { id: ids("msg"), type: "message", role: "assistant", status, content: [] };
      output.push(message as unknown as Item);
    }
    if (t) message.content.push({ type: "output_text", text: t, annotations: [], logprobs: [] });
  };
  for (const block of msg.content ?? []) {
    switch (block.type) {
      case "text":
        text(block.text);
        break;
      case "thinking":
      case "redacted_thinking":
        message = null;
        output.push(reasoningItem(ids("rs"), block, opts.thinkingAsSummary === true));
        break;
      case "tool_use":
        if (opts.answerTool && block.name === opts.answerTool) text(JSON.stringify(block.input ?? {}));
        else {
          message = null;
          const callId = block.id || ids("call");
          const args = JSON.stringify(block.input ?? {});
          if (isCustomTool(opts.toolNames, block.name)) output.push(customCallItem(ids("ctc"), callId, identityFor(opts.toolNames, block.name), customInputFromArguments(args), status));
          else output.push(functionCallItem(ids("fc"), callId, block.name, args, status, opts.toolNames));
        }
        break;
      default:
        break; // server tool blocks: the router asks for none
    }
  }
  if (msg.stop_reason === "refusal") {
    text("");
    (message as unknown as ResponseOutputMessage).content.push({ type: "refusal", refusal: refusalText(msg.stop_details) });
  }
  return { ...skeleton, status: terminal.status, completed_at: completedAt(terminal.status, clock), error: null, incomplete_details: terminal.incomplete_details, output, usage: anthropicUsageToResponses(msg.usage) };
}
