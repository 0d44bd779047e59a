import { ApiError, storageUnavailable } from "../errors.js";
import { StoreUnavailableError } from "../store/types.js";

/** Runs a store call; an unreachable store becomes a 503 the client can act on. */
export async function readStore<T>(op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (err) {
    if (err instanceof StoreUnavailableError) throw storageUnavailable(err.message);
    if (err instanceof ApiError) throw err;
    throw storageUnavailable((err as Error).message);
  }
}
