import { Slots } from "../ops/slots.js";

/**
 * SSE comment lines (`: keepalive`) on a stream that has been silent for a while: a tool call
 * between model rounds, a long prefill or a reasoning model thinking can leave a stream without
 * a byte for minutes, and a proxy or load balancer in between (nginx's 60 s
 * `proxy_read_timeout`, an ALB's idle timeout) then cuts it. Every SSE client skips comment lines
 * (the openai SDKs, eventsource-parser, Codex's eventsource-stream), so events and their order
 * are untouched; a comment is only ever written between two events.
 *
 * One timer for all of an app's open streams, ticking at half the interval: a stream with no
 * write since the previous tick gets a comment, so none stays silent longer than the interval.
 * A write costs the stream a counter increment, nothing else.
 */
export const KEEPALIVE_COMMENT = ": keepalive\n\n";

/** One open stream as the keepalive sees it. */
export interface KeptAlive {
  /** Counts the stream's own writes: call on every write. */
  wrote(): void;
  /** The stream is over (ended or its client gone): forget it. */
  done(): void;
}

class Entry implements KeptAlive {
  writes = 0;
  /** `writes` as of the previous tick (none yet: a stream is not idle before its first tick). */
  seen = -1;
  /** Its place among the open streams; -1 once done. */
  slot = -1;

  constructor(
    private readonly open: Slots<Entry>,
    readonly write: (text: string) => void,
    /** False when nothing should be written now (ended, or the client is not reading). */
    readonly writable: () => boolean,
  ) {}

  wrote(): void {
    this.writes++;
  }

  done(): void {
    if (this.slot < 0) return;
    this.open.remove(this.slot);
    this.slot = -1;
  }
}

const NONE: KeptAlive = { wrote() {}, done() {} };

export class SseKeepalive {
  /** Slots, not a Set: every stream comes and goes (ops/slots.ts says why). */
  private readonly open = new Slots<Entry>();
  private timer: NodeJS.Timeout | null = null;
  private every = 0;

  /** `intervalMs()`: the configured interval, read at each tick (a reload applies from the next); 0 turns it off. */
  constructor(private readonly intervalMs: () => number) {}

  /** Starts watching a stream; `write` sends the comment, `writable` says whether it may. */
  watch(write: (text: string) => void, writable: () => boolean): KeptAlive {
    if (this.intervalMs() <= 0) return NONE;
    const entry = new Entry(this.open, write, writable);
    entry.slot = this.open.add(entry);
    this.schedule();
    return entry;
  }

  /** Streams being watched. */
  get size(): number {
    return this.open.size;
  }

  private schedule(): void {
    const every = Math.max(1, Math.floor(this.intervalMs() / 2));
    if (this.timer !== null && every === this.every) return;
    if (this.timer !== null) clearInterval(this.timer);
    this.every = every;
    this.timer = setInterval(this.tick, every);
    this.timer.unref();
  }

  private readonly tick = (): void => {
    if (this.open.size === 0 || this.intervalMs() <= 0) {
      clearInterval(this.timer!);
      this.timer = null;
      return;
    }
    this.open.forEach(visit);
    this.schedule();
  };
}

function visit(entry: Entry): void {
  const idle = entry.writes === entry.seen;
  entry.seen = entry.writes;
  // The comment counts as a write of the next period: a silent stream gets one per interval, not per tick.
  if (idle && entry.writable()) {
    entry.write(KEEPALIVE_COMMENT);
    entry.writes++;
  }
}
