/**
 * An upstream read of a native Responses stream read as bytes, to pass on as it came what the
 * router changes nothing in. A read qualifies when every frame is laid out as the router writes
 * frames (`event: <type>\ndata: <one line>\n\n`: the bytes are the ones it would write); then
 * each frame is either passable - `response.<part>.<what>`, other than an output_item event:
 * the deltas, as tokens arrive, and the parts' and texts' done events - or read on its own: a
 * lifecycle event (`response.created`: one dot in its name) takes the router's id and fields,
 * an output_item event carries an item the machine keeps, `error` is parsed.
 */

const LF = 10;
const DOT = 46;
const EVENT = ascii("event: ");
const EVENT_RESPONSE = ascii("event: response.");
const DATA = ascii("data: ");
const OUTPUT_ITEM = ascii("output_item.");
const DELTA = ascii(".delta");

/**
 * Where each frame of a read is, when every frame is laid out as the router writes frames: three
 * numbers a frame into `out` (emptied first) - its start, the end of its event line (the LF), its
 * end (after its blank line). False when any frame is laid out otherwise (another field, a
 * comment, data over several lines, no event line) or the read is not whole frames.
 */
export function frameBounds(b: Uint8Array, out: number[]): boolean {
  out.length = 0;
  let pos = 0;
  const n = b.length;
  while (pos < n) {
    if (!startsWith(b, pos, EVENT)) return false;
    const nl = b.indexOf(LF, pos + EVENT.length);
    if (nl === -1 || !startsWith(b, nl + 1, DATA)) return false;
    const end = b.indexOf(LF, nl + 1 + DATA.length);
    if (end === -1 || b[end + 1] !== LF) return false;
    out.push(pos, nl, end + 2);
    pos = end + 2;
  }
  return out.length > 0;
}

/** Whether the frame at `start` (its event line ending at `nl`) is one the router changes nothing in, by its type. */
export function passableEvent(b: Uint8Array, start: number, nl: number): boolean {
  if (!startsWith(b, start, EVENT_RESPONSE)) return false;
  const name = start + EVENT_RESPONSE.length;
  const dot = b.indexOf(DOT, name);
  return dot !== -1 && dot < nl && !startsWith(b, name, OUTPUT_ITEM);
}

/** Whether the frame whose event line ends at `nl` is a delta (the time to first token counts from the first). */
export function deltaEvent(b: Uint8Array, nl: number): boolean {
  return startsWith(b, nl - DELTA.length, DELTA);
}

/** The data of each frame of passed bytes, as text (what the frame-by-frame way keeps of an open item). */
export function passedFrameData(b: Uint8Array): string[] {
  const out: string[] = [];
  for (const frame of new TextDecoder().decode(b).split("\n\n")) {
    const at = frame.indexOf("\ndata: ");
    if (at !== -1) out.push(frame.slice(at + 7));
  }
  return out;
}

function startsWith(b: Uint8Array, at: number, prefix: Uint8Array): boolean {
  if (at < 0 || at + prefix.length > b.length) return false;
  for (let i = 0; i < prefix.length; i++) if (b[at + i] !== prefix[i]) return false;
  return true;
}

function ascii(text: string): Uint8Array {
  return Uint8Array.from(text, (c) => c.charCodeAt(0));
}
