/**
 * A finished Response -> the full event sequence a live stream would have produced
 * (same grammar as ChatStreamTranslator: created, in_progress, per item added / part
 * added / one delta per part / done..., terminal event). Serves cache hits and stored
 * background responses as streams.
 *
 * A `cancelled` response ends without a terminal event (the API has no
 * `response.cancelled`); `queued`/`in_progress` snapshots also end without one.
 */
import { TERMINAL_EVENT_FOR_STATUS } from "../protocol.js";
import type { Item, ResponseObject, StreamEvent } from "../types.js";

export function responseToEvents(response: ResponseObject, startSequence = 0): StreamEvent[] {
  let seq = startSequence;
  const out: StreamEvent[] = [];
  const emit = (type: string, fields: Record<string, unknown>) => {
    out.push({ type, ...fields, sequence_number: seq++ });
  };
  const snapshot = (status: string): ResponseObject => ({
    ...response,
    status: status as ResponseObject["status"],
    error: null,
    incomplete_details: null,
    output: [],
    usage: null,
  });

  emit("response.created", { response: snapshot(response.status === "queued" ? "queued" : "in_progress") });
  if (response.status !== "queued") emit("response.in_progress", { response: snapshot("in_progress") });

  response.output.forEach((item, index) => {
    switch (item.type) {
      case "message":
        return replayMessage(item, index, emit);
      case "function_call":
        return replayFunctionCall(item, index, emit);
      case "reasoning":
        return replayReasoning(item, index, emit);
      default:
        emit("response.output_item.added", { output_index: index, item: inProgress(item) });
        emit("response.output_item.done", { output_index: index, item });
    }
  });

  const terminal = TERMINAL_EVENT_FOR_STATUS[response.status];
  if (terminal) emit(terminal, { response });
  return out;
}

type Emit = (type: string, fields: Record<string, unknown>) => void;

function inProgress(item: Item): Item {
  return "status" in item ? { ...item, status: "in_progress" } : { ...item };
}

function replayMessage(item: Item, index: number, emit: Emit): void {
  const id = item.id;
  const parts = Array.isArray(item.content) ? (item.content as Item[]) : [];
  emit("response.output_item.added", { output_index: index, item: { ...item, status: "in_progress", content: [] } });
  parts.forEach((part, j) => {
    const at = { item_id: id, output_index: index, content_index: j };
    if (part.type === "output_text") {
      const text = typeof part.text === "string" ? part.text : "";
      const logprobs = Array.isArray(part.logprobs) ? part.logprobs : [];
      emit("response.content_part.added", { ...at, part: { type: "output_text", text: "", annotations: [], logprobs: [] } });
      if (text) emit("response.output_text.delta", { ...at, delta: text, logprobs });
      emit("response.output_text.done", { ...at, text, logprobs });
    } else if (part.type === "refusal") {
      const refusal = typeof part.refusal === "string" ? part.refusal : "";
      emit("response.content_part.added", { ...at, part: { type: "refusal", refusal: "" } });
      if (refusal) emit("response.refusal.delta", { ...at, delta: refusal });
      emit("response.refusal.done", { ...at, refusal });
    } else {
      emit("response.content_part.added", { ...at, part });
    }
    emit("response.content_part.done", { ...at, part });
  });
  emit("response.output_item.done", { output_index: index, item });
}

function replayFunctionCall(item: Item, index: number, emit: Emit): void {
  const args = typeof item.arguments === "string" ? item.arguments : "";
  emit("response.output_item.added", { output_index: index, item: { ...item, status: "in_progress", arguments: "" } });
  if (args) emit("response.function_call_arguments.delta", { item_id: item.id, output_index: index, delta: args });
  emit("response.function_call_arguments.done", { item_id: item.id, output_index: index, name: item.name, arguments: args });
  emit("response.output_item.done", { output_index: index, item });
}

function replayReasoning(item: Item, index: number, emit: Emit): void {
  const id = item.id;
  const summary = Array.isArray(item.summary) ? (item.summary as Item[]) : [];
  const content = Array.isArray(item.content) ? (item.content as Item[]) : [];
  emit("response.output_item.added", { output_index: index, item: { id, type: "reasoning", summary: [] } });
  summary.forEach((part, s) => {
    const at = { item_id: id, output_index: index, summary_index: s };
    const text = typeof part.text === "string" ? part.text : "";
    emit("response.reasoning_summary_part.added", { ...at, part: { type: "summary_text", text: "" } });
    if (text) emit("response.reasoning_summary_text.delta", { ...at, delta: text });
    emit("response.reasoning_summary_text.done", { ...at, text });
    emit("response.reasoning_summary_part.done", { ...at, part });
  });
  let j = 0;
  for (const part of content) {
    if (part.type !== "reasoning_text") continue;
    const at = { item_id: id, output_index: index, content_index: j++ };
    const text = typeof part.text === "string" ? part.text : "";
    emit("response.content_part.added", { ...at, part: { type: "reasoning_text", text: "" } });
    if (text) emit("response.reasoning_text.delta", { ...at, delta: text });
    emit("response.reasoning_text.done", { ...at, text });
    emit("response.content_part.done", { ...at, part });
  }
  emit("response.output_item.done", { output_index: index, item });
}
