/**
 * Server-sent events read: the frame parser every event stream the router reads goes through
 * (the model's upstream streams, an MCP server's answers). Pure: fed text or bytes, it calls
 * back once per complete frame.
 */

/** One server-sent event frame: its event name (none: the default, `message`) and its data lines joined. */
export interface SseFrame {
  event: string | undefined;
  data: string;
  /**
   * Set when another frame from the same upstream read follows at once: a consumer that
   * writes to a client may hold its write until a frame without it (one write per
   * upstream read instead of one per frame; nothing waits for more network input).
   */
  more?: boolean;
}

/** Called once per frame; true stops the parser (the protocol's end: [DONE], a terminal event). */
export type FrameHandler = (frame: SseFrame) => boolean | void;

/**
 * Splits a byte stream into SSE frames, fed one upstream read at a time and calling back
 * once per complete frame in the same turn (no promise per frame). Line ends may be LF,
 * CRLF or a lone CR (sse-starlette and other Python servers send CRLF), comments
 * (": keep-alive"), multi-line data and frames split across reads at any byte.
 *
 * Each read is normalised to LF on its own (a read without "\r" is not touched). A
 * read that ends in "\r" has ended its line already; if the next read starts with
 * "\n", that "\n" belongs to the same CRLF and is dropped (`skipLf`), so a split
 * between "\r" and "\n" never adds a blank line (which would end a frame early).
 */
export class SseParser {
  private readonly decoder = new TextDecoder();
  private buf = "";
  private skipLf = false;
  /** The decoder holds no bytes of a character split across reads (the last read decoded ended with an ASCII byte). */
  private decoderClean = true;

  /** One upstream read. Returns true when `onFrame` asked to stop (no further frame of the read is parsed). */
  push(chunk: Uint8Array | string, onFrame: FrameHandler): boolean {
    return this.pushText(this.decode(chunk), onFrame);
  }

  /** One read as text; a multi-byte character split across reads waits for its rest. */
  decode(chunk: Uint8Array | string): string {
    if (typeof chunk === "string") return chunk;
    this.decoderClean = chunk.length === 0 ? this.decoderClean : chunk[chunk.length - 1]! < 0x80;
    return this.decoder.decode(chunk, { stream: true });
  }

  /**
   * Whether `chunk` (the next read, not decoded) is whole frames that need no parser state, as
   * `wholeFrames` says of text: nothing held from earlier reads (in the buffer or the decoder),
   * no CR, and it ends with a frame's blank line. Such a read may be taken as its bytes: the
   * parser's state stays what it was (it ends in LF, so the decoder would hold nothing after it).
   */
  wholeBytes(chunk: Uint8Array): boolean {
    return this.holdsNothing() && endsWithBlankLine(chunk) && chunk.indexOf(CR) === -1;
  }

  /** Nothing of earlier reads is held (in the buffer or the decoder): the next read starts a frame. */
  holdsNothing(): boolean {
    return this.buf.length === 0 && !this.skipLf && this.decoderClean;
  }

  /**
   * Whether `text` (the next read, decoded) is whole frames that need no parser state: nothing
   * held from earlier reads, no CR to normalise, and it ends with a frame's blank line. Such a
   * read may be taken as it is instead of through `pushText`.
   */
  wholeFrames(text: string): boolean {
    return this.buf.length === 0 && !this.skipLf && text.length > 0 && text.endsWith("\n\n") && !text.includes("\r");
  }

  /** `push` for a read already decoded. */
  pushText(text: string, onFrame: FrameHandler): boolean {
    if (text.length === 0) return false; // e.g. only part of a multi-byte character so far
    if (this.skipLf) {
      this.skipLf = false;
      if (text.charCodeAt(0) === LF) text = text.slice(1);
    }
    if (text.includes("\r")) {
      this.skipLf = text.charCodeAt(text.length - 1) === CR;
      text = text.replace(CR_LINE_ENDS, "\n");
    }
    let buf = this.buf.length === 0 ? text : this.buf + text;
    let start = 0;
    let end: number;
    let held: SseFrame | null = null; // each frame is handed on once the next one is known
    while ((end = buf.indexOf("\n\n", start)) !== -1) {
      const frame = parseFrame(buf.slice(start, end));
      start = end + 2;
      if (!frame) continue;
      if (held) {
        held.more = true;
        if (onFrame(held) === true) return this.stop();
      }
      held = frame;
    }
    if (start > 0) buf = start === buf.length ? "" : buf.slice(start);
    this.buf = buf;
    return held !== null && onFrame(held) === true ? this.stop() : false;
  }

