import type { NodeOutgoing } from "./context.js";

/**
 * How long a stream's headers wait for its first events to share their write. writeHead only
 * stores them (`headersSent` is true from then on); they leave with the first write. Under
 * load the first events (response.created; a native upstream's first read) come within this
 * and one write carries everything; a slow first event (a chat pass-through's prefill) must
 * not keep the client without headers.
 */
export const HEADERS_WAIT_MS = 50;

/** A stream's headers waiting for its first write; `out` is null once they need no flush. */
export interface HeadersWait {
  out: NodeOutgoing | null;
  readonly due: number;
}

/**
 * Waiting streams in the order they started: every stream waits the same time, so the queue is
 * also in order of when each is due, and one timer (for the head) serves all of them instead of a
 * timer set and cleared per stream. A stream whose first write came stays queued, emptied, until
 * its time; an emptied entry holds no reference to its response.
 */
const queue: HeadersWait[] = [];
let head = 0;
let timer: NodeJS.Timeout | undefined;

/** Flushes `out`'s headers HEADERS_WAIT_MS from now unless `headersGone` is called first. */
export function waitForFirstWrite(out: NodeOutgoing): HeadersWait {
  const wait: HeadersWait = { out, due: performance.now() + HEADERS_WAIT_MS };
  queue.push(wait);
  if (timer === undefined) timer = setTimeout(flushDue, HEADERS_WAIT_MS).unref(); // an open stream keeps the process up itself
  return wait;
}

/** The stream wrote (its headers went with it), ended or closed: its headers need no flush. */
export function headersGone(wait: HeadersWait): void {
  wait.out = null;
}

function flushDue(): void {
  timer = undefined;
  const now = performance.now();
  while (head < queue.length && queue[head]!.due <= now) {
    const wait = queue[head++]!;
    const out = wait.out;
    wait.out = null;
    if (out !== null && !out.writableEnded && !out.destroyed) out.flushHeaders();
  }
  if (head === queue.length) {
    queue.length = 0;
    head = 0;
    return;
  }
  // Drop the flushed head now and then rather than shifting on every flush.
  if (head > 1024) {
    queue.splice(0, head);
    head = 0;
  }
  timer = setTimeout(flushDue, Math.max(1, Math.ceil(queue[head]!.due - now))).unref();
}
