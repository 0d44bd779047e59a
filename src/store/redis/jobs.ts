import { Queue, QueueEvents, WaitingError, Worker, type Job } from "bullmq";
import type { Logger } from "pino";
import { closeClient, createRedisClient, hashTag, loggableRedisError, redisCall, type RedisClient, type RedisTarget } from "./client.js";
import type { DurableWriter } from "./durable.js";
import { settlesWithin } from "../settles-within.js";
import {
  JobAbortedError,
  StoreUnavailableError,
  jobAbortKind,
  type BackgroundJob,
  type JobContext,
  type JobHandler,
  type JobHooks,
  type JobQueue,
} from "../types.js";

export interface RedisJobQueueOptions {
  /** Used to open the worker's, the cancel subscriber's and the queue-events connections. */
  target: RedisTarget;
  /** The shared fail-fast client: producer, cancel flags and publishing. */
  client: RedisClient;
  prefix: string;
  /** How long cancel marks live (the stores' TTL). */
  ttlMs: number;
  queueName?: string;
  /** A running job's lease; renewed every half of it while its instance lives (default 30 s). */
  lockDurationMs?: number;
  /** How often workers look for jobs whose lease expired (default 15 s). */
  stalledIntervalMs?: number;
  /** A job found stalled more than this many times is failed (default 1: re-delivered once). */
  maxStalledCount?: number;
  readyTimeoutMs?: number;
  /** storage.durability: replica - the job record is written on the writer's connections and waits for a replica before enqueue returns. */
  durable?: DurableWriter;
  logger?: Logger;
}

interface JobData extends BackgroundJob {}

const ABANDONED = /stalled more than allowable limit/i;

/**
 * BullMQ reports every failed reconnect attempt (several a second while Redis fails over):
 * one line per source every few seconds, with how many were left out, is enough.
 */
function throttledWarn(logger: Logger | undefined, msg: string, everyMs = 5_000): (err: Error) => void {
  let last = 0;
  let skipped = 0;
  return (err) => {
    const now = Date.now();
    if (now - last < everyMs) {
      skipped++;
      return;
    }
    const e = loggableRedisError(err);
    logger?.warn(skipped > 0 ? { err: e, skipped } : { err: e }, msg);
    last = now;
    skipped = 0;
  };
}

/**
 * Background jobs on BullMQ. A job's id is its responseId. BullMQ's lock (lease) is renewed
 * while the worker's process lives; when an instance dies its lock expires, another
 * instance's stalled checker puts the job back (re-delivered with `redelivered: true`),
 * and a job stalled more than maxStalledCount times is failed and reported once through
 * hooks.onAbandoned. Cancel = a flag key (skip jobs not started yet) plus a message on
 * `${prefix}cancel` that every instance subscribes to (abort running ones).
 */
export class RedisJobQueue implements JobQueue {
  private readonly queue: Queue<JobData>;
  private readonly queueName: string;
  private readonly bullPrefix: string;
  private readonly channel: string;
  /** Jobs running on this instance: the abort for cancel and hand-back, and when the run ends. */
  private readonly running = new Map<string, { controller: AbortController; ended: Promise<void> }>();
  private worker: Worker<JobData> | null = null;
  private connections: RedisClient[] = [];
  private queueEvents: QueueEvents | null = null;
  private handler: JobHandler | null = null;
  private hooks: JobHooks = {};
  private closing = false;
  private closed: Promise<void> | null = null;

  constructor(private readonly opts: RedisJobQueueOptions) {
    this.queueName = opts.queueName ?? "background";
    // BullMQ's scripts touch many keys of a queue at once: on a cluster its prefix is one hash tag.
    this.bullPrefix = hashTag(opts.client, `${opts.prefix}bull`);
    this.channel = `${opts.prefix}cancel`;
    this.producerError = throttledWarn(opts.logger, "job queue producer error");
    this.queue = this.producer(opts.client);
  }

  /** A BullMQ producer on a connection (the shared one, or a durable writer's: WAIT confirms only its own connection's writes). */
  private producer(connection: RedisClient): Queue<JobData> {
    const queue = new Queue<JobData>(this.queueName, {
      connection,
      prefix: this.bullPrefix,
      defaultJobOptions: { attempts: 1, removeOnComplete: true, removeOnFail: { age: Math.ceil(this.opts.ttlMs / 1000) } },
      // BullMQ asks a cluster for INFO before it is ready (it takes the cluster's `connect` for
      // ready), which a fail-fast connection refuses; the workers' connections check the version.
      skipVersionCheck: connection.isCluster,
    });
    queue.on("error", this.producerError);
    quietAfterClose(queue, "connection");
    return queue;
  }

  private readonly producerError: (err: Error) => void;

  /** The producer of each durable-writer connection (dropped with it). */
  private readonly durableProducers = new WeakMap<RedisClient, Queue<JobData>>();

