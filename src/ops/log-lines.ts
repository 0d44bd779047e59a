/**
 * JSON log lines on stdout, written in batches through `process.stdout`.
 *
 * A busy router logs a line per request. A write system call per line was ~3% of a small
 * request's CPU, so lines wait at most LOG_FLUSH_MS (or until LOG_BATCH_CHARS are pending) and
 * go out as one write. They go through process.stdout, not an asynchronous file write: on a
 * pipe (a container's stdout) that is libuv's non-blocking write, one system call on the
 * event loop's thread; a file or /dev/null is written synchronously. pino's asynchronous
 * destination hands every batch to the thread pool instead, and the hand-off (a worker woken,
 * its completion signalled back) cost more than the write: ~15 us per request, measured.
 *
 * A pipe nobody reads fills up; its writes then wait in memory. Past LOG_MAX_PENDING_CHARS
 * waiting, new batches are dropped, and the next batch that goes out starts with a line
 * saying how many lines were lost, so a stalled log collector costs lines, not the router's
 * memory or its event loop. Whatever is pending is handed to stdout when the process exits.
 */
import type { Writable } from "node:stream";

/** A batch is handed to stdout once this many characters are pending. */
const LOG_BATCH_CHARS = 4096;

/** The longest a log line waits in the batch before it is written. */
export const LOG_FLUSH_MS = 100;

/** Characters waiting in stdout's own buffer (its reader is behind) past which batches are dropped. */
export const LOG_MAX_PENDING_CHARS = 8 * 1024 * 1024;

/** Where batches go: process.stdout, or a test's stream. */
export type LineOut = Pick<Writable, "write" | "writableLength">;

/** The line that says `dropped` lines were lost (in the logger's own format). */
export type DroppedNotice = (dropped: number) => string;

/**
 * Lines kept in an array and handed to stdout joined, once per batch. (sonic-boom's own
 * batching appended each line to a growing string and measured its byte length at every write,
 * which flattened it: ~4 KB allocated per line at a 4 KB batch.)
 */
export class LineBatch {
  private lines: string[] = [];
  private chars = 0;
  private timer: NodeJS.Timeout | null = null;
  /** Lines dropped since the last batch that went out. */
  private dropped = 0;
  /** Batches handed to `out` that it has not taken yet, and who waits for them (flush). */
  private inFlight = 0;
  private waiters: (() => void)[] = [];

  constructor(
    private readonly out: LineOut,
    private readonly notice: DroppedNotice,
    private readonly maxPending = LOG_MAX_PENDING_CHARS,
  ) {}

  write(line: string): boolean {
    this.lines.push(line);
    this.chars += line.length;
    if (this.chars >= LOG_BATCH_CHARS) this.hand();
    else if (this.timer === null) {
      this.timer = setTimeout(this.onTimer, LOG_FLUSH_MS);
      this.timer.unref();
    }
    return true;
  }

  /** pino's `logger.flush(cb)`: the pending lines handed over, `cb` once stdout took them. */
  flush(cb?: (err?: Error) => void): void {
    this.hand();
    if (!cb) return;
    if (this.inFlight === 0) cb();
    else this.waiters.push(() => cb());
  }

  /** At exit: the pending lines handed to stdout (written at once unless its reader is behind). */
  flushSync(): void {
    this.hand();
  }

  private readonly onTimer = (): void => {
    this.timer = null;
    this.hand();
  };

  private hand(): void {
    if (this.timer !== null) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    const count = this.lines.length;
    if (count === 0) return;
    let text = count === 1 ? this.lines[0]! : this.lines.join("");
    this.lines = [];
    this.chars = 0;
    if (stdoutBroken) return;
    if (this.out.writableLength > this.maxPending) {
      this.dropped += count;
      return;
    }
    if (this.dropped > 0) {
      text = this.notice(this.dropped) + text;
      this.dropped = 0;
    }
    this.inFlight++;
    this.out.write(text, this.onWritten);
  }

  private readonly onWritten = (): void => {
    if (--this.inFlight > 0 || this.waiters.length === 0) return;
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  };
}

/** The batches of stdout lines still open: handed over when the process exits. */
const pending = new Set<LineBatch>();
let hooked = false;
/** stdout's reader went away (EPIPE): nothing more can be written. */
let stdoutBroken = false;

/** A batch of stdout lines, handed over when the process exits with the others. */
export function stdoutLines(notice: DroppedNotice): LineBatch {
  // One exit hook and one error listener for every batch (a process that builds several
  // routers, tests, would otherwise add a listener each).
  if (!hooked) {
    hooked = true;
    // A closed pipe: the error would otherwise be thrown from the stream, taking the router down with its log.
    process.stdout.on("error", () => {
      stdoutBroken = true;
    });
    process.once("exit", () => {
      for (const batch of pending) batch.flushSync();
    });
  }
  const lines = new LineBatch(process.stdout, notice);
  pending.add(lines);
  return lines;
}
