/** State shapes of ChatStreamTranslator (stream.ts), kept apart so the machine itself stays short. */
import type { Item } from "../types.js";

export interface StreamTranslatorOptions {
  /** First sequence_number (e.g. when resuming a recorded stream). Default 0. */
  startSequence?: number;
}

export type Status = "completed" | "incomplete";

/** A message content part as it grows. */
export type Part =
  | { type: "output_text"; text: string; annotations: unknown[]; logprobs: unknown[] }
  | { type: "refusal"; refusal: string };

/** The open assistant message item and its open part (null between parts). */
export interface MessageState {
  index: number;
  item: Item & { id: string; content: Part[] };
  part: Part | null;
}

/** The open reasoning item: one reasoning_text part. */
export interface ReasoningState {
  index: number;
  item: Item & { id: string };
  part: { type: "reasoning_text"; text: string };
}

/** One chat tool call, keyed by its chat `index`. `item` is null until the name is known. */
export interface CallState {
  /** output_index once opened, -1 before. */
  index: number;
  item: (Item & { id: string; arguments: string; name: string }) | null;
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
