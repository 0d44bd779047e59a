/**
 * The recorded event stream of background responses: the sink a job writes through,
 * the terminal events the router writes itself, and the SSE body that follows a log.
 */
import { sseBody, type EventSink, type StreamBody } from "../../wire/sse-writer.js";
import { EventOrderError, isTerminalEvent, type EventLog } from "../../store/types.js";
import { isFinished, TERMINAL_EVENT_FOR_STATUS } from "../../wire/protocol.js";
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
 * The log's terminal event as the record says it: exactly one, after the last event sent.
 * A final record whose log lacks its terminal event (a failover lost the append, or its
 * writer stopped between the two steps) gets one derived from the record; a terminal event
 * whose status disagrees with the record (it never should) is replaced by the record's.
 */
export function recordTerminal(logged: StreamEvent | undefined, finished: ResponseObject, last: number): { event: StreamEvent; derived: boolean } {
  const status = (logged?.response as { status?: unknown } | undefined)?.status;
  if (logged && (status === undefined || status === finished.status)) return { event: logged, derived: false };
  return { event: terminalEvent(finished, logged?.sequence_number ?? last + 1), derived: true };
}

/** Where a follower reads the response's record: the finished record it ends with, and the instance's shutdown. */
export interface FollowRecord {
  /** The stored response, or null when it is gone. */
  read(): Promise<ResponseObject | null>;
  /** Adds a derived terminal event to a log that lacks it (best effort), so the log agrees with the record. */
  repair(event: StreamEvent): Promise<void>;
  deadline?: Deadline;
}

/**
 * A text/event-stream body that follows a response's recorded events after `afterSeq`
 * until its terminal event, always exactly one, the record's (see recordTerminal).
 * `finished`: the response already ended, so the log is read to its end (never waited on).
 * A live follower whose log stays quiet for FOLLOW_IDLE_MS asks the record: once it is
 * final, the follower reads the rest of the log and ends, with the terminal event derived
 * from the record when the log lacks it. The log is read no faster than the client takes
 * the events (the sink's backlog). A store that fails mid-way ends the stream with an
 * `error` event; the client can resume with `starting_after` once the store is back. At this
 * instance's shutdown deadline the stream ends with `response.failed`
 * (`server_shutting_down`, the finished items so far); its message says the job may still
 * finish (background.drain_timeout, or another instance) and where to resume.
 */
export function followBody(log: EventLog, responseId: string, afterSeq: number, finished: ResponseObject | null, onStoreError: () => void, record: FollowRecord): StreamBody {
  const stop = new AbortController();
  return sseBody(
    async (sink) => {
      let last = afterSeq;
      let ended = false;
      let cut = false;
      let final = finished;
      const send = async (event: StreamEvent) => {
        sink.send(event.type, JSON.stringify(event));
        sink.flush?.();
        last = Math.max(last, event.sequence_number);
        ended = isTerminalEvent(event);
        // A client that reads slower than the log holds the follower, not the router's memory.
        const backlog = sink.backlog?.();
        if (backlog) await backlog;
      };
      const onDeadline = () => {
        cut = true;
        stop.abort();
      };
      const deadlineSlot = record.deadline ? record.deadline.listen(onDeadline) : -1;
      // Quiet: how long the follower has waited on the log (not on the client) for its next event.
      let waiting = false;
      let quietSince = Date.now();
      let asking = false;
      const watch = setInterval(() => {
        if (!waiting || asking || stop.signal.aborted) return;
        // A finished response's log is read to its end, never waited on: a read that has waited is at the end.
        if (finished) {
          if (Date.now() - quietSince >= FINISHED_QUIET_MS) stop.abort();
          return;
        }
        if (Date.now() - quietSince < FOLLOW_IDLE_MS) return;
        asking = true;
        record
          .read()
          .then((r) => {
            if (r && isFinished(r.status) && !stop.signal.aborted) {
              final = r;
              stop.abort();
            }
          })
          .catch(() => {})
          .finally(() => {
            asking = false;
            quietSince = Date.now();
          });
      }, FINISHED_QUIET_MS / 2);
      try {
        const events = log.follow(responseId, afterSeq, stop.signal)[Symbol.asyncIterator]();
        for (;;) {
          waiting = true;
          quietSince = Date.now();
          const next = await events.next();
          waiting = false;
          if (next.done) break;
          const event = next.value;
          if (isTerminalEvent(event)) {
            // The record is written before its terminal event: read it to check the two agree.
            const now = final ?? (await record.read().catch(() => null));
            if (now && isFinished(now.status)) final = now;
            else return await send(event);
            await events.return?.();
            break;
          }
          await send(event);
        }
        if (cut && !ended && record.deadline) return await send(await shutdownEvent(log, responseId, last, record.read));
        if (final && !ended) await finishFrom(log, responseId, final, last, send, record);
      } catch (err) {
        onStoreError();
        const message = `The router's event store failed while streaming this response (${(err as Error).message}); resume with starting_after=${last}.`;
        const error = emitted({ type: "error", code: "store_unavailable", message, param: null, sequence_number: last + 1 });
        sink.send("error", JSON.stringify(error));
      } finally {
        clearInterval(watch);
        record.deadline?.forget(deadlineSlot);
      }
    },
    () => stop.abort(),
  );
}

/**
 * The rest of a finished response's stream after `last`: its recorded events up to its
 * terminal event, which is the record's (derived, and added to the log, when the log lacks
 * it). A client resuming after the terminal event gets nothing more.
 */
async function finishFrom(log: EventLog, responseId: string, finished: ResponseObject, last: number, send: (e: StreamEvent) => Promise<void>, record: FollowRecord): Promise<void> {
  let logged: StreamEvent | undefined;
  for (const event of await log.read(responseId, last)) {
    if (isTerminalEvent(event)) {
      logged = event;
      break;
    }
    await send(event);
    last = event.sequence_number;
  }
  // Nothing after `last`: the client may already have had the end (it resumes after it).
  if (!logged && (await log.read(responseId, -1)).some((e) => isTerminalEvent(e) && e.sequence_number <= last)) return;
  const { event, derived } = recordTerminal(logged, finished, last);
  await send(event);
  // Off the client's path: during a failover the repair waits for the store.
  if (derived && !logged) void record.repair(event).catch(() => {});
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

/** How long a live follower's log may stay quiet before it asks whether the record has finished. */
const FOLLOW_IDLE_MS = 1_000;
/** A finished response's log read that waited this long found its end (a log with more answers at once). */
const FINISHED_QUIET_MS = 200;
