/**
 * What src/responses/background/ holds:
 * background jobs (`jobs.ts`: queue, run, cancel, redelivery) and their recorded events
 * (`events.ts`)
 */
/**
 * Background mode (`background: true`): the request is stored as `queued`, its
 * `response.created` event is recorded, and a job runs it on whichever instance
 * takes it. The job always streams from the upstream and records every event, so
 * any instance can re-stream it (`GET ?stream=true&starting_after=N`) and a
 * cancel keeps the partial output. The job's outcome is stored BEFORE its terminal
 * event is recorded: a client that sees the end can chain from the response at once.
 * Every write after the queued one is `saveIfOpen`: the first final status stored wins, on
 * any instance, and a writer that comes later (its lease lapsed and another instance failed
 * the job, a cancel landed first) leaves it and records no terminal event of its own.
 */
import { invalidRequest, notFound, responseNotFound, toApiError } from "../../ops/errors.js";
import { isFinished } from "../../wire/protocol.js";
import { logContext, withLogContext, type LogContext } from "../../ops/log.js";
import type { Runtime } from "../../runtime/runtime.js";
import { EventOrderError, isTerminalEvent, jobAbortKind, type JobContext, type JobHooks, type StoredResponse } from "../../store/types.js";
import { responseSkeleton } from "../../translate/index.js";
import { emitted } from "../../wire/emitted.js";
import type { EmittedResponse, ResponseObject, StreamEvent } from "../../wire/types.js";
import type { StreamBody } from "../../wire/sse-writer.js";
import { appendTurn } from "../conversations/turn.js";
import { EventRecorder, finishedItems, followBody, terminalEvent } from "./events.js";
import { jobGate } from "../../keys/limits.js";
import { NO_KEY } from "../../keys/policy.js";
import { NO_TOKENS, recordUsageOf, type TokenCount } from "../../keys/usage.js";
import { limiterDeps, usageDeps } from "../../runtime/runtime.js";
import { recordTokenUsage, type RunOutcome } from "../create/execute.js";
import { openRun } from "../tool-loop/index.js";
import { openToolSecrets, sealToolSecrets } from "../tool-loop/secrets.js";
import { loadOwned, planFromRecord, type BackgroundPayload, type Plan } from "../create/plan.js";
import { callStore } from "../create/store-access.js";
import { failed, logIds } from "../../tracing/index.js";
import { tracePlan } from "../create/trace.js";

type StoreName = "responses" | "events" | "jobs";
type Failure = { code: string; message: string };

const INSTANCE_LOST = "The router instance running this background response stopped before it finished.";
const SHUT_DOWN = "The router shut down before this background response finished.";

export class BackgroundJobs {
  constructor(private readonly rt: Runtime) {}

  /** Starts this instance's worker. Call once per instance. */
  startWorker(concurrency: number): void {
    const hooks: JobHooks = {
      onRedelivered: (job) => this.onRedelivered(job),
      onAbandoned: async (responseId, reason) => {
        this.rt.log.warn({ responseId, reason }, "background job abandoned");
        // Said once: a store blip or failover here must not leave the response open for good (closeOut is idempotent).
        await persist(() => this.closeOut(responseId, "failed", { code: "server_error", message: INSTANCE_LOST }));
      },
    };
    this.rt.stores.jobs.start((job, signal) => this.run(job, signal), concurrency, hooks);
  }

  /** Stores the queued response, records its `response.created` (event 0) and queues the job. */
  async submit(plan: Plan): Promise<ResponseObject> {
    const { responses, events, jobs } = this.rt.stores;
    const response = responseSkeleton(plan.req, { id: plan.id, createdAt: plan.createdAt, model: plan.model, status: "queued", previousResponseId: plan.previousResponseId });
    const record: StoredResponse = { response, input: [...plan.history, ...plan.input], owner: plan.owner };
    if (plan.basis) record.basis = plan.basis;
    await this.store("events", "append", () => events.append(plan.id, emitted({ type: "response.created", response: response as unknown as EmittedResponse, sequence_number: 0 })));
    await this.store("responses", "save", () => responses.save(record));
    // The request's trace context rides in the job record: the job's span, wherever it runs, links to it.
    const payload: BackgroundPayload = { req: sealToolSecrets(this.rt.config, plan.req), historyItems: plan.history.length, preferEndpoint: plan.preferEndpoint, upstreamHeaders: plan.upstreamHeaders, requestId: logContext()?.requestId, trace: this.rt.tracing.carrier() };
    try {
      await this.store("jobs", "enqueue", () => jobs.enqueue({ responseId: plan.id, payload }));
    } catch (err) {
      // Off the client's path: its 503 comes now, while the close-out waits out the store's failover.
      void persist(() => this.closeOut(plan.id, "failed", { code: "server_error", message: "The background job could not be queued." })).catch(() => {});
      throw err;
    }
    return response;
  }

