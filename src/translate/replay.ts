/**
 * A finished Response -> the full event sequence a live stream would have produced
 * (same grammar as ChatStreamTranslator: created, in_progress, per item added / part
 * added / one delta per part / done..., terminal event). Serves cache hits and stored
 * background responses as streams. Every event is checked against the openai package's
 * type of that event (emitted.ts); stored items are loose (they came from a backend or a
 * client) and are cast once where they go out.
 *
 * A `cancelled` response ends without a terminal event (the API has no
 * `response.cancelled`); `queued`/`in_progress` snapshots also end without one.
 */
import type {
  ResponseCustomToolCallItem,
  ResponseFunctionToolCall,
  ResponseOutputItem,
  ResponseOutputMessage,
  ResponseOutputText,
  ResponseReasoningItem,
} from "openai/resources/responses/responses";
import { numbered, type EmittedFields } from "../wire/emitted.js";
import type { EmittedResponse, Item, ResponseObject, StreamEvent } from "../wire/types.js";

type Emit = (fields: EmittedFields) => void;
type Part = ResponseOutputMessage["content"][number];

export function responseToEvents(response: ResponseObject, startSequence = 0): StreamEvent[] {
  let seq = startSequence;
  const out: StreamEvent[] = [];
  const emit: Emit = (fields) => out.push(numbered(fields, seq++));
  const typed = response as unknown as EmittedResponse;
  const snapshot = (status: "queued" | "in_progress"): EmittedResponse => ({ ...typed, status, completed_at: null, error: null, incomplete_details: null, output: [], usage: null });

  emit({ type: "response.created", response: snapshot(response.status === "queued" ? "queued" : "in_progress") });
  if (response.status !== "queued") emit({ type: "response.in_progress", response: snapshot("in_progress") });

  response.output.forEach((item, index) => {
    switch (item.type) {
      case "message":
        return replayMessage(item as unknown as ResponseOutputMessage, index, emit);
      case "function_call":
        return replayFunctionCall(item as unknown as ResponseFunctionToolCall, index, emit);
      case "reasoning":
        return replayReasoning(item as unknown as ResponseReasoningItem, index, emit);
      case "custom_tool_call":
        return replayCustomCall(item as unknown as ResponseCustomToolCallItem, index, emit);
      default:
        emit({ type: "response.output_item.added", output_index: index, item: asOutput(inProgress(item)) });
        emit({ type: "response.output_item.done", output_index: index, item: asOutput(item) });
    }
  });

  const status = response.status;
  if (status === "completed" || status === "incomplete" || status === "failed") emit({ type: `response.${status}`, response: typed });
  return out;
}

const asOutput = (item: Item): ResponseOutputItem => item as unknown as ResponseOutputItem;

function inProgress(item: Item): Item {
  return "status" in item ? { ...item, status: "in_progress" } : { ...item };
}

function replayMessage(item: ResponseOutputMessage, index: number, emit: Emit): void {
  const id = item.id;
  const parts: Part[] = Array.isArray(item.content) ? item.content : [];
  emit({ type: "response.output_item.added", output_index: index, item: { ...item, status: "in_progress", content: [] } });
  parts.forEach((part, j) => {
    const at = { item_id: id, output_index: index, content_index: j };
    if (part.type === "output_text") {
      const text = typeof part.text === "string" ? part.text : "";
      const logprobs: ResponseOutputText.Logprob[] = Array.isArray(part.logprobs) ? part.logprobs : [];
      emit({ type: "response.content_part.added", ...at, part: { type: "output_text", text: "", annotations: [], logprobs: [] } });
      if (text) emit({ type: "response.output_text.delta", ...at, delta: text, logprobs });
      emit({ type: "response.output_text.done", ...at, text, logprobs });
    } else if (part.type === "refusal") {
      const refusal = typeof part.refusal === "string" ? part.refusal : "";
      emit({ type: "response.content_part.added", ...at, part: { type: "refusal", refusal: "" } });
      if (refusal) emit({ type: "response.refusal.delta", ...at, delta: refusal });
      emit({ type: "response.refusal.done", ...at, refusal });
    } else {
      emit({ type: "response.content_part.added", ...at, part });
    }
    emit({ type: "response.content_part.done", ...at, part });
  });
  emit({ type: "response.output_item.done", output_index: index, item });
}

function replayFunctionCall(item: ResponseFunctionToolCall, index: number, emit: Emit): void {
  const args = typeof item.arguments === "string" ? item.arguments : "";
  const at = { item_id: item.id ?? "", output_index: index, name: item.name };
  emit({ type: "response.output_item.added", output_index: index, item: { ...item, status: "in_progress", arguments: "" } });
  if (args) emit({ type: "response.function_call_arguments.delta", item_id: at.item_id, output_index: index, delta: args });
  emit({ type: "response.function_call_arguments.done", ...at, arguments: args });
  emit({ type: "response.output_item.done", output_index: index, item });
}

function replayCustomCall(item: ResponseCustomToolCallItem, index: number, emit: Emit): void {
  const input = typeof item.input === "string" ? item.input : "";
  const at = { item_id: item.id ?? "", output_index: index };
  const added: ResponseCustomToolCallItem = { ...item, status: "in_progress", input: "" };
  emit({ type: "response.output_item.added", output_index: index, item: added });
  if (input) emit({ type: "response.custom_tool_call_input.delta", ...at, delta: input });
  emit({ type: "response.custom_tool_call_input.done", ...at, input });
  emit({ type: "response.output_item.done", output_index: index, item });
}

function replayReasoning(item: ResponseReasoningItem, index: number, emit: Emit): void {
  const id = item.id;
  const summary = Array.isArray(item.summary) ? item.summary : [];
  const content = Array.isArray(item.content) ? item.content : [];
  emit({ type: "response.output_item.added", output_index: index, item: { id, type: "reasoning", summary: [] } });
  summary.forEach((part, s) => {
    const at = { item_id: id, output_index: index, summary_index: s };
    const text = typeof part.text === "string" ? part.text : "";
    emit({ type: "response.reasoning_summary_part.added", ...at, part: { type: "summary_text", text: "" } });
    if (text) emit({ type: "response.reasoning_summary_text.delta", ...at, delta: text });
    emit({ type: "response.reasoning_summary_text.done", ...at, text });
    emit({ type: "response.reasoning_summary_part.done", ...at, part });
  });
  let j = 0;
  for (const part of content) {
    if (part.type !== "reasoning_text") continue;
    const at = { item_id: id, output_index: index, content_index: j++ };
    const text = typeof part.text === "string" ? part.text : "";
    emit({ type: "response.content_part.added", ...at, part: { type: "reasoning_text", text: "" } });
    if (text) emit({ type: "response.reasoning_text.delta", ...at, delta: text });
    emit({ type: "response.reasoning_text.done", ...at, text });
    emit({ type: "response.content_part.done", ...at, part });
  }
  emit({ type: "response.output_item.done", output_index: index, item });
}
