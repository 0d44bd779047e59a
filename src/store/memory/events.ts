import { EventEmitter } from "node:events";
import type { StreamEvent } from "../../wire/types.js";
import { EventOrderError, isTerminalEvent, type EventLog } from "../types.js";
import type { LruLimits } from "./lru.js";
import { empty, Linked, linkLast, unlink } from "./recency-list.js";

/** One response's log, in a list of the logs from the oldest created to the newest. */
class Recorded extends Linked<Recorded> {
  events: string[] = [];
  lastSeq = -Infinity;
  bytes = 0;
  expiresAt = 0;
  constructor(readonly id: string) {
    super();
  }
}

/**
 * Stream events in process memory. Each response's log expires ttlMs after its last
 * append; the oldest logs are dropped when there are more than maxEntries of them or
 * they hold more than maxBytes. Live followers are woken through an EventEmitter.
 */
export class MemoryEventLog implements EventLog {
  private readonly logs = new Map<string, Recorded>();
  /** The list's sentinel: `oldest.next` is the oldest log (eviction walks it, recency-list.ts). */
  private readonly oldest = new Recorded("");
  private readonly emitter = new EventEmitter();
  private bytes = 0;

  constructor(
    private readonly opts: LruLimits & { ttlMs: number; now?: () => number },
  ) {
    this.emitter.setMaxListeners(0);
  }

  private now(): number {
    return (this.opts.now ?? Date.now)();
  }

  private live(responseId: string): Recorded | null {
    const log = this.logs.get(responseId);
    if (!log) return null;
    if (log.expiresAt <= this.now()) {
      this.drop(log);
      return null;
    }
    return log;
  }

  private drop(log: Recorded): void {
    this.logs.delete(log.id);
    unlink(log);
    this.bytes -= log.bytes;
  }

  async append(responseId: string, event: StreamEvent): Promise<void> {
    let log = this.live(responseId);
    if (log && event.sequence_number <= log.lastSeq) throw new EventOrderError(responseId, event.sequence_number);
    if (!log) {
      log = new Recorded(responseId);
      this.logs.set(responseId, log);
      linkLast(this.oldest, log);
    }
    const json = JSON.stringify(event);
    log.events.push(json);
    log.lastSeq = event.sequence_number;
    log.bytes += json.length;
    log.expiresAt = this.now() + this.opts.ttlMs;
    this.bytes += json.length;
    this.evict(responseId);
    this.emitter.emit(responseId, json);
  }

  async appendIfExists(responseId: string, event: StreamEvent): Promise<boolean> {
    if (!this.live(responseId)) return false;
    await this.append(responseId, event);
    return true;
  }

  async read(responseId: string, afterSeq: number): Promise<StreamEvent[]> {
    const log = this.live(responseId);
    if (!log) return [];
    const out: StreamEvent[] = [];
    for (const json of log.events) {
      const event = JSON.parse(json) as StreamEvent;
      if (event.sequence_number > afterSeq) out.push(event);
    }
    return out;
  }

  async *follow(responseId: string, afterSeq: number, signal: AbortSignal): AsyncIterable<StreamEvent> {
    if (signal.aborted) return;
    const pending: string[] = [];
    let wake: (() => void) | null = null;
    const onEvent = (json: string) => {
      pending.push(json);
      wake?.();
    };
    const onAbort = () => wake?.();
    // Subscribe before reading so nothing appended in between is missed (duplicates are skipped by sequence).
    this.emitter.on(responseId, onEvent);
    signal.addEventListener("abort", onAbort);
    try {
      let last = afterSeq;
      for (const event of await this.read(responseId, afterSeq)) {
        if (signal.aborted) return;
        last = event.sequence_number;
        yield event;
        if (isTerminalEvent(event)) return;
      }
      while (!signal.aborted) {
        const json = pending.shift();
        if (json === undefined) {
          await new Promise<void>((resolve) => (wake = resolve));
          wake = null;
          continue;
        }
        const event = JSON.parse(json) as StreamEvent;
        if (event.sequence_number <= last) continue;
        last = event.sequence_number;
        yield event;
        if (isTerminalEvent(event)) return;
      }
    } finally {
      this.emitter.off(responseId, onEvent);
      signal.removeEventListener("abort", onAbort);
    }
  }

  async delete(responseId: string): Promise<void> {
    const log = this.logs.get(responseId);
    if (log) this.drop(log);
  }

  async close(): Promise<void> {
    this.logs.clear();
    empty(this.oldest);
    this.bytes = 0;
  }

  /** Drops expired logs, then the oldest ones, until within limits (never the one just written). */
  private evict(keep: string): void {
    const now = this.now();
    for (let log = this.oldest.next; log !== this.oldest; ) {
      const next = log.next;
      const over = this.logs.size > this.opts.maxEntries || this.bytes > this.opts.maxBytes;
      if (!over && log.expiresAt > now) break;
      if (log.id !== keep) this.drop(log);
      log = next;
    }
  }
}
