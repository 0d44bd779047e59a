/**
 * An upstream's 2xx body (`UpstreamBody`), fed by undici's dispatch handler (client.ts) with no
 * Node stream in between: what one socket read brought (undici hands its HTTP chunks over one by
 * one) is pushed to its consumer as one chunk once the read is over, and the consumer may pause
 * it (its client is full) or have it read whole.
 */
import { AsyncResource } from "node:async_hooks";

/** What reads an upstream body as it arrives (`UpstreamBody.attach`). */
export interface BodyConsumer {
  /** One upstream read. The consumer may `pause()` the body in here (its client is full). */
  onChunk(chunk: Buffer): void;
  /** The body is complete. */
  onEnd(): void;
  /** The body broke (upstream error, timeout) or was aborted (the caller's signal): no more calls follow. */
  onError(err: unknown): void;
}

/** What the body needs of the upstream call that feeds it (client.ts). */
export interface BodySource {
  /** Lets the upstream read go on after `push` returned false. */
  resume(): void;
  /** Stops the upstream call; its error comes back through `fail` (ignored by then). */
  abort(err: Error): void;
  /** The body is done with, however (ended, broke, released): the caller's abort listener goes. */
  finished(): void;
}

/** Bytes held for a consumer that has not attached yet before the upstream read pauses (a Node stream's default). */
const HIGH_WATER = 64 * 1024;
/** What `dump` reads before it rather aborts the call (undici's own limit). */
const DUMP_LIMIT = 128 * 1024;

const OPEN = 0;
/** The upstream sent its last byte (some may still be held for the consumer). */
const COMPLETE = 1;
/** The upstream broke; the error waits behind the held chunks. */
const FAILED = 2;
/** Nothing more reaches the consumer. */
const DONE = 3;

/**
 * A 2xx upstream body, fed by the client's dispatch handler one read at a time, with no Node
 * stream in between (no emitReadable, nextTick or promise per chunk). A consumer attaches
 * once and is called back in a microtask after each socket read, with everything that read
 * brought as one chunk: undici hands over a chunked body one HTTP chunk at a time, and an
 * upstream that writes faster than the router reads (a fast model, a busy router) fills one
 * socket read with hundreds of them, each of which would otherwise cost the consumer a parse
 * and a client write of its own. Reads that arrived before the consumer, or while it is paused
 * (its client is full), are held (up to HIGH_WATER, then the upstream read waits). Callbacks run
 * in the async context of the code that attached, so log lines written from them carry that
 * request's fields, not those of whoever opened the socket.
 */
export class UpstreamBody implements AsyncIterable<Buffer> {
  private state = OPEN;
  private held: Buffer[] = [];
  private heldBytes = 0;
  private error: unknown = undefined;
  private consumer: BodyConsumer | null = null;
  /** The async context the consumer attached in (AsyncLocalStorage.snapshot costs ~60x more). */
  private scope: AsyncResource | null = null;
  private paused = false;
  /** The upstream read is paused (push returned false). */
  private stalled = false;
  private delivering = false;
  /** A microtask will deliver what this socket read brought. */
  private scheduled = false;
  /** The upstream call is over (complete or failed), whatever the consumer did. */
  private upstreamEnded = false;

  constructor(private readonly source: BodySource) {}

  // ---- the upstream side (client.ts) ----

  /** One upstream chunk; false pauses the upstream until `source.resume()`. */
  push(chunk: Buffer): boolean {
    // undici may hand over an empty read when its parser resumes at the end of a body span; held
    // or delivered, it would pause the read again at the same place, and so forever.
    if (this.state !== OPEN || chunk.length === 0) return true;
    this.held.push(chunk);
    this.heldBytes += chunk.length;
    // undici parses a whole socket read in one turn: what it brings is delivered once that turn is over.
    if (this.consumer !== null && !this.paused && !this.scheduled) {
      this.scheduled = true;
      queueMicrotask(this.deliverRead);
    }
    this.stalled = this.paused || this.heldBytes >= HIGH_WATER;
    return !this.stalled;
  }

  private readonly deliverRead = (): void => {
    this.scheduled = false;
    this.deliver();
  };

  complete(): void {
    this.upstreamEnded = true;
    if (this.state !== OPEN) return;
    this.state = COMPLETE;
    this.deliver();
  }

  fail(err: unknown): void {
    this.upstreamEnded = true;
    if (this.state !== OPEN) return;
    this.state = FAILED;
    this.error = err;
    this.deliver();
  }

  // ---- the consumer side ----

  /** Reads the body: held reads are delivered at once, in this turn. Only one consumer ever. */
  attach(consumer: BodyConsumer): void {
    if (this.consumer) throw new Error("upstream body already read");
    this.consumer = consumer;
    this.scope = new AsyncResource("UpstreamBody");
    this.deliver();
  }

