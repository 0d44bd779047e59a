import { Slots } from "../ops/slots.js";

/** The reason streams end at the shutdown deadline. */
export class ShutdownDeadline extends Error {
  readonly code = "server_shutting_down";
  constructor() {
    super("The router is shutting down: this stream was ended at its shutdown deadline. Retry the request.");
    this.name = "ShutdownDeadline";
  }
}

/**
 * The shutdown deadline (server.shutdown_timeout) as the requests and streams still running
 * at it see it: whether it has passed, and what each of them does when it passes. Every
 * request registers while it runs, so the callbacks wait in Slots rather than as listeners
 * of an AbortSignal (ops/slots.ts says why).
 */
export class Deadline {
  private readonly callbacks = new Slots<() => void>();
  private why: ShutdownDeadline | null = null;

  /** Set once the deadline has passed. */
  get reason(): ShutdownDeadline | null {
    return this.why;
  }

  /** Runs `fn` when the deadline passes (at once when it has); the slot to give to `forget`, once. */
  listen(fn: () => void): number {
    if (this.why) {
      fn();
      return -1;
    }
    return this.callbacks.add(fn);
  }

  forget(slot: number): void {
    if (slot >= 0) this.callbacks.remove(slot);
  }

  /** The deadline passes: every callback runs, once; one that throws is reported to `onError` and keeps no other from running. */
  pass(onError: (err: unknown) => void): void {
    if (this.why) return;
    this.why = new ShutdownDeadline();
    this.callbacks.forEach((fn) => {
      try {
        fn();
      } catch (err) {
        onError(err);
      }
    });
  }
}