  /** The end of the body: a last frame without its blank line still counts. */
  end(onFrame: FrameHandler): boolean {
    const tail = this.decoder.decode();
    const buf = this.buf + (this.skipLf && tail.charCodeAt(0) === LF ? tail.slice(1) : tail);
    this.buf = "";
    const last = parseFrame(buf.replace(CR_LINE_ENDS, "\n").trim());
    return last !== null && onFrame(last) === true;
  }

  private stop(): true {
    this.buf = "";
    return true;
  }
}

const LF = 10;
const CR = 13;

/** `b` ends with a frame's blank line. */
export function endsWithBlankLine(b: Uint8Array): boolean {
  const n = b.length;
  return n >= 2 && b[n - 1] === LF && b[n - 2] === LF;
}

/**
 * Where the first blank line of `b` ends, when more follows it: the frame the parser holds the
 * start of ends there, and what follows starts a frame. -1 when there is none, or a CR.
 */
export function firstFrameEnd(b: Uint8Array): number {
  const n = b.length;
  let at = 0;
  while (at < n - 1 && !(b[at] === LF && b[at + 1] === LF)) at++;
  if (at >= n - 2 || b.indexOf(CR) !== -1) return -1;
  return at + 2;
}

/**
 * Where the last whole frame of `b` ends (after its blank line), when `b` does not end with one:
 * the read can be taken up to there and the rest kept for the next. -1 when `b` ends with a
 * whole frame, holds none, or has a CR (line ends that need the parser). Searched from the end:
 * what follows the last frame is less than a frame.
 */
export function lastFrameEnd(b: Uint8Array): number {
  const n = b.length;
  if (n < 2 || endsWithBlankLine(b)) return -1;
  let at = n - 3;
  while (at >= 0 && !(b[at] === LF && b[at + 1] === LF)) at--;
  if (at < 0 || b.indexOf(CR) !== -1) return -1;
  return at + 2;
}
const CR_LINE_ENDS = /\r\n?/g;
const EVENT_FIELD = asciiBytes("event: ");
const DATA_FIELD = asciiBytes("data: ");

/**
 * Where each frame of a read of whole frames is, when every frame is laid out as the router
 * writes frames (`event: <type>\ndata: <one line>\n\n`, sse-writer.ts): three numbers a frame
 * into `out` (emptied first) - its start, the end of its event line (the LF), its end (after its
 * blank line). False when any frame is laid out otherwise (another field, a comment, data over
 * several lines, no event line) or the read does not end with a whole frame.
 */
export function frameBounds(b: Uint8Array, out: number[]): boolean {
  out.length = 0;
  let pos = 0;
  const n = b.length;
  while (pos < n) {
    if (!bytesAt(b, pos, EVENT_FIELD)) return false;
    const nl = b.indexOf(LF, pos + EVENT_FIELD.length);
    if (nl === -1 || !bytesAt(b, nl + 1, DATA_FIELD)) return false;
    const end = b.indexOf(LF, nl + 1 + DATA_FIELD.length);
    if (end === -1 || b[end + 1] !== LF) return false;
    out.push(pos, nl, end + 2);
    pos = end + 2;
  }
  return out.length > 0;
}

/** Whether `b` holds the bytes `prefix` at `at`. */
export function bytesAt(b: Uint8Array, at: number, prefix: Uint8Array): boolean {
  if (at < 0 || at + prefix.length > b.length) return false;
  for (let i = 0; i < prefix.length; i++) if (b[at + i] !== prefix[i]) return false;
  return true;
}

/** An ASCII string's bytes. */
export function asciiBytes(text: string): Uint8Array {
  return Uint8Array.from(text, (c) => c.charCodeAt(0));
}

function parseFrame(text: string): SseFrame | null {
  if (text.length === 0) return null;
  // Fast paths: the overwhelmingly common single "data: ..." line (chat completions), and
  // "event: ...\ndata: ..." (the Responses and Messages streams), read without splitting lines.
  if (text.startsWith("data: ")) {
    if (text.indexOf("\n") === -1) return { event: undefined, data: text.slice(6) };
  } else if (text.startsWith("event: ")) {
    const nl = text.indexOf("\n");
    if (nl !== -1 && text.startsWith("data: ", nl + 1) && text.indexOf("\n", nl + 1) === -1) return { event: text.slice(7, nl), data: text.slice(nl + 7) };
  }
  let event: string | undefined;
  let data: string | undefined;
  for (const line of text.split("\n")) {
    if (line.length === 0 || line[0] === ":") continue;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value[0] === " ") value = value.slice(1);
    if (field === "event") event = value;
    else if (field === "data") data = data === undefined ? value : `${data}\n${value}`;
  }
  return data === undefined ? null : { event, data };
}
