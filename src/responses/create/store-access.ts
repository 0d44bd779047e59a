import { ApiError, storageUnavailable } from "../../ops/errors.js";
import { StoreUnavailableError, type StoreStatus } from "../../store/types.js";
import type { Tracing } from "../../tracing/index.js";

/** A store call as a span when tracing is on (the request waits on it). */
export function traced<T>(tracing: Tracing | undefined, op: string, fn: () => Promise<T>): Promise<T> {
  return tracing ? tracing.store(op, fn) : fn();
}

/** Runs a store call; an unreachable store becomes a 503 the client can act on. */
export async function callStore<T>(op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (err) {
    if (err instanceof StoreUnavailableError) throw storageUnavailable(err.message);
    if (err instanceof ApiError) throw err;
    throw storageUnavailable((err as Error).message);
  }
}

/**
 * Answers 503 at once when the store is disconnected and does not come back within
 * `waitMs` (a client that is still connecting at start-up gets that long), so a
 * request whose response could not be stored never spends an upstream call.
 */
export async function requireConnected(status: StoreStatus, waitMs = 500): Promise<void> {
  if (status.connected) return;
  const up = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => {
      off();
      resolve(status.connected);
    }, waitMs);
    const off = status.onStatusChange((connected) => {
      if (!connected) return;
      clearTimeout(timer);
      off();
      resolve(true);
    });
  });
  if (!up) throw storageUnavailable("the store is not connected; stored responses are unavailable until it reconnects (store: false requests still work)");
}
