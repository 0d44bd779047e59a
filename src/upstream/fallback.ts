import { ApiError } from "../ops/errors.js";
import { UpstreamFailure } from "./errors.js";

/**
 * Whether a failure before the first byte moves the request to the next fallback model:
 * every endpoint of the pool failed (connection, timeout, 5xx, 429 - the errors failover
 * retries), or the pool itself had nothing to give (every slot busy: 429; no endpoint: 503).
 * A 4xx about the request stays the client's answer; a client that went away ends it.
 */
export function fallsBack(err: unknown, signal: AbortSignal): boolean {
  if (signal.aborted) return false;
  if (err instanceof UpstreamFailure) return err.retryable;
  return err instanceof ApiError && (err.status === 429 || err.status === 503);
}

/**
 * Tries `call` for each step in order until one succeeds; a failure that falls back moves to
 * the next step (`onFallback` is told), any other failure, or the last step's, is thrown.
 */
export async function callWithFallbacks<S extends { model: string }, T>(
  steps: S[],
  signal: AbortSignal,
  call: (step: S) => Promise<T>,
  onFallback: (from: S, to: S, err: unknown) => void,
): Promise<{ result: T; step: S }> {
  for (let i = 0; ; i++) {
    const step = steps[i]!;
    try {
      return { result: await call(step), step };
    } catch (err) {
      const next = steps[i + 1];
      if (!next || !fallsBack(err, signal)) throw err;
      onFallback(step, next, err);
    }
  }
}
