/**
 * What src/responses/adapters/ holds:
 * one adapter per backend kind, side by side: `adapter.ts` (the shape: build the request, read
 * JSON, a stream translation with start/push/finish/fail/cancel), `chat.ts` (`kind: chat`, through
 * `translate/chat/`), `openai.ts` (`kind: openai`, through `translate/openai/`), `anthropic.ts`
 * (`kind: anthropic`, through `translate/anthropic/`)
 */
/**
 * The shape every endpoint kind's adapter has on the /v1/responses path (chat.ts: `kind: chat`
 * and anthropic.ts: `kind: anthropic`, translated; openai.ts: `kind: openai`, passed through):
 * the request it builds, reading a whole JSON answer, and a stream translation with one
 * start/push/finish/fail/cancel shape, so execute.ts runs one loop over any of them.
 */
import type { Runtime } from "../../runtime/runtime.js";
import type { EventSink } from "../../wire/sse-writer.js";
import type { ResponseObject, StreamEvent } from "../../wire/types.js";
import type { PreparedRequest, UpstreamAttempt } from "../../upstream/attempt.js";
import type { SseFrame } from "../../upstream/sse.js";
import type { Item } from "../../wire/types.js";
import type { Clock } from "../../wire/clock.js";
import { responseSkeleton, type SkeletonMeta } from "../../translate/index.js";
import type { Plan } from "../create/plan.js";

/** What reading an answer needs besides the request itself. */
export interface ReadContext {
  rt: Runtime;
  attempt: UpstreamAttempt;
  /** The status a translated response starts in (a background job's starts `queued`). */
  initialStatus: "in_progress" | "queued";
  /** Tells the time a response completes (its `completed_at`). */
  clock: Clock;
}

/** One request built for one endpoint: what is sent, and how its answer is read. */
export interface AdaptedRequest extends PreparedRequest {
  /** Request tool types the endpoint's kind cannot take, dropped from what is sent (counted by the caller). */
  readonly droppedTools: readonly string[];
  /** Encrypted reasoning the router asked for on the client's behalf, hidden from it. */
  readonly hidesEncryptedReasoning: boolean;
  fromJson(json: unknown, rd: ReadContext): ResponseObject;
  stream(rd: ReadContext): StreamTranslation;
}

/** What a translated request sends: the history, the new input, and a compaction made for this turn last. */
export function translatedItems(plan: Plan): Item[] {
  return plan.compacted ? [...plan.history, ...plan.input, plan.compacted] : [...plan.history, ...plan.input];
}

/** The response a plan's answer fills in, before the upstream says anything. */
export function planSkeleton(plan: Plan, status: SkeletonMeta["status"]): ResponseObject {
  return responseSkeleton(plan.req, { id: plan.id, createdAt: plan.createdAt, model: plan.model, status, previousResponseId: plan.previousResponseId });
}

/** An upstream terminal event held back, so the caller stores the response before the client sees it. */
export interface HeldTerminal {
  readonly type: string;
  readonly data: string;
}

/** `push` saw the upstream's end marker (`data: [DONE]`). */
export const END = Symbol("end");

/** Upstream SSE frames in, Responses events out to a sink. */
export interface StreamTranslation {
  /** The response as the events so far describe it. */
  readonly response: ResponseObject;
  /** Writes the opening events, if the kind has its own. */
  start(sink: EventSink): void;
  /** One upstream frame: writes what it yields; the upstream's own terminal event is returned, held back. */
  push(frame: SseFrame, sink: EventSink): HeldTerminal | typeof END | null;
  /**
   * One upstream read of whole frames, offered as its bytes before it is parsed: the kind writes
   * what it yields (what it changes nothing in may go to the sink as it came, `EventSink.sendRaw`)
   * and returns as `push` does for the read's last frame; false to have it parsed and pushed frame
   * by frame instead (nothing of it was written). Absent: every read is parsed.
   */
  pushRaw?(chunk: Buffer, sink: EventSink): HeldTerminal | typeof END | null | false;
  /** The upstream ended: the closing events, terminal last. */
  finish(): StreamEvent[];
  /** The upstream broke: open items closed, `response.failed` last. */
  fail(error: { code: string; message: string }): StreamEvent[];
  /** The caller went away: open items closed as incomplete, no terminal event. */
  cancel(): StreamEvent[];
  serialise(ev: StreamEvent): string;
}

/** What an adapter's stream wraps: the kind's translator (or, passed through, its id-rewriting machine). */
interface StreamCore {
  readonly response: ResponseObject;
  finish(): StreamEvent[];
  fail(error: { code: string; message: string }): StreamEvent[];
  cancel(): StreamEvent[];
}

/**
 * The part every kind's StreamTranslation shares: the chunk metric, and the stream's ends,
 * each flushing the metric before the core's closing events. A kind writes start, push and serialise.
 */
export abstract class CountedStream<C extends StreamCore> implements StreamTranslation {
  protected readonly chunks: ChunkCount;
  constructor(
    protected readonly tr: C,
    protected readonly rd: ReadContext,
    kind: "native" | "translated",
  ) {
    this.chunks = new ChunkCount(rd.rt, kind);
  }

  get response(): ResponseObject {
    return this.tr.response;
  }

  abstract start(sink: EventSink): void;
  abstract push(frame: SseFrame, sink: EventSink): HeldTerminal | typeof END | null;
  abstract serialise(ev: StreamEvent): string;

  finish(): StreamEvent[] {
    this.chunks.flush();
    return this.tr.finish();
  }

  fail(error: { code: string; message: string }): StreamEvent[] {
    this.chunks.flush();
    return this.tr.fail(error);
  }

  cancel(): StreamEvent[] {
    this.chunks.flush();
    return this.tr.cancel();
  }
}

/** Sends events (as objects to a sink that takes them so, `EventSink.event`); flushes unless the caller knows more frames from the same upstream read follow. */
export function sendEvents(sink: EventSink, events: StreamEvent[], serialise: (ev: StreamEvent) => string, flush = true): void {
  if (sink.event) for (const ev of events) sink.event(ev, serialise);
  else for (const ev of events) sink.send(ev.type, serialise(ev));
  if (flush) sink.flush?.();
}

/**
 * The stream-chunk metric, counted once per upstream read rather than once per chunk
 * (a prom-client label lookup each): `add` per chunk, `flush` at a read's last chunk and
 * wherever the stream stops.
 */
export class ChunkCount {
  private n = 0;
  constructor(
    private readonly rt: Runtime,
    private readonly kind: "native" | "translated",
  ) {}

  add(more: boolean | undefined): void {
    this.n++;
    if (!more) this.flush();
  }

  /** Several chunks of a read at once (not its last: `add` or `flush` follows). */
  addMany(chunks: number): void {
    this.n += chunks;
  }

  flush(): void {
    if (this.n === 0) return;
    this.rt.metrics.streamChunks.inc({ kind: this.kind }, this.n);
    this.n = 0;
  }
}