  /** Cancels a background response wherever its job runs. Finished responses come back unchanged. */
  async cancel(id: string, owner: string | null): Promise<ResponseObject> {
    const rec = await loadOwned(this.rt.stores.responses, id, owner);
    if (rec.response.background !== true) {
      throw invalidRequest("Only responses created with background: true can be cancelled.", null, "not_background");
    }
    if (isFinished(rec.response.status)) return rec.response;
    await this.store("jobs", "cancel", () => this.rt.stores.jobs.cancel(id));
    // The instance running the job records the cancellation with the partial output; a queued
    // job never runs, and a job whose instance is gone never answers: then record it here.
    const deadline = Date.now() + this.rt.config.background.cancel_wait;
    for (;;) {
      const now = await callStore(() => this.rt.stores.responses.get(id));
      if (!now) throw responseNotFound(id);
      if (isFinished(now.response.status)) return now.response;
      if (now.response.status === "queued" || Date.now() >= deadline) break;
      await sleep(50);
    }
    const cancelled = await this.closeOut(id, "cancelled", null);
    if (!cancelled) throw responseNotFound(id);
    return cancelled;
  }

  /** GET /v1/responses/{id}?stream=true: the recorded events after `startingAfter`, then live ones. */
  async stream(id: string, owner: string | null, startingAfter: string | undefined): Promise<StreamBody> {
    const rec = await loadOwned(this.rt.stores.responses, id, owner);
    // As OpenAI: a response that was not created in background mode has no stream to resume.
    if (rec.response.background !== true) {
      throw notFound(`Response with id '${id}' has no stream to resume: only responses created with background: true can be streamed again.`, "stream", "not_background");
    }
    return this.follow(id, parseStartingAfter(startingAfter), isFinished(rec.response.status) ? rec.response : null);
  }

  /** The response's stream after `afterSeq`; `finished`: its record, when it has already ended. */
  follow(id: string, afterSeq: number, finished: ResponseObject | null = null): StreamBody {
    const { responses, events } = this.rt.stores;
    const record = {
      read: async () => (await responses.get(id))?.response ?? null,
      repair: (event: StreamEvent) => this.recordTerminal(id, event),
      deadline: this.rt.streamsDeadline,
    };
    return followBody(events, id, afterSeq, finished, () => this.rt.metrics.storeErrors.inc({ store: "events", op: "follow" }), record);
  }

  // ---- the worker ---------------------------------------------------------------

  private run(job: JobContext, signal: AbortSignal): Promise<void> {
    const payload = job.payload as BackgroundPayload;
    const requestId = payload.requestId;
    const fields: LogContext = requestId ? { requestId, responseId: job.responseId } : { responseId: job.responseId };
    if (!this.rt.tracing.on) return withLogContext(fields, () => this.runJob(job, signal));
    // Traced: the job's CONSUMER span (its own trace, linked to the request that queued it) parents its upstream and store spans.
    const span = this.rt.tracing.startJob(`background ${payload.req.model}`, payload.trace, {
      "messaging.operation.type": "process",
      "gen_ai.response.id": job.responseId,
      "router.job_attempt": job.attempt,
      ...(requestId ? { "router.request_id": requestId } : {}),
    })!;
    return this.rt.tracing
      .within(span, () => withLogContext({ ...fields, ...logIds(span) }, () => this.runJob(job, signal)))
      .catch((err: unknown) => {
        failed(span, err);
        throw err;
      })
      .finally(() => span.end());
  }

