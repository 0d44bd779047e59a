/**
 * The recorded event stream of background responses: the sink a job writes through,
 * the terminal events the router writes itself, and the SSE body that follows a log.
 */
import { sseBody, type EventSink, type StreamBody } from "../../wire/sse-writer.js";
import { EventOrderError, isTerminalEvent, type EventLog } from "../../store/types.js";
import { TERMINAL_EVENT_FOR_STATUS } from "../../wire/protocol.js";
import { emitted, numbered } from "../../wire/emitted.js";
import { failedResponse } from "../../translate/index.js";
import type { EmittedResponse, Item, ResponseObject, StreamEvent } from "../../wire/types.js";
import type { Deadline } from "../../runtime/deadline.js";

/**
 * Appends a job's stream events to the EventLog in order (one append at a time, so
 * sequence numbers stay increasing). The upstream's own `response.created` is dropped:
 * the router recorded its `response.created` (status `queued`) as event 0 when it
 * accepted the request, and the job's events continue from 1.
 *
 * The recorded log never has a gap: an append that fails (the store is away) is retried,
 * with the events after it waiting in order behind it, for up to RECORD_RETRY_MS. If the
 * store is still away then, recording stops at that event (`broken`) and the job ends at
 * `nextSequence` = that event's number, so its terminal event follows the last recorded
 * one. Appends only go to a log that still exists: a response deleted meanwhile (on any
 * instance) is not re-created (`gone`).
 */
export class EventRecorder implements EventSink {
  private chain: Promise<void> = Promise.resolve();
  /** The store error that made recording stop; later events are dropped (the job ends as failed). */
  broken: Error | null = null;
  /** The response's log was deleted: nothing more is recorded. */
  gone = false;
  /** The sequence_number the next event gets. */
  private next = 1;
  /** The first event that could not be recorded (set with `broken`). */
  private firstLost: number | null = null;

  constructor(
    private readonly log: EventLog,
    private readonly responseId: string,
    private readonly onError: (err: Error) => void,
    private readonly retryMs = RECORD_RETRY_MS,
  ) {}

  /** The sequence_number of the event that ends the job's stream: right after the last one recorded. */
  get nextSequence(): number {
    return this.firstLost ?? this.next;
  }

  send(type: string, data: string): void {
    if (type === "response.created") return;
    const event = JSON.parse(data) as StreamEvent;
    this.next = event.sequence_number + 1;
    this.chain = this.chain.then(() => this.write(event));
  }

  /** Resolves once every event sent so far was written (or dropped after a failure). */
  drained(): Promise<void> {
    return this.chain;
  }

  private async write(event: StreamEvent): Promise<void> {
    if (this.broken || this.gone) return;
    let failingSince = 0;
    for (let wait = 50; ; wait = Math.min(wait * 2, 1_000)) {
      try {
        if (!(await this.log.appendIfExists(this.responseId, event))) this.gone = true;
        return;
      } catch (err) {
        // A retried append that had reached the store before its reply was lost.
        if (err instanceof EventOrderError && failingSince) return;
        this.onError(err as Error);
        failingSince ||= Date.now();
        if (err instanceof EventOrderError || Date.now() - failingSince >= this.retryMs) {
          this.broken = err as Error;
          this.firstLost = event.sequence_number;
          return;
        }
        await new Promise((r) => setTimeout(r, wait));
      }
    }
  }
}

/** How long a job's events wait for an unreachable store before the job ends as failed. */
const RECORD_RETRY_MS = 15_000;

/**
 * The event that ends a background response's stream. The Responses API has no
 * `response.cancelled` event and strict clients (openai-node's ResponseStream, the
 * Agents SDK) throw on unknown event types, so a cancelled response ends with
 * `response.incomplete` carrying `response.status: "cancelled"` and the partial
 * output: every client treats it as a terminal lifecycle event and ends the stream.
 */
