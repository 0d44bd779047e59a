import type { Item, ResponseObject } from "../types.js";

/**
 * What the router keeps per stored response. `input` is the full context the
 * response was generated from (the chained history plus this turn's input, every
 * item with an id), so chaining is `prev.input + prev.response.output + new input`
 * and GET /input_items lists exactly what the model saw.
 */
export interface StoredResponse {
  response: ResponseObject;
  input: Item[];
  /** Name of the API key that created it; null when the router runs without keys. */
  owner: string | null;
}

/**
 * Responses and their input items. Adapters: memory (bounded LRU + TTL) and Redis.
 * Every method rejects with a StoreUnavailableError when the backing store cannot
 * be reached, so callers can answer 503 instead of losing data silently.
 */
export interface ResponseStore {
  /** Creates or replaces the record for response.id. */
  save(record: StoredResponse): Promise<void>;
  get(id: string): Promise<StoredResponse | null>;
  /** True when something was deleted. */
  delete(id: string): Promise<boolean>;
  /** Cheap reachability check for /readyz. */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

/** Response cache: canonical-request hash -> a completed response. Errors are misses. */
export interface ResponseCache {
  get(key: string): Promise<CachedResponse | null>;
  set(key: string, value: CachedResponse, ttlMs: number): Promise<void>;
  close(): Promise<void>;
}

export interface CachedResponse {
  response: ResponseObject;
}

export class StoreUnavailableError extends Error {
  constructor(detail: string) {
    super(detail);
    this.name = "StoreUnavailableError";
  }
}
