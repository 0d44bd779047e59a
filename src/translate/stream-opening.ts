/**
 * The events a translated stream opens with (chat and anthropic alike): `response.created`
 * (`queued` for a background job), `response.in_progress`, and a compaction item the router made
 * before answering, placed first in the output and emitted complete.
 */
import type { ResponseOutputItem } from "openai/resources/responses/responses";
import { emitted } from "../wire/emitted.js";
import type { EmittedResponse, StreamEvent } from "../wire/types.js";
import type { StreamTranslatorOptions } from "./chat/stream-state.js";

export function openingEvents(skeleton: EmittedResponse, compaction: StreamTranslatorOptions["compaction"] | null, output: ResponseOutputItem[], seq: () => number, out: StreamEvent[]): void {
  const inProgress: EmittedResponse = { ...skeleton, status: "in_progress", output: [], usage: null };
  // One snapshot for both events unless they differ (neither is changed after): serialised once (wire/event-json.ts).
  const created: EmittedResponse = skeleton.status === "queued" ? { ...inProgress, status: "queued" } : inProgress;
  out.push(emitted({ type: "response.created", response: created, sequence_number: seq() }));
  out.push(emitted({ type: "response.in_progress", response: inProgress, sequence_number: seq() }));
  if (!compaction) return;
  const index = output.length;
  output.push(compaction as unknown as ResponseOutputItem);
  out.push(emitted({ type: "response.output_item.added", output_index: index, item: compaction, sequence_number: seq() }));
  out.push(emitted({ type: "response.compaction.compacting", item_id: compaction.id, output_index: index, sequence_number: seq() }));
  out.push(emitted({ type: "response.output_item.done", output_index: index, item: compaction, sequence_number: seq() }));
}
