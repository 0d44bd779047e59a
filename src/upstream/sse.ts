import type { UpstreamBody } from "./body.js";
import { SseParser, type FrameHandler, type SseFrame } from "../wire/sse-parser.js";

export { SseParser, type FrameHandler, type SseFrame };

/** What a consumer did with a read offered as its bytes (`FrameConsumer.onWholeBytes`). */
export type WholeBytes = "taken" | "stop" | "parse";

/** What reads an upstream body's frames as they arrive (`pipeSseFrames`). */
export interface FrameConsumer {
  /**
   * A read that is whole frames (`SseParser.wholeFrames`), offered as its text before it is
   * parsed: true takes it (no frame of it is parsed or handed to `onFrame`), false has it parsed.
   * For a consumer that passes frames through and only needs some of them parsed.
   */
  onWholeRead?(text: string): boolean;
  /**
   * The same offer made before a read is decoded (`SseParser.wholeBytes`): "taken" (the consumer
   * read it as bytes), "stop" (taken, and the protocol ended in it: the rest of the body is
   * released, as when `onFrame` stops) or "parse" (nothing of it was read: it is decoded and
   * offered or parsed as above).
   */
  onWholeBytes?(chunk: Buffer): WholeBytes;
  /** One frame, in the turn its upstream read arrived; true stops reading (the rest of the body is released). */
  onFrame: FrameHandler;
  /** The body ended by itself (after its last frame). Not called after a stop. */
  onEnd(): void;
  /** The body broke or the caller aborted it. Not called after a stop. */
  onError(err: unknown): void;
  /** A read was handled (and did not stop the body): a consumer whose client is full pauses the body here. */
  afterRead?(): void;
}

/**
 * Reads an upstream body's SSE frames by push: every frame of a read is handed on in the
 * read's own turn. A consumer that stops early (at [DONE] or a terminal event) releases the
 * body: drained when its end is already here (no abort error per stream), else the call is
 * aborted. The consumer pauses the body itself (`body.pause()`, from `afterRead`) when its client is full.
 */
export function pipeSseFrames(body: UpstreamBody, consumer: FrameConsumer): void {
  const parser = new SseParser();
  let stopped = false;
  const stop = () => {
    stopped = true;
    body.release();
  };
  /** One read through the consumer; true when it stopped reading. */
  const read = (chunk: Buffer): boolean => {
    if (consumer.onWholeBytes && parser.wholeBytes(chunk)) {
      const took = consumer.onWholeBytes(chunk);
      if (took === "taken") return false;
      if (took === "stop") return true;
    }
    const text = parser.decode(chunk);
    if (consumer.onWholeRead && parser.wholeFrames(text) && consumer.onWholeRead(text)) return false;
    return parser.pushText(text, consumer.onFrame);
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
