import type { ServerResponse } from "node:http";
import type { Socket } from "node:net";

/**
 * Answers leave together at the end of the event-loop turn that made them (its check phase:
 * setImmediate), not each as soon as it is ready. The bytes and the system calls are the
 * same, one write per answer; what changes is when they go. Under load one turn finishes many
 * answers (a socket read brings several upstream replies), and written back to back they find
 * their readers awake: a client or proxy on the same machine (a sidecar, a load balancer, the
 * bench's load generator) is woken once per turn instead of once per answer, and its next
 * requests come back in one burst the router reads in one turn. On one request at a time the
 * turn has nothing else in it and the write goes at once; under load an answer waits at most
 * for the rest of the turn it was made in, work that was already running.
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
let due = false;

/** `out.end(body)` at the end of this turn. The caller has set the status and headers. */
export function endThisTurn(out: ServerResponse, body?: string): void {
  (out as QueuedResponse)[QUEUED] = true;
  ending.push(out);
  bodies.push(body);
  schedule();
}

/** True once the answer on `out` is decided: its head is out, or its end is queued for this turn. */
export function answered(out: ServerResponse): boolean {
  return out.headersSent || (out as QueuedResponse)[QUEUED] === true;
}

/** Keeps what is written to `out` from now on in its socket until the end of this turn. */
export function holdThisTurn(out: ServerResponse): void {
  const socket = out.socket as HeldSocket | null;
  if (socket === null || socket[HELD] === true) return;
  socket[HELD] = true;
  socket.cork();
  held.push(socket);
  schedule();
}

function schedule(): void {
  if (due) return;
  due = true;
  setImmediate(release);
}

function release(): void {
  due = false;
  // Ends first: Node's `end` uncorks its socket fully, so a held stream's last events and its
  // end leave in one write. Indexes over the live arrays: an end that queues another is served.
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