export function terminalEvent(response: ResponseObject, sequenceNumber: number): StreamEvent {
  const type = response.status === "cancelled" ? "response.incomplete" : (TERMINAL_EVENT_FOR_STATUS[response.status] ?? "response.failed");
  const typed = response as unknown as EmittedResponse;
  return numbered({ type: type as "response.completed" | "response.incomplete" | "response.failed", response: typed }, sequenceNumber);
}

/** The items that were finished in a recorded stream (partial output of a run that stopped). */
export function finishedItems(events: StreamEvent[]): Item[] {
  const items: Item[] = [];
  for (const e of events) {
    if (e.type === "response.output_item.done" && typeof e.output_index === "number") items[e.output_index] = e.item as Item;
  }
  return items.filter(Boolean);
}

/**
 * A text/event-stream body that follows a response's recorded events after `afterSeq`
 * until its terminal event. `finished`: the response already ended, so the log is read
 * to its end and the stream closes even if the terminal event expired from the log.
 * The log is read no faster than the client takes the events (the sink's backlog).
 * A store that fails mid-way ends the stream with an `error` event; the client can
 * resume with `starting_after` once the store is back. At this instance's shutdown deadline
 * (`shutdown`) the stream ends with `response.failed` (`server_shutting_down`, the finished
 * items so far); its message says the job may still finish (background.drain_timeout, or
 * another instance) and where to resume.
 */
export function followBody(
  log: EventLog,
  responseId: string,
  afterSeq: number,
  finished: boolean,
  onStoreError: () => void,
  shutdown?: { deadline: Deadline; snapshot(): Promise<ResponseObject | null> },
): StreamBody {
  const stop = new AbortController();
  return sseBody(
    async (sink) => {
      const grace = finished ? setTimeout(() => stop.abort(), FINISHED_GRACE_MS) : null;
      let last = afterSeq;
      let cut = false;
      let ended = false;
      const onDeadline = () => {
        cut = true;
        stop.abort();
      };
      const deadlineSlot = shutdown ? shutdown.deadline.listen(onDeadline) : -1;
      try {
        for await (const event of log.follow(responseId, afterSeq, stop.signal)) {
          sink.send(event.type, JSON.stringify(event));
          sink.flush!();
          last = event.sequence_number;
          ended = isTerminalEvent(event);
          // A client that reads slower than the log holds the follower, not the router's memory.
          const backlog = sink.backlog?.();
          if (backlog) await backlog;
        }
        if (cut && !ended && shutdown) {
          const event = await shutdownEvent(log, responseId, last, shutdown.snapshot);
          sink.send(event.type, JSON.stringify(event));
        }
      } catch (err) {
        onStoreError();
        const message = `The router's event store failed while streaming this response (${(err as Error).message}); resume with starting_after=${last}.`;
        const error = emitted({ type: "error", code: "store_unavailable", message, param: null, sequence_number: last + 1 });
        sink.send("error", JSON.stringify(error));
      } finally {
        if (grace) clearTimeout(grace);
        shutdown?.deadline.forget(deadlineSlot);
      }
    },
    () => stop.abort(),
  );
}

/** The event that ends a follower's stream at the shutdown deadline: response.failed, or `error` when the record cannot be read. */
async function shutdownEvent(log: EventLog, responseId: string, last: number, snapshot: () => Promise<ResponseObject | null>): Promise<StreamEvent> {
  const message = `This router instance is shutting down, so this stream ends here. The background response may still finish: retrieve it with GET /v1/responses/${responseId}, or resume its stream with ?stream=true&starting_after=${last}.`;
  const [stored, recorded] = await Promise.all([snapshot().catch(() => null), log.read(responseId, -1).catch(() => [])]);
  if (!stored) return emitted({ type: "error", code: "server_shutting_down", message, param: null, sequence_number: last + 1 });
  const items = finishedItems(recorded);
  const response: ResponseObject = { ...failedResponse(stored, { code: "server_shutting_down", message }), output: items.length > 0 ? items : stored.output };
  return terminalEvent(response, last + 1);
}

/** How long a stream of an already finished response waits for a terminal event that is not in the log. */
const FINISHED_GRACE_MS = 2_000;
