import pRetry, { AbortError } from "p-retry";
import type { ModelTarget, RouterConfig } from "../config/load.js";
import type { EndpointPool, Lease } from "../routing/pool.js";
import type { UpstreamClient, UpstreamReply } from "./client.js";
import { UpstreamFailure } from "./errors.js";

export interface FailoverContext {
  pool: EndpointPool;
  client(endpoint: string): UpstreamClient;
  model: string;
  targets: ModelTarget[];
  routing: RouterConfig["routing"];
  signal: AbortSignal;
  /** The endpoint the first attempt prefers (conversation affinity); retries choose as usual. */
  prefer?: string | null;
  /** Called for every failed attempt that will be retried elsewhere. */
  onRetry?(failure: UpstreamFailure, endpoint: string): void;
  /** Called for every attempt an endpoint failed before its first byte (retried or not), with its duration. */
  onAttemptFailed?(failure: UpstreamFailure, seconds: number): void;
  /** Called for a failure counted against an endpoint's health (once per request and endpoint). */
  onEndpointFault?(failure: UpstreamFailure, endpoint: string): void;
  /** Called when an attempt sent to an ejected endpoint (panic routing) ends: answered 2xx or not. */
  onPanicAttempt?(endpoint: string, ok: boolean): void;
}

export interface Attempt {
  reply: UpstreamReply;
  /** The slot the successful attempt holds; the caller releases it when the body is done. */
  lease: Lease;
  /** Endpoints tried before the one that answered. */
  failedOver: number;
}

/**
 * Sends one upstream call, retrying connection errors, timeouts, 5xx and 429 on
 * ANOTHER endpoint of the model's pool (bounded attempts and total time). Once
 * every endpoint was tried, the same one is asked again only after a connection
 * failure (nothing reached it) or a Retry-After that fits the budget. Only the
 * part before the first response byte is retried; once a 2xx arrives the caller
 * owns the stream. Non-retryable answers (4xx) end the loop at once.
 *
 * Health: an endpoint fault (UpstreamFailure.endpointFault) counts against the
 * endpoint at most once per client request; any other answer shows it alive.
 */
export async function callWithFailover(
  ctx: FailoverContext,
  call: (client: UpstreamClient, lease: Lease) => Promise<UpstreamReply>,
): Promise<Attempt> {
  const tried = new Set<string>();
  // Made on the first failure only (nearly every request succeeds at once): endpoints this request
  // counted a fault against, and tried ones it must not ask again (they answered; no Retry-After).
  let faulted: Set<string> | undefined;
  let done: Set<string> | undefined;
  const distinct = new Set(ctx.targets.map((t) => t.endpoint)).size;
  let last: UpstreamFailure | undefined;
  const { retry, queue_timeout } = ctx.routing;
  const started = performance.now();
  // A result whose signal aborted just as it arrived is dropped: keep it to release its slot.
  let won: Attempt | undefined;

  const attempt = async (): Promise<Attempt> => {
    // Once every endpoint was tried, later attempts may go back to one that could not be reached or asked us to wait.
    const exclude = tried.size >= distinct ? (done ?? NONE) : tried;
    let lease: Lease;
    try {
      const got = ctx.pool.take(ctx.model, ctx.targets, { exclude, queueTimeoutMs: queue_timeout, signal: ctx.signal, prefer: tried.size === 0 ? ctx.prefer : null });
      lease = got instanceof Promise ? await got : got;
    } catch (err) {
      // No slot: a previous upstream error says more than "no healthy endpoint".
      throw new AbortError((last && tried.size > 0 ? last : err) as Error);
    }
    const name = lease.endpoint.name;
    const callStarted = performance.now();
    try {
      const reply = await call(ctx.client(name), lease);
      if (lease.panic) ctx.onPanicAttempt?.(name, true);
      lease.endpoint.health.recordSuccess();
      won = { reply, lease, failedOver: tried.size };
      return won;
    } catch (err) {
      lease.release();
      if (lease.panic) ctx.onPanicAttempt?.(name, false);
      if (!(err instanceof UpstreamFailure)) throw new AbortError(err as Error);
      ctx.onAttemptFailed?.(err, (performance.now() - callStarted) / 1000);
      tried.add(name);
      if (!err.endpointFault) lease.endpoint.health.recordSuccess(); // it answered: alive, just said no
      else if (!faulted?.has(name)) {
        (faulted ??= new Set()).add(name);
        lease.endpoint.health.recordFailure(`${err.kind}: ${err.message}`);
        ctx.onEndpointFault?.(err, name);
      }
      last = err;
      if (!err.sameEndpointRetryable && !err.retryAfterMs) (done ??= new Set()).add(name);
      const untried = tried.size < distinct;
      if (!err.retryable || !(untried || err.sameEndpointRetryable || err.retryAfterMs)) throw new AbortError(err);
      throw err;
    }
  };
  const onFailedAttempt = async ({ error, retriesLeft }: { error: Error; retriesLeft: number }): Promise<void> => {
    if (!(error instanceof UpstreamFailure) || retriesLeft <= 0) return;
    // Every endpoint was tried, so the next attempt may go back to one that asked
    // us to wait (429/503 Retry-After): wait when that fits the retry budget, else
    // stop here and hand the client the upstream's answer with its Retry-After.
    if (tried.size >= distinct && error.retryAfterMs) {
      if (error.retryAfterMs > retry.max_time - (performance.now() - started)) throw error;
      ctx.onRetry?.(error, error.endpoint);
      await sleep(error.retryAfterMs, ctx.signal);
      return;
    }
    ctx.onRetry?.(error, error.endpoint);
  };
  try {
    return await firstThenRetry(attempt, onFailedAttempt, ctx.signal, retry, started);
  } catch (err) {
    if (won) {
      won.lease.release();
      won.reply.body.destroy();
    }
    throw err;
  }
}

/**
 * pRetry(attempt, ...) with its first attempt made directly: p-retry's setup costs ~8 us
 * per request on the benchmark VM, and nearly every request succeeds at once. After a
 * retryable failure, p-retry takes over and sees that failure as its own first attempt
 * (same onFailedAttempt calls, attempt count and max_time budget counted from `started`).
 */
async function firstThenRetry(
  attempt: () => Promise<Attempt>,
  onFailedAttempt: (ctx: { error: Error; retriesLeft: number }) => Promise<void>,
  signal: AbortSignal,
  retry: RouterConfig["routing"]["retry"],
  started: number,
): Promise<Attempt> {
  const retries = retry.attempts - 1;
  signal.throwIfAborted();
  let result: Attempt;
  try {
    result = await attempt();
  } catch (err) {
    if (err instanceof AbortError) throw err.originalError;
    if (signal.aborted) {
      // p-retry checks the signal before its first attempt: do here what it did with this failure.
      await onFailedAttempt({ error: err as Error, retriesLeft: retries });
      if (retries <= 0 || performance.now() - started >= retry.max_time) throw err;
      throw signal.reason;
    }
    return pRetry((n) => (n === 1 ? Promise.reject(err) : attempt()), {
      retries,
      maxRetryTime: Math.max(0, retry.max_time - (performance.now() - started)),
      minTimeout: 0,
      maxTimeout: 0,
      randomize: false,
      signal,
      onFailedAttempt,
    });
  }
  // As p-retry: an abort that arrived with the answer rejects, with a TypeError for a non-Error reason.
  if (signal.aborted) {
    const reason: unknown = signal.reason;
    throw reason instanceof Error ? reason : new TypeError(`Non-error was thrown: "${String(reason)}". You should only throw errors.`);
  }
  return result;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

const NONE: ReadonlySet<string> = new Set();
