import type { ServerResponse } from "node:http";
import type { Socket } from "node:net";

/**
 * Once an event-loop turn has written something, what it writes after that (other answers, a
 * stream's later events and its end) leaves together at the turn's end (its check phase:
 * setImmediate). The bytes and the system calls are the same, one write per answer at most;
 * what changes is when they go. Under load one turn finishes many answers (a socket read brings
 * several upstream replies), and written back to back they find their readers awake: a client
 * or proxy on the same machine (a sidecar, a load balancer, the bench's load generator) is woken
 * about once per turn instead of once per answer, and its next requests come back in bursts the
 * router reads in one turn. The turn's first write goes at once: one JSON answer at a time never
 * waits, nor does a stream's first read of events. What waits, waits for the rest of the turn
 * it was made in, work that was already running (under load, other requests'; alone, its own
 * store and accounting: at concurrency 1 a stream's end comes 10-25 us later, BENCHMARKS.md).
 *
 * The queue is the process's, as the event loop is: every app in the process shares its one
 * turn end.
 */
/** Marks a socket corked by `holdThisTurn` until the turn's end (one cork per socket and turn). */
const HELD = Symbol("held this turn");
type HeldSocket = Socket & { [HELD]?: boolean };
/** Marks an answer whose end is queued: it is decided, though Node has not taken its head yet. */
const QUEUED = Symbol("end queued");
type QueuedResponse = ServerResponse & { [QUEUED]?: boolean };

const ending: ServerResponse[] = [];
const bodies: (string | undefined)[] = [];
const held: HeldSocket[] = [];
/** Something was written this turn: what follows waits for the turn's end. */
let due = false;

/** `out.end(body)`, now if it is the turn's first write, else at the end of this turn. The caller has set the status and headers. */
export function endThisTurn(out: ServerResponse, body?: string): void {
  if (firstOfTurn()) {
    out.end(body);
    return;
  }
  (out as QueuedResponse)[QUEUED] = true;
  ending.push(out);
  bodies.push(body);
}

/** True once the answer on `out` is decided: its head is out, or its end is queued for this turn. */
export function answered(out: ServerResponse): boolean {
  return out.headersSent || (out as QueuedResponse)[QUEUED] === true;
}

/** True once `out` has ended, or its end is queued for this turn's end. */
export function ended(out: ServerResponse): boolean {
  return out.writableEnded || (out as QueuedResponse)[QUEUED] === true;
}

/** Keeps what is written to `out` from now on in its socket until the end of this turn, unless it is the turn's first write. */
export function holdThisTurn(out: ServerResponse): void {
  const socket = out.socket as HeldSocket | null;
  if (socket === null || socket[HELD] === true || firstOfTurn()) return;
  socket[HELD] = true;
  socket.cork();
  held.push(socket);
}

/** True for the turn's first write (the turn's end is scheduled then), false after it. */
function firstOfTurn(): boolean {
  if (due) return false;
  due = true;
  setImmediate(release);
  return true;
}

function release(): void {
  due = false;
  // Ends first: Node's `end` uncorks its socket fully, so a held stream's last events and its
  // end leave in one write.
  for (let i = 0; i < ending.length; i++) {
    const out = ending[i]!;
    if (out.writableEnded || out.destroyed) continue;
    try {
      out.end(bodies[i]);
    } catch {
      // A write that throws (a socket in a state Node refuses) ends that answer only.
      out.destroy();
    }
  }
  ending.length = 0;
  bodies.length = 0;
  for (let i = 0; i < held.length; i++) {
    const socket = held[i]!;
    socket[HELD] = false;
    socket.uncork();
  }
  held.length = 0;
}
