import type { UpstreamBody } from "./body.js";
import { endsWithBlankLine, firstFrameEnd, lastFrameEnd, SseParser, type FrameHandler, type SseFrame } from "../wire/sse-parser.js";

export { SseParser, type FrameHandler, type SseFrame };

/** What a consumer did with a read offered as its bytes (`FrameConsumer.onWholeBytes`). */
export type WholeBytes = "taken" | "stop" | "parse";

/** What reads an upstream body's frames as they arrive (`pipeSseFrames`). */
export interface FrameConsumer {
  /**
   * A read that is whole frames (`SseParser.wholeFrames`), offered as its text before it is
   * parsed: "taken" (no frame of it is parsed or handed to `onFrame`), "stop" (taken, and the
   * protocol ended in it) or "parse" (it is parsed). For a consumer that passes frames through
   * and only needs some of them parsed.
   */
  onWholeRead?(text: string): WholeBytes;
  /**
   * The same offer made before a read is decoded (`SseParser.wholeBytes`): "taken" (the consumer
   * read it as bytes), "stop" (taken, and the protocol ended in it: the rest of the body is
   * released, as when `onFrame` stops) or "parse" (nothing of it was read: it is decoded and
   * offered or parsed as above).
   */
  onWholeBytes?(chunk: Buffer): WholeBytes;
  /** One frame, once the socket read that brought it is over; true stops reading (the rest of the body is released). */
  onFrame: FrameHandler;
  /** The body ended by itself (after its last frame). Not called after a stop. */
  onEnd(): void;
  /** The body broke or the caller aborted it. Not called after a stop. */
  onError(err: unknown): void;
  /** A read was handled (and did not stop the body): a consumer whose client is full pauses the body here. */
  afterRead?(): void;
}

/**
 * Reads an upstream body's SSE frames by push: the frames of a read (all that one socket read
 * brought, UpstreamBody) are handed on together. A consumer that takes reads whole
 * (`onWholeBytes`, `onWholeRead`) is offered the read's whole frames, and the unfinished frame
 * after them starts the next read: a read of many frames rarely ends where a frame does, and
 * should not be parsed frame by frame for that. A consumer that stops early (at [DONE] or a
 * terminal event) releases the body: drained when its end is already here (no abort error per
 * stream), else the call is aborted. The consumer pauses the body itself (`body.pause()`, from
 * `afterRead`) when its client is full.
 */
export function pipeSseFrames(body: UpstreamBody, consumer: FrameConsumer): void {
  const parser = new SseParser();
  let stopped = false;
  /**
   * The bytes after a read's last whole frame, when the frames before them were taken whole:
   * they start the next read (a read of many frames rarely ends at a frame's end).
   */
  let carry: Buffer | null = null;
  const offers = consumer.onWholeBytes !== undefined || consumer.onWholeRead !== undefined;
  const stop = () => {
    stopped = true;
    body.release();
  };
  /** The consumer took `chunk` up to `cut` (-1: all of it); the rest starts the next read. */
  const took = (chunk: Buffer, cut: number): false => {
    // A copy: a view would keep the whole read's buffer alive until the next read.
    if (cut !== -1) carry = Buffer.from(chunk.subarray(cut));
    return false;
  };
  /** One read through the consumer; true when it stopped reading. */
  const read = (chunk: Buffer): boolean => {
    if (carry !== null) {
      chunk = Buffer.concat([carry, chunk]);
      carry = null;
    }
    if (offers && !parser.holdsNothing()) {
      // The parser holds the start of a frame (a read that was not offered, or declined): the
      // read is parsed up to that frame's end only, so the frames after it are offered again.
      const first = firstFrameEnd(chunk);
      if (first !== -1) {
        if (parser.push(chunk.subarray(0, first), consumer.onFrame)) return true;
        chunk = chunk.subarray(first);
      }
    }
    if (offers && parser.holdsNothing()) {
      // The read's whole frames are offered whole, its unfinished last frame kept for the next.
      const cut = lastFrameEnd(chunk);
      const whole = cut === -1 ? chunk : chunk.subarray(0, cut);
      if (consumer.onWholeBytes && parser.wholeBytes(whole)) {
        const answer = consumer.onWholeBytes(whole);
        if (answer === "stop") return true;
        if (answer === "taken") return took(chunk, cut);
      }
      if (consumer.onWholeRead && endsWithBlankLine(whole)) {
        const text = parser.decode(whole);
        const answer = parser.wholeFrames(text) ? consumer.onWholeRead(text) : "parse";
        if (answer === "stop") return true;
        if (answer === "taken") return took(chunk, cut);
        return parser.pushText(text, consumer.onFrame) || (cut !== -1 && parser.push(chunk.subarray(cut), consumer.onFrame));
      }
    }
    return parser.push(chunk, consumer.onFrame);
  };
  body.attach({
    onChunk(chunk) {
      if (stopped) return;
      if (read(chunk)) stop();
      else consumer.afterRead?.();
    },
    onEnd() {
      if (stopped) return;
      stopped = true;
      if (carry !== null && parser.push(carry, consumer.onFrame)) return;
      if (!parser.end(consumer.onFrame)) consumer.onEnd();
    },
    onError(err) {
      if (stopped) return;
      stopped = true;
      consumer.onError(err);
    },
  });
}

/**
 * The same frames as an async iterator (the Responses stream pump, tests, benchmarks): the
 * frames of each read are parsed at once and handed on one by one. An UpstreamBody it stops
 * reading early is released by the body's own iterator.
 */
export async function* readSseFrames(body: AsyncIterable<Uint8Array | string>): AsyncGenerator<SseFrame> {
  const parser = new SseParser();
  const frames: SseFrame[] = [];
  const collect = (frame: SseFrame) => {
    frames.push(frame);
  };
  for await (const chunk of body) {
    parser.push(chunk, collect);
    for (let i = 0; i < frames.length; i++) yield frames[i]!;
    frames.length = 0;
  }
  parser.end(collect);
  yield* frames;
}
