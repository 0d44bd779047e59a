import type { Logger } from "pino";
import { MemoryEventLog } from "./memory/events.js";
import { MemoryJobQueue } from "./memory/jobs.js";
import { MemoryConversationStore } from "./memory/conversations.js";
import { MemoryRateLimiter } from "./memory/limiter.js";
import { MemoryUsageStore } from "./memory/usage.js";
import { MemoryResponseCache, MemoryResponseStore } from "./memory/responses.js";
import type { RedisTarget } from "./redis/target.js";
import { eventsTtl, type StorageConfig, type StoreOptions } from "./options.js";
import type { StoreStatus, Stores } from "./types.js";

export type * from "./types.js";
export type * from "./limiter.js";
export type * from "./usage.js";
export { SLOT_TTL_MS, dayWindow, monthWindow } from "./limiter.js";
export type { StorageConfig, StoreOptions } from "./options.js";
export { StoreUnavailableError, EventOrderError, JobAbortedError, isTerminalEvent, jobAbortKind } from "./types.js";

const alwaysConnected: StoreStatus = { connected: true, onStatusChange: () => () => {} };

/** The Redis the config names, or null for the in-process store. */
export function redisTarget(cfg: Pick<StorageConfig, "redis_url" | "redis">): RedisTarget | null {
  if (!cfg.redis_url && !cfg.redis?.sentinels) return null;
  return { ...cfg.redis, url: cfg.redis_url || undefined };
}


/**
 * The one place that chooses memory or Redis. Everything else sees only the interfaces,
 * so a single instance and a fleet sharing one Redis run the same code.
 */
export async function createStores(cfg: StorageConfig, logger?: Logger, opts: StoreOptions = {}): Promise<Stores> {
  const target = redisTarget(cfg);
  if (!target) {
    const limits = { maxEntries: cfg.memory.max_entries, maxBytes: cfg.memory.max_bytes };
    const responses = new MemoryResponseStore({ ...limits, ttlMs: cfg.ttl });
    const conversations = new MemoryConversationStore({ ...limits, ttlMs: cfg.ttl });
    const cache = new MemoryResponseCache(limits);
    const events = new MemoryEventLog({ ...limits, ttlMs: eventsTtl(cfg) });
    const jobs = new MemoryJobQueue({ cancelTtlMs: cfg.ttl, logger });
    return {
      kind: "memory",
      responses,
      conversations,
      cache,
      events,
      jobs,
      limiter: new MemoryRateLimiter(),
      usage: new MemoryUsageStore(),
      status: alwaysConnected,
      async close() {
        await jobs.close();
        await Promise.all([responses.close(), conversations.close(), cache.close(), events.close()]);
      },
    };
  }

  // Only Redis mode loads the Redis client and BullMQ (~12 MB a memory-store router never needs).
  const { createRedisStores } = await import("./redis/index.js");
  return createRedisStores(target, cfg, logger, opts);
}

export { MemoryResponseStore, MemoryResponseCache } from "./memory/responses.js";
export { MemoryEventLog } from "./memory/events.js";
export { MemoryJobQueue } from "./memory/jobs.js";
export { MemoryConversationStore } from "./memory/conversations.js";
export { describeTarget, type RedisTarget } from "./redis/target.js";