  pause(): void {
    this.paused = true;
  }

  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.deliver();
  }

  /**
   * The consumer stops reading early (the protocol's end: [DONE], a terminal event). The
   * consumer is not called again. A body whose end is already here is simply dropped; one
   * still coming aborts the call (the connection cannot be reused before its end), but only
   * after the upstream read in progress: a body whose end came in the same socket read as
   * [DONE] has it by the time the consumer stops (it is dropped then, not aborted: an abort
   * costs an error with a stack trace and the connection).
   */
  release(): void {
    if (this.state === DONE) return;
    const open = this.state === OPEN;
    this.finish();
    if (open) queueMicrotask(() => this.abortUnended());
  }

  /** Drops the body unread (nobody will read it); like `release`. */
  destroy(): void {
    this.release();
  }

  /**
   * The caller's signal aborted: the call stops, held reads are dropped and the consumer gets
   * `reason` at once, paused or not (one that attaches later gets it then).
   */
  abort(reason: unknown): void {
    if (this.state === DONE) return;
    const open = this.state === OPEN;
    this.state = FAILED;
    this.error = reason;
    this.held.length = 0;
    this.heldBytes = 0;
    this.paused = false;
    if (open) this.source.abort(abortError(reason));
    this.deliver();
  }

  /** The whole body as UTF-8 text. */
  text(): Promise<string> {
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      this.attach({
        onChunk: (c) => chunks.push(c),
        onEnd: () => resolve(chunks.length === 1 ? chunks[0]!.toString("utf8") : Buffer.concat(chunks).toString("utf8")),
        onError: reject,
      });
    });
  }

  /** Reads and discards the body (up to DUMP_LIMIT, then the call is aborted); never rejects. */
  dump(): Promise<void> {
    return new Promise((resolve) => {
      let bytes = 0;
      this.attach({
        onChunk: (c) => {
          bytes += c.length;
          if (bytes > DUMP_LIMIT) {
            this.release();
            resolve();
          }
        },
        onEnd: resolve,
        onError: () => resolve(),
      });
    });
  }

  /** The reads one by one (for callers that await; the hot paths attach instead). Stopping early releases the body. */
  [Symbol.asyncIterator](): AsyncIterator<Buffer> {
    const queue: Buffer[] = [];
    let ended = false;
    let error: unknown = undefined;
    let waiter: { resolve(r: IteratorResult<Buffer>): void; reject(e: unknown): void } | null = null;
    const wake = () => {
      if (!waiter) return;
      const w = waiter;
      if (queue.length > 0) {
        waiter = null;
        w.resolve({ value: queue.shift()!, done: false });
      } else if (error !== undefined) {
        waiter = null;
        w.reject(error);
      } else if (ended) {
        waiter = null;
        w.resolve({ value: undefined, done: true });
      }
    };
    this.attach({
      onChunk: (c) => {
        queue.push(c);
        this.pause();
        wake();
      },
      onEnd: () => {
        ended = true;
        wake();
      },
      onError: (err) => {
        error = err ?? new Error("upstream body failed");
        wake();
      },
    });
    return {
      next: () =>
        new Promise<IteratorResult<Buffer>>((resolve, reject) => {
          waiter = { resolve, reject };
          wake();
          if (waiter && queue.length === 0) this.resume();
        }),
      return: () => {
        this.release();
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }

  /** Hands held reads, then the end or the error, to the consumer while it is not paused. */
  private deliver(): void {
    if (!this.consumer || this.delivering || this.state === DONE) return;
    this.delivering = true;
    try {
      this.scope!.runInAsyncScope(() => {
        const consumer = this.consumer!;
        while (this.held.length > 0 && !this.paused && this.state !== DONE) {
          const held = this.held;
          const chunk = held.length === 1 ? held[0]! : Buffer.concat(held, this.heldBytes);
          this.held = [];
          this.heldBytes = 0;
          consumer.onChunk(chunk);
        }
        if (this.paused || this.state === DONE || this.held.length > 0) return;
        if (this.state === COMPLETE) {
          this.finish();
          consumer.onEnd();
        } else if (this.state === FAILED) {
          this.finish();
          consumer.onError(this.error);
        }
      });
    } finally {
      this.delivering = false;
    }
    if (this.stalled && this.state === OPEN && !this.paused && this.heldBytes < HIGH_WATER) {
      this.stalled = false;
      this.source.resume();
    }
  }

  private abortUnended(): void {
    if (!this.upstreamEnded) this.source.abort(new DOMException("the upstream body was not read to its end", "AbortError"));
  }

  private finish(): void {
    this.state = DONE;
    this.held.length = 0;
    this.heldBytes = 0;
    // The consumer (and through it the request's translation, sink and response) is let go at
    // once: the body may outlive the request (the upstream call's handler keeps it), and a
    // body that reached old space would keep every young object the consumer holds alive
    // through each young-generation collection.
    if (this.consumer) this.consumer = FINISHED;
    this.scope = null;
    this.source.finished();
  }
}

/** The consumer of a finished body: never called, it only marks the body as read. */
const FINISHED: BodyConsumer = { onChunk() {}, onEnd() {}, onError() {} };

/** undici aborts with an Error; a reason that is not one (a string) is carried by an AbortError. */
export function abortError(reason: unknown): Error {
  return reason instanceof Error ? reason : new DOMException(String(reason ?? "This operation was aborted"), "AbortError");
}