  private durableProducer(connection: RedisClient): Queue<JobData> {
    let queue = this.durableProducers.get(connection);
    if (!queue) this.durableProducers.set(connection, (queue = this.producer(connection)));
    return queue;
  }

  private cancelKey(responseId: string): string {
    return `${this.opts.prefix}jobcancel:${responseId}`;
  }

  async enqueue(job: BackgroundJob): Promise<void> {
    if (this.closing) throw new StoreUnavailableError("the job queue is shutting down");
    const data: JobData = { responseId: job.responseId, payload: job.payload };
    const durable = this.opts.durable;
    if (durable) {
      await durable.write("jobs.enqueue", this.bullPrefix, (connection) => this.durableProducer(connection).add("background", data, { jobId: job.responseId }));
      return;
    }
    await redisCall(
      this.opts.client,
      "jobs.enqueue",
      async () => {
        const added = this.queue.add("background", data, { jobId: job.responseId });
        if (!(await settlesWithin(added, 1_500))) throw new StoreUnavailableError("jobs.enqueue: timed out");
        await added;
      },
      this.opts.readyTimeoutMs,
    );
  }

  start(handler: JobHandler, concurrency: number, hooks: JobHooks = {}): void {
    if (this.handler) throw new Error("job queue already started");
    this.handler = handler;
    this.hooks = hooks;
    const { target, logger } = this.opts;

    const subscriber = createRedisClient(target, { blocking: true, connectionName: "rr-cancel" });
    subscriber.on("message", (_channel: string, responseId: string) => this.abortLocal(responseId, "cancelled"));
    subscriber.subscribe(this.channel).catch((err) => logger?.warn({ err: loggableRedisError(err) }, "cannot subscribe to job cancellations"));

    const workerConn = createRedisClient(target, { blocking: true, connectionName: "rr-worker" });
    this.connections.push(subscriber, workerConn);
    this.worker = new Worker<JobData>(this.queueName, (job, token) => this.process(job, token), {
      connection: workerConn,
      prefix: this.bullPrefix,
      concurrency: Math.max(1, Math.floor(concurrency)),
      lockDuration: this.opts.lockDurationMs ?? 30_000,
      stalledInterval: this.opts.stalledIntervalMs ?? 15_000,
      maxStalledCount: this.opts.maxStalledCount ?? 1,
    });
    this.worker.on("error", throttledWarn(logger, "job worker error"));
    quietAfterClose(this.worker, "blockingConnection");
    quietAfterClose(this.worker, "connection");
    // BullMQ retries a closing worker's failed Redis calls with no delay at all: once its
    // connection has ended for good (closed under a job finishing at shutdown), that is an
    // endless busy loop. Flag BullMQ's connection as closing then, so its completion handlers
    // stop touching Redis (an unacknowledged job is re-delivered and skipped as finished).
    const worker = this.worker;
    workerConn.once("end", () => {
      const conn = (worker as unknown as { connection?: { closing?: unknown } }).connection;
      if (conn && !conn.closing) conn.closing = true;
    });
    this.worker.on("failed", (job, err) => logger?.error({ err: loggableRedisError(err), responseId: job?.id }, "background job failed"));
    this.worker.on("stalled", (jobId) => logger?.warn({ responseId: jobId }, "background job stalled; re-delivering"));

    if (hooks.onAbandoned) {
      const eventsConn = createRedisClient(target, { blocking: true, connectionName: "rr-queue-events" });
      this.connections.push(eventsConn);
      this.queueEvents = new QueueEvents(this.queueName, { connection: eventsConn, prefix: this.bullPrefix });
      this.queueEvents.on("error", throttledWarn(logger, "job queue events error"));
      quietAfterClose(this.queueEvents, "connection");
      this.queueEvents.on("failed", ({ jobId, failedReason }) => void this.reportAbandoned(jobId, failedReason));
    }
  }

  /** Resolves once the worker is connected and taking jobs (useful in tests and at start-up). */
  async waitUntilReady(): Promise<void> {
    await this.worker?.waitUntilReady();
    await this.queueEvents?.waitUntilReady();
  }

  async cancel(responseId: string): Promise<void> {
    this.abortLocal(responseId, "cancelled");
    const { client, ttlMs } = this.opts;
    await redisCall(client, "jobs.cancel", () => client.multi().set(this.cancelKey(responseId), "1", "PX", ttlMs).publish(this.channel, responseId).exec(), this.opts.readyTimeoutMs);
  }

  async waitingCount(): Promise<number> {
    return redisCall(this.opts.client, "jobs.waiting", () => this.queue.getJobCountByTypes("waiting", "paused", "delayed", "prioritized"), this.opts.readyTimeoutMs);
  }

  close(deadlineMs = 10_000): Promise<void> {
    this.closed ??= this.shutdown(deadlineMs);
    return this.closed;
  }