  private async runJob(job: JobContext, signal: AbortSignal): Promise<void> {
    const { responses } = this.rt.stores;
    // A job taken while the store fails over waits for it (bounded): failing here would leave
    // the response queued for good, as nothing else would ever run or close it.
    const rec = await persist(() => this.store("responses", "get", () => responses.get(job.responseId)));
    // Deleted, or cancelled before it started: nothing to do.
    if (!rec || isFinished(rec.response.status) || signal.aborted) return;
    const active = this.rt.metrics.backgroundActive;
    active.inc({ status: "in_progress" });
    // A running job holds one of its key's max_concurrent slots, and its tokens count against the key's limits.
    const owner = rec.owner === null ? null : this.rt.keyNamed(rec.owner);
    const gate = await jobGate(limiterDeps(this.rt), owner ? [owner] : [], rec.owner, job.responseId);
    const tally: { tokens?: TokenCount; model?: string } = {};
    try {
      const started: StoredResponse = { ...rec, response: { ...rec.response, status: "in_progress" } };
      // Deleted meanwhile (on any instance): it stays deleted and the job does not run. Finished
      // meanwhile (a cancel on another instance since the read above): it stays finished.
      const saved = await persist(() => this.store("responses", "save", () => responses.saveIfOpen(started)));
      if (saved === "finished") {
        const now = await this.finishedAs(job.responseId);
        this.rt.log.info({ responseId: job.responseId, attempt: job.attempt, finished: now?.status }, "background job not started: its response had already finished");
      }
      if (saved !== "saved") return;
      this.rt.log.info({ responseId: job.responseId, attempt: job.attempt }, "background job started");
      await this.execute(started, job.payload as BackgroundPayload, signal, tally);
    } catch (err) {
      this.rt.log.error({ responseId: job.responseId, err: (err as Error).message }, "background job could not record its outcome");
    } finally {
      active.dec({ status: "in_progress" });
      const tokens = tally.tokens ?? NO_TOKENS;
      gate?.settle(tokens.input + tokens.output);
      const span = tally.tokens && this.rt.tracing.current();
      if (span) span.setAttributes({ "gen_ai.usage.input_tokens": tokens.input, "gen_ai.usage.output_tokens": tokens.output, "gen_ai.response.model": tally.model ?? "" });
      // The create request counted the request; the job adds the tokens it used.
      if (tally.model) recordUsageOf(usageDeps(this.rt), rec.owner ?? NO_KEY, tally.model, 0, tokens);
    }
  }

  private async execute(rec: StoredResponse, payload: BackgroundPayload, signal: AbortSignal, tally: { tokens?: TokenCount; model?: string }): Promise<ResponseObject | null | undefined> {
    const id = rec.response.id;
    const recorder = new EventRecorder(this.rt.stores.events, id, () => this.rt.metrics.storeErrors.inc({ store: "events", op: "append" }));
    let outcome: RunOutcome | null = null;
    let failure: Failure | null = null;
    let plan: Plan | null = null;
    try {
      plan = planFromRecord(this.rt.config, rec, { ...payload, req: openToolSecrets(this.rt.config, payload.req) });
      const span = this.rt.tracing.current();
      if (span) tracePlan(span, plan, this.rt.tracing.captureContent);
      const conn = await openRun(this.rt, plan, signal, true, "queued");
      outcome = await conn.pump(recorder, { keepPartialOnAbort: true });
      tally.tokens = recordTokenUsage(this.rt, outcome, plan.owner);
      tally.model = outcome.model;
    } catch (err) {
      if (!signal.aborted) failure = failureOf(err);
    }
    await recorder.drained();

    if (outcome?.terminal) {
      const served: StoredResponse = { ...rec, endpoint: outcome.endpoint };
      const failed = { ...outcome.response, status: "failed" as const, error: STORE_FAILED };
      if (recorder.broken) return this.finish(served, failed, recorder.nextSequence);
      // A response another instance already finished (it failed this job when its lease lapsed)
      // gets no conversation turn: finish() below only learns that it lost.
      if (plan!.conversationId && (await this.finishedAs(id))) return this.finish(served, outcome.response, recorder.nextSequence);
      // The turn joins its conversation before the terminal event: a client that sees the end sees the items.
      const appended = await persist(() => appendTurn(this.rt, plan!, outcome!.response, outcome!.endpoint, true)).then(() => true, () => false);
      if (!appended) return this.finish(served, failed, recorder.nextSequence);
      return this.finish(served, outcome.response, recorder.nextSequence, JSON.parse(outcome.terminal.data));
    }
    const partial = outcome?.response ?? rec.response;
    if (failure) return this.finish(rec, { ...partial, status: "failed", error: failure }, recorder.nextSequence);
    const kind = jobAbortKind(signal);
    // Redis mode shutdown: the job goes back to the queue and another instance resolves it.
    if (kind === "handed_back") return;
    if (kind === "shutdown") return this.finish(rec, { ...partial, status: "failed", error: { code: "server_error", message: SHUT_DOWN } }, recorder.nextSequence);
    return this.finish(rec, { ...partial, status: "cancelled", error: null }, recorder.nextSequence);
  }

