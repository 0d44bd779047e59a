/**
 * The JSON text of a translated stream's events, the same bytes as `JSON.stringify(event)`,
 * without walking the two kinds a stream is mostly made of:
 *
 * - text deltas (`response.output_text.delta` without logprobs): everything before the delta
 *   is the same for every delta of one content part, so it is built once per part and each
 *   event is that prefix, the delta as a JSON string and the sequence number;
 * - lifecycle events whose `response` is the object the previous one carried (a translator's
 *   `response.created` and `response.in_progress` share their snapshot, which nothing changes
 *   after): the response's JSON is reused. The next event of another kind lets go of both:
 *   an open stream would otherwise keep its opening snapshot and its JSON until its end.
 *
 * Only events whose own keys are exactly those, in that order, take these ways (checked per
 * event: JSON.stringify writes keys in insertion order); any other event is stringified.
 * One instance per stream.
 */
import type { StreamEvent } from "./types.js";

const DELTA_KEYS = ["type", "item_id", "output_index", "content_index", "delta", "logprobs", "sequence_number"] as const;
const LIFECYCLE_KEYS = ["type", "response", "sequence_number"] as const;

export class EventJson {
  private part: { itemId: unknown; outputIndex: unknown; contentIndex: unknown; prefix: string } | null = null;
  private response: unknown = null;
  private responseJson = "";

  text(ev: StreamEvent): string {
    if (ev.type === "response.output_text.delta") {
      if (typeof ev.delta === "string" && isEmptyArray(ev.logprobs) && Number.isInteger(ev.sequence_number) && hasKeys(ev, DELTA_KEYS)) return this.delta(ev);
      return JSON.stringify(ev);
    }
    const response = ev.response;
    if (response === undefined || response === null || typeof response !== "object" || !Number.isInteger(ev.sequence_number) || !hasKeys(ev, LIFECYCLE_KEYS)) {
      this.response = null;
      this.responseJson = "";
      return JSON.stringify(ev);
    }
    if (response !== this.response) {
      this.response = response;
      this.responseJson = JSON.stringify(response);
    }
    return `{"type":${JSON.stringify(ev.type)},"response":${this.responseJson},"sequence_number":${ev.sequence_number}}`;
  }

  private delta(ev: StreamEvent): string {
    let p = this.part;
    if (p === null || p.itemId !== ev.item_id || p.outputIndex !== ev.output_index || p.contentIndex !== ev.content_index) {
      const prefix = `{"type":"response.output_text.delta","item_id":${JSON.stringify(ev.item_id)},"output_index":${JSON.stringify(ev.output_index)},"content_index":${JSON.stringify(ev.content_index)},"delta":`;
      p = this.part = { itemId: ev.item_id, outputIndex: ev.output_index, contentIndex: ev.content_index, prefix };
    }
    return `${p.prefix}${JSON.stringify(ev.delta)},"logprobs":[],"sequence_number":${ev.sequence_number}}`;
  }
}

function isEmptyArray(v: unknown): boolean {
  return Array.isArray(v) && v.length === 0;
}

/** The object's own enumerable keys are exactly `keys`, in that order. */
function hasKeys(o: object, keys: readonly string[]): boolean {
  let i = 0;
  for (const k in o) {
    if (k !== keys[i]) return false;
    i++;
  }
  return i === keys.length;
}