  private async shutdown(deadlineMs: number): Promise<void> {
    this.closing = true;
    const worker = this.worker;
    if (worker) {
      const closed = worker.close();
      closed.catch(() => {});
      if (!(await settlesWithin(closed, deadlineMs))) {
        // Hand unfinished jobs back to the queue for another instance (see process()).
        for (const id of this.running.keys()) this.abortLocal(id, "handed_back");
        if (!(await settlesWithin(closed, 3_000))) {
          this.opts.logger?.warn({ running: [...this.running.keys()] }, "background jobs ignored the hand-back; their leases will expire and they will be re-delivered");
          // Their store calls are bounded and fail fast once the shared client closes; the worker's
          // own connection must outlive them: BullMQ retries a closing worker's failed Redis
          // calls without any delay, so cutting it under a running job would spin forever.
          const late = this.connections.splice(0);
          void closed.finally(() => Promise.all(late.map((c) => closeClient(c))));
        }
      }
    }
    if (this.queueEvents) await settlesWithin(this.queueEvents.close(), 1_000);
    await settlesWithin(this.queue.close(), 1_000);
    await Promise.all(this.connections.map((c) => closeClient(c)));
  }

  private abortLocal(responseId: string, kind: "cancelled" | "handed_back"): void {
    const controller = this.running.get(responseId)?.controller;
    if (controller && !controller.signal.aborted) controller.abort(new JobAbortedError(kind));
  }

  private async process(job: Job<JobData>, token: string | undefined): Promise<void> {
    const { responseId, payload } = job.data;
    if (this.closing) {
      // A fetch already in flight when close() began (often the very job just handed back):
      // give it straight back instead of starting a run nobody would stop.
      await job.moveToWait(token);
      throw new WaitingError();
    }
    const live = this.running.get(responseId);
    if (live) {
      // Its lease lapsed while it still runs here (renewals failed while Redis failed over) and
      // the stalled checker gave it back: this delivery holds the job until that run ends
      // instead of starting a second one (the upstream would be asked twice).
      await live.ended;
      return;
    }
    const controller = new AbortController();
    let ended!: () => void;
    const entry = { controller, ended: new Promise<void>((resolve) => (ended = resolve)) };
    // Registered before the cancel-flag check, so a cancel published in between still lands.
    this.running.set(responseId, entry);
    try {
      if (await this.isCancelled(responseId)) return;
      const ctx: JobContext = {
        responseId,
        payload,
        attempt: Math.max(1, job.attemptsStarted),
        redelivered: job.attemptsStarted > 1 || job.stalledCounter > 0,
        stalls: job.stalledCounter,
      };
      if (ctx.redelivered && this.hooks.onRedelivered && (await this.hooks.onRedelivered(ctx)) === "skip") return;
      try {
        await this.handler!(ctx, controller.signal);
      } catch (err) {
        if (jobAbortKind(controller.signal) !== "handed_back") throw err;
      }
      if (jobAbortKind(controller.signal) === "handed_back") {
        await job.moveToWait(token);
        throw new WaitingError();
      }
    } finally {
      if (this.running.get(responseId) === entry) this.running.delete(responseId);
      ended();
    }
  }

  private async isCancelled(responseId: string): Promise<boolean> {
    try {
      return (await this.opts.client.exists(this.cancelKey(responseId))) > 0;
    } catch (err) {
      // Redis trouble: run the job; its own store calls will report the outage.
      this.opts.logger?.warn({ err: loggableRedisError(err), responseId }, "cannot read the job's cancel mark");
      return false;
    }
  }

  private async reportAbandoned(responseId: string, reason: string): Promise<void> {
    if (!ABANDONED.test(reason) || !this.hooks.onAbandoned) return;
    try {
      // Every instance hears the event; the first to claim it reports it.
      const first = await this.opts.client.set(`${this.opts.prefix}jobabandoned:${responseId}`, "1", "PX", this.opts.ttlMs, "NX");
      if (first === "OK") await this.hooks.onAbandoned(responseId, reason);
    } catch (err) {
      this.opts.logger?.error({ err: loggableRedisError(err), responseId }, "cannot report an abandoned background job");
    }
  }
}

/**
 * BullMQ's connection reports a start-up that never finished (a wrong password, a Redis that
 * never answered) by emitting "error" on itself, and its close() removes every listener first:
 * closed before it connected, that emit throws into a promise nobody handles, an unhandled
 * rejection that ends the process, printing the failed AUTH command with the password in it.
 * While its owner listens (until close), errors still reach the owner's "error" handler; after
 * that, with no one left to tell, they are dropped.
 */
function quietAfterClose(owner: object, field: "connection" | "blockingConnection"): void {
  const conn = (owner as Record<string, unknown>)[field] as { emit(event: string | symbol, ...args: unknown[]): boolean; listenerCount(event: string): number } | undefined;
  if (!conn) return;
  const emit = conn.emit.bind(conn);
  conn.emit = (event, ...args) => (event === "error" && conn.listenerCount("error") === 0 ? false : emit(event, ...args));
}