  /**
   * Stores the final response, then records its terminal event (so a follower that sees the
   * end can chain from it at once). A response deleted meanwhile stays deleted (null), and one
   * that finished meanwhile stays as it finished (returned): the first final status wins, and
   * this outcome and its terminal event are dropped. Returns the response as stored.
   */
  private async finish(rec: StoredResponse, ended: ResponseObject, seq: number, terminal?: StreamEvent): Promise<ResponseObject | null> {
    const { responses } = this.rt.stores;
    const id = rec.response.id;
    // Only a completed response has a completion time; any other end (failed, cancelled) has none.
    const response = ended.status === "completed" || ended.completed_at === null ? ended : { ...ended, completed_at: null };
    const event = terminal ?? terminalEvent(response, seq);
    // One atomic step each (save-if-open): a DELETE or a final write on another instance between them is final.
    const saved = await persist(() => this.store("responses", "save", () => responses.saveIfOpen({ ...rec, response })));
    if (saved === "missing") return null;
    if (saved === "finished") {
      const winner = await this.finishedAs(id);
      // Often this very write, whose reply a failover lost before the retry found it stored:
      // the log still needs the end the record says (its writer may never come back to add it).
      if (winner) await this.ensureTerminal(id, winner);
      if (winner?.status !== response.status) this.rt.log.warn({ responseId: id, status: response.status, finished: winner?.status }, "background job's outcome dropped: its response had already finished");
      return winner;
    }
    await this.recordTerminal(id, event);
    this.rt.metrics.backgroundJobs.inc({ status: response.status });
    this.rt.tracing.current()?.setAttribute("router.response_status", response.status);
    this.rt.log.info({ responseId: id, status: response.status }, "background job finished");
    return response;
  }

  /**
   * Records the terminal event of the status this instance stored (only the writer that stored
   * it does). A job still streaming elsewhere (its lease lapsed, and it does not know yet) may
   * have taken that sequence number: the event then goes right after the last one recorded, so
   * the log ends with it; that job's next append collides with it and it stops.
   */
  private async recordTerminal(id: string, event: StreamEvent): Promise<void> {
    const { events } = this.rt.stores;
    let failure: unknown;
    for (let attempt = 1; attempt <= TERMINAL_ATTEMPTS; attempt++) {
      try {
        await persist(() => events.appendIfExists(id, event));
        return;
      } catch (err) {
        failure = err;
        if (!(err instanceof EventOrderError)) break;
      }
      const after = await persist(() => events.read(id, event.sequence_number - 1)).catch(() => null);
      // A retried append whose first try had landed (its reply was lost): it is recorded.
      if (after?.some(isTerminalEvent)) return;
      const last = after?.at(-1);
      // Never a guess past what was read: the log must not get a gap.
      if (!last) break;
      event = { ...event, sequence_number: last.sequence_number + 1 };
    }
    this.rt.metrics.storeErrors.inc({ store: "events", op: "append" });
    this.rt.log.warn({ responseId: id, err: (failure as Error).message }, "background response's terminal event could not be recorded");
  }

