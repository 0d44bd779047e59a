/**
 * Reading an upstream read of a native Responses stream as bytes, to tell whether it can go to
 * the client as it came: every frame `event: response.<part>.<what>\ndata: <one line>\n\n` (the
 * layout the router writes, so the bytes are the ones it would write), none of them an event the
 * router rewrites (a lifecycle event such as `response.created` has one dot in its name, and
 * `error` none; output_item events carry items it keeps). Most of a stream is such reads: its
 * deltas, as tokens arrive.
 */

const LF = 10;
const DOT = 46;
const EVENT_RESPONSE = ascii("event: response.");
const DATA = ascii("data: ");
const OUTPUT_ITEM = ascii("output_item.");
const DELTA = ascii(".delta");

/** A passable read: its frame count, and whether one of them is a delta (the first token's time). */
export interface PassableRead {
  frames: number;
  delta: boolean;
}

/** The read's frames when it is passable as described above; null when any frame is not. */
export function passableFrames(b: Uint8Array): PassableRead | null {
  let pos = 0;
  let frames = 0;
  let delta = false;
  const n = b.length;
  while (pos < n) {
    if (!startsWith(b, pos, EVENT_RESPONSE)) return null;
    const name = pos + EVENT_RESPONSE.length;
    const nl = b.indexOf(LF, name);
    if (nl === -1) return null;
    const dot = b.indexOf(DOT, name);
    if (dot === -1 || dot > nl || startsWith(b, name, OUTPUT_ITEM) || !startsWith(b, nl + 1, DATA)) return null;
    const end = b.indexOf(LF, nl + 1 + DATA.length);
    if (end === -1 || b[end + 1] !== LF) return null;
    if (!delta && startsWith(b, nl - DELTA.length, DELTA)) delta = true;
    frames++;
    pos = end + 2;
  }
  return frames > 0 ? { frames, delta } : null;
}

/** The data of each frame of a passable read, as text (what the per-frame way would have kept). */
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
