/**
 * What src/store/ holds:
 * the store interfaces at the root (`types.ts`, `limiter.ts`, `usage.ts`) and `index.ts`, the one
 * place that picks an adapter (`if (redis)` lives nowhere else; each adapter folder's `index.ts`
 * builds its set, the Redis one imported only then), `options.ts` the `storage` settings both
 * take; responses and conversations also find an item by its id alone (`findItem`, for
 * `item_reference`); `record-json.ts`, a stored record or cache entry as JSON around a response
 * the caller already serialised (both adapters); the contract suite is `test/store/`
 */
import type { Logger } from "pino";
import { createMemoryStores } from "./memory/index.js";
import type { RedisTarget } from "./redis/target.js";
import type { StorageConfig, StoreOptions } from "./options.js";
import type { Stores } from "./types.js";

export type * from "./types.js";
export type * from "./limiter.js";
export type * from "./usage.js";
export type * from "./files.js";
export type * from "./keys.js";
export { SLOT_TTL_MS, dayWindow, monthWindow } from "./limiter.js";
export type { StorageConfig, StoreOptions } from "./options.js";
export { StoreUnavailableError, EventOrderError, JobAbortedError, isTerminalEvent, jobAbortKind } from "./types.js";

/** The Redis the config names, or null for the in-process store. */
export function redisTarget(cfg: Pick<StorageConfig, "redis_url" | "redis">): RedisTarget | null {
  if (!cfg.redis_url && !cfg.redis?.sentinels && !cfg.redis?.cluster) return null;
  return { ...cfg.redis, url: cfg.redis_url || undefined };
}

/**
 * The one place that chooses memory or Redis. Everything else sees only the interfaces,
 * so a single instance and a fleet sharing one Redis run the same code.
 */
export async function createStores(cfg: StorageConfig, logger?: Logger, opts: StoreOptions = {}): Promise<Stores> {
  const target = redisTarget(cfg);
  if (!target) return createMemoryStores(cfg, logger);
  // Only Redis mode loads the Redis client and BullMQ (~12 MB a memory-store router never needs).
  const { createRedisStores } = await import("./redis/index.js");
  return createRedisStores(target, cfg, logger, opts);
}

/** `check --probe`: whether the configured Redis answers (a cluster: its state and nodes); null for the in-process store. */
export async function probeStore(cfg: Pick<StorageConfig, "redis_url" | "redis">): Promise<{ ok: boolean; detail: string } | null> {
  const target = redisTarget(cfg);
  if (!target) return null;
  const { probeRedis } = await import("./redis/health.js");
  return probeRedis(target);
}

export { MemoryResponseStore, MemoryResponseCache } from "./memory/responses.js";
export { MemoryEventLog } from "./memory/events.js";
export { MemoryJobQueue } from "./memory/jobs.js";
export { MemoryConversationStore } from "./memory/conversations.js";
export { describeTarget, type RedisTarget } from "./redis/target.js";
