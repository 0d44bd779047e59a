/** What createStores is given: the `storage` config and the hooks, for either adapter. */
import type { RedisTarget } from "./redis/target.js";
import type { CacheErrorHook } from "./redis/responses.js";

export interface StorageConfig {
  /** Empty: everything lives in this process. Set: Redis, shared by every instance. */
  redis_url: string;
  /** Sentinel, credentials and TLS beside (or instead of) redis_url. */
  redis?: Omit<RedisTarget, "url">;
  /** `replica`: writes a client depends on wait for one replica (WAIT 1 durability_timeout). */
  durability?: "primary" | "replica";
  durability_timeout?: number;
  prefix: string;
  /** Milliseconds a stored response lives. */
  ttl: number;
  /** Milliseconds recorded stream events stay resumable (default and cap: ttl). Every delta is kept, so this is shorter. */
  events_ttl?: number;
  /** Redis mode: bytes of recent chains' history each instance holds (store/history-cache.ts); 0 holds none. */
  history_cache_bytes?: number;
  memory: { max_entries: number; max_bytes: number };
  /** Lease tuning for background jobs in Redis mode (tests shorten these). */
  jobs?: { lock_duration?: number; stalled_interval?: number; max_stalled_count?: number };
}

export interface StoreOptions {
  /** Counts cache errors (they are served as misses). */
  onCacheError?: CacheErrorHook;
  /** How long a store call waits for a reconnecting Redis before StoreUnavailableError (default 500 ms). */
  readyTimeoutMs?: number;
  /** How long a limiter admission waits for Redis before the instance counts it on its own (default 50 ms; the contract suite, which checks Redis's own count, sets it long). */
  limiterLocalAfterMs?: number;
}

/** How long recorded stream events stay: `events_ttl`, never past the responses' own `ttl`. */
export const eventsTtl = (cfg: StorageConfig) => Math.min(cfg.events_ttl ?? cfg.ttl, cfg.ttl);
