/**
 * An upstream read of a native Responses stream read as bytes, to pass on as it came what the
 * router changes nothing in. A read qualifies when every frame is laid out as the router writes
 * frames (`frameBounds`, wire/sse-parser.ts: the bytes are the ones it would write); then
 * each frame is either passable - `response.<part>.<what>`, other than an output_item event:
 * the deltas, as tokens arrive, and the parts' and texts' done events - or read on its own: a
 * lifecycle event (`response.created`: one dot in its name) takes the router's id and fields,
 * an output_item event carries an item the machine keeps, `error` is parsed.
 */

import { asciiBytes, bytesAt } from "../../wire/sse-parser.js";

const DOT = 46;
const EVENT_RESPONSE = asciiBytes("event: response.");
const OUTPUT_ITEM = asciiBytes("output_item.");
const DELTA = asciiBytes(".delta");

/** Whether the frame at `start` (its event line ending at `nl`) is one the router changes nothing in, by its type. */
export function passableEvent(b: Uint8Array, start: number, nl: number): boolean {
  if (!bytesAt(b, start, EVENT_RESPONSE)) return false;
  const name = start + EVENT_RESPONSE.length;
  const dot = b.indexOf(DOT, name);
  return dot !== -1 && dot < nl && !bytesAt(b, name, OUTPUT_ITEM);
}

/** Whether the frame whose event line ends at `nl` is a delta (the time to first token counts from the first). */
export function deltaEvent(b: Uint8Array, nl: number): boolean {
  return bytesAt(b, nl - DELTA.length, DELTA);
}
