/**
 * State shapes of ChatStreamTranslator (stream.ts), kept apart so the machine itself stays
 * short. Items and parts are the openai package's own types: they go out in events as they are.
 */
import type { CustomInputStream } from "../custom-tools.js";
import type { ResponseCustomToolCallItem, ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputRefusal, ResponseOutputText, ResponseReasoningItem } from "openai/resources/responses/responses";

export interface StreamTranslatorOptions {
  /** First sequence_number (e.g. when resuming a recorded stream). Default 0. */
  startSequence?: number;
  /**
   * A compaction item the router made before answering (context_management): the first output
   * item, emitted complete right after `response.in_progress` (added, compaction.compacting, done).
   */
  compaction?: { id: string; type: "compaction"; encrypted_content: string };
  /** Emit the backend's reasoning as a summary (`reasoning_summary_*` events), not `reasoning_text`. */
  reasoningSummary?: boolean;
}

export type Status = "completed" | "incomplete";

/** A message content part as it grows. */
export type Part = (ResponseOutputText & { logprobs: ResponseOutputText.Logprob[] }) | ResponseOutputRefusal;

/** The open assistant message item and its open part (null between parts). */
export interface MessageState {
  index: number;
  item: ResponseOutputMessage & { content: Part[] };
  part: Part | null;
}

/** The open reasoning item: one reasoning_text part, or one summary_text part in summary mode. */
export interface ReasoningState {
  index: number;
  item: ResponseReasoningItem;
  part: ResponseReasoningItem.Content | ResponseReasoningItem.Summary;
}

/**
 * One chat tool call, keyed by its chat `index`. `item` is null until the name is known:
 * a function_call, or a custom_tool_call for a freeform tool (its input decoded from the
 * `{"input": "..."}` arguments as they stream, ../custom-tools.ts).
 */
export interface CallState {
  /** output_index once opened, -1 before. */
  index: number;
  item: (ResponseFunctionToolCall & { id: string }) | ResponseCustomToolCallItem | null;
  /** The chat arguments so far. */
  args: string;
  /** A custom call's input as it decodes. */
  input?: CustomInputStream;
  callId: string | null;
  chatName: string;
  /** Argument fragments received before the call could open. */
  pending: string;
  closed: boolean;
}

export function isCompleteJson(text: string): boolean {
  if (!text) return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