  /** Records the finished record's terminal event when its log has none (see recordTerminal: a writer adding its own meanwhile finds this one and stops). */
  private async ensureTerminal(id: string, finished: ResponseObject): Promise<void> {
    const recorded = await persist(() => this.store("events", "read", () => this.rt.stores.events.read(id, -1))).catch(() => null);
    if (!recorded || recorded.some(isTerminalEvent)) return;
    await this.recordTerminal(id, terminalEvent(finished, (recorded.at(-1)?.sequence_number ?? -1) + 1));
  }

  /** The stored response when it is finished, else null (also when it is gone). */
  private async finishedAs(id: string): Promise<ResponseObject | null> {
    const rec = await persist(() => this.store("responses", "get", () => this.rt.stores.responses.get(id)));
    return rec && isFinished(rec.response.status) ? rec.response : null;
  }

  /**
   * Ends a response no worker will finish (a cancelled queued job, a job whose instance is
   * gone): keeps the output its recorded events finished and records the terminal event.
   */
  private async closeOut(id: string, status: "cancelled" | "failed", error: Failure | null): Promise<ResponseObject | null> {
    const rec = await this.store("responses", "get", () => this.rt.stores.responses.get(id));
    if (!rec) return null;
    if (isFinished(rec.response.status)) return rec.response;
    const recorded = await this.store("events", "read", () => this.rt.stores.events.read(id, -1));
    const seq = (recorded.at(-1)?.sequence_number ?? -1) + 1;
    const output = finishedItems(recorded);
    const response: ResponseObject = { ...rec.response, status, error, output: output.length > 0 ? output : rec.response.output };
    // Another writer may have finished it since the read above: then that outcome is the answer.
    return this.finish(rec, response, seq);
  }

  /** A job its queue gives again (its instance died or handed it back): run it again only if it never streamed. */
  private async onRedelivered(job: JobContext): Promise<"run" | "skip"> {
    const rec = await persist(() => this.store("responses", "get", () => this.rt.stores.responses.get(job.responseId)));
    if (!rec || isFinished(rec.response.status)) return "skip";
    const streamed = await persist(() => this.store("events", "read", () => this.rt.stores.events.read(job.responseId, 0)));
    if (streamed.length === 0) return "run";
    this.rt.log.warn({ responseId: job.responseId, attempt: job.attempt }, "background job re-delivered after it had streamed; failing it");
    await persist(() => this.closeOut(job.responseId, "failed", { code: "server_error", message: INSTANCE_LOST }));
    return "skip";
  }

  /** A store call that answers 503 when the store is unreachable, counted in store_errors_total. */
  private async store<T>(store: StoreName, op: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await callStore(this.rt.tracing.on ? () => this.rt.tracing.store(`${store}.${op}`, fn) : fn);
    } catch (err) {
      this.rt.metrics.storeErrors.inc({ store, op });
      throw err;
    }
  }
}

/** Tries at the terminal event when other appends keep taking its sequence number. */
const TERMINAL_ATTEMPTS = 5;

const STORE_FAILED: Failure = { code: "server_error", message: "The router's store failed while recording this background response." };

/** An error before the upstream answered, as a Response's `error`. */
function failureOf(err: unknown): Failure {
  const e = toApiError(err);
  if (e.status === 429) return { code: "rate_limit_exceeded", message: e.message };
  return { code: e.status < 500 && e.code ? e.code : "server_error", message: e.message };
}

function parseStartingAfter(value: string | undefined): number {
  if (value === undefined || value === "") return -1;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) {
    throw invalidRequest(`Invalid 'starting_after': expected a non-negative integer sequence number, but got '${value}'.`, "starting_after", "invalid_value");
  }
  return n;
}

/**
 * Attempts at a job's store calls: about 16 s of retries, longer than a Sentinel failover. Its
 * first calls and its final writes alike: a final write given up leaves the response
 * in_progress for good (the queue sees the job as done, so nothing would ever close it).
 */
const START_ATTEMPTS = 12;

/** Retries a job's store call through a store blip or failover (a deleted record's EventOrderError is final). */
async function persist<T>(op: () => Promise<T>, attempts = START_ATTEMPTS): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await op();
    } catch (err) {
      if (i >= attempts || err instanceof EventOrderError) throw err;
      await sleep(250 * i);
    }
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
