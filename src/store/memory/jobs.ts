import type { Logger } from "pino";
import { settlesWithin } from "../settles-within.js";
import { JobAbortedError, StoreUnavailableError, type BackgroundJob, type JobHandler, type JobHooks, type JobQueue } from "../types.js";

interface Running {
  controller: AbortController;
  done: Promise<void>;
}

/**
 * An in-process job queue with the JobQueue contract: FIFO, at most `concurrency`
 * handlers at once, cancel by responseId. Jobs never outlive the process: close()
 * drops queued jobs and aborts running ones ("shutdown") after the deadline.
 */
export class MemoryJobQueue implements JobQueue {
  private readonly queued: BackgroundJob[] = [];
  private readonly running = new Map<string, Running>();
  /** responseId -> expiry of its cancel mark, so a cancelled job queued later is skipped too. */
  private readonly cancelled = new Map<string, number>();
  private handler: JobHandler | null = null;
  private hooks: JobHooks = {};
  private concurrency = 1;
  private closing = false;
  private closed: Promise<void> | null = null;

  constructor(private readonly opts: { cancelTtlMs?: number; logger?: Logger } = {}) {}

  async enqueue(job: BackgroundJob): Promise<void> {
    if (this.closing) throw new StoreUnavailableError("the job queue is shutting down");
    if (this.running.has(job.responseId) || this.queued.some((q) => q.responseId === job.responseId)) return;
    this.queued.push({ responseId: job.responseId, payload: jsonCopy(job.payload) });
    this.pump();
  }

  start(handler: JobHandler, concurrency: number, hooks: JobHooks = {}): void {
    if (this.handler) throw new Error("job queue already started");
    this.handler = handler;
    this.hooks = hooks;
    this.concurrency = Math.max(1, Math.floor(concurrency));
    this.pump();
  }

  async cancel(responseId: string): Promise<void> {
    this.sweepCancelled();
    this.cancelled.set(responseId, Date.now() + (this.opts.cancelTtlMs ?? 3_600_000));
    const i = this.queued.findIndex((q) => q.responseId === responseId);
    if (i >= 0) this.queued.splice(i, 1);
    this.running.get(responseId)?.controller.abort(new JobAbortedError("cancelled"));
  }

  async waitingCount(): Promise<number> {
    return this.queued.length;
  }

  close(deadlineMs = 10_000): Promise<void> {
    this.closed ??= this.shutdown(deadlineMs);
    return this.closed;
  }

  private async shutdown(deadlineMs: number): Promise<void> {
    this.closing = true;
    if (this.queued.length > 0) {
      const dropped = this.queued.splice(0).map((q) => q.responseId);
      this.opts.logger?.warn({ dropped }, "job queue closing: dropping queued background jobs");
      // They will never run: let the service mark them failed rather than leave them queued.
      for (const id of dropped) {
        await Promise.resolve(this.hooks.onAbandoned?.(id, "the router instance shut down before the job started")).catch((err: unknown) =>
          this.opts.logger?.error({ err, responseId: id }, "cannot report a dropped background job"),
        );
      }
    }
    const all = () => Promise.all([...this.running.values()].map((r) => r.done));
    if (await settlesWithin(all(), deadlineMs)) return;
    for (const r of this.running.values()) r.controller.abort(new JobAbortedError("shutdown"));
    await settlesWithin(all(), 2_000);
  }

  private pump(): void {
    const handler = this.handler;
    if (!handler || this.closing) return;
    while (this.running.size < this.concurrency && this.queued.length > 0) {
      const job = this.queued.shift()!;
      if (this.isCancelled(job.responseId)) continue;
      const controller = new AbortController();
      const ctx = { ...job, attempt: 1, redelivered: false, stalls: 0 };
      const done = Promise.resolve()
        .then(() => handler(ctx, controller.signal))
        .catch((err: unknown) => this.opts.logger?.error({ err, responseId: job.responseId }, "background job failed"))
        .finally(() => {
          this.running.delete(job.responseId);
          this.pump();
        });
      this.running.set(job.responseId, { controller, done });
    }
  }

  private isCancelled(responseId: string): boolean {
    const until = this.cancelled.get(responseId);
    return until !== undefined && until > Date.now();
  }

  private sweepCancelled(): void {
    const now = Date.now();
    for (const [id, until] of this.cancelled) if (until <= now) this.cancelled.delete(id);
  }
}

/** Payloads travel as JSON in Redis mode; copying them the same way keeps both adapters alike. */
function jsonCopy(value: unknown): unknown {
  return value === undefined ? undefined : JSON.parse(JSON.stringify(value));
}
