import type { Logger } from "pino";
import { MemoryEventLog } from "./memory/events.js";
import { MemoryJobQueue } from "./memory/jobs.js";
import { MemoryConversationStore } from "./memory/conversations.js";
import { MemoryRateLimiter } from "./memory/limiter.js";
import { MemoryUsageStore } from "./memory/usage.js";
import { MemoryResponseCache, MemoryResponseStore } from "./memory/responses.js";
import { closeClient, createRedisClient, type RedisTarget } from "./redis/client.js";
import { DurableWriter } from "./redis/durable.js";
import { RedisConversationStore } from "./redis/conversations.js";
import { RedisEventLog } from "./redis/events.js";
import { RedisJobQueue } from "./redis/jobs.js";
import { RedisRateLimiter } from "./redis/limiter.js";
import { RedisUsageStore } from "./redis/usage.js";
import { RedisResponseCache, RedisResponseStore, type CacheErrorHook } from "./redis/responses.js";
import type { StoreStatus, Stores } from "./types.js";

export type * from "./types.js";
export type * from "./limiter.js";
export type * from "./usage.js";
export { SLOT_TTL_MS, dayWindow, monthWindow } from "./limiter.js";
export { StoreUnavailableError, EventOrderError, JobAbortedError, isTerminalEvent, jobAbortKind } from "./types.js";

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
  memory: { max_entries: number; max_bytes: number };
  /** Lease tuning for background jobs in Redis mode (tests shorten these). */
  jobs?: { lock_duration?: number; stalled_interval?: number; max_stalled_count?: number };
}

export interface StoreOptions {
  /** Counts cache errors (they are served as misses). */
  onCacheError?: CacheErrorHook;
  /** How long a store call waits for a reconnecting Redis before StoreUnavailableError (default 500 ms). */
  readyTimeoutMs?: number;
}

const alwaysConnected: StoreStatus = { connected: true, onStatusChange: () => () => {} };

/** The Redis the config names, or null for the in-process store. */
export function redisTarget(cfg: Pick<StorageConfig, "redis_url" | "redis">): RedisTarget | null {
  if (!cfg.redis_url && !cfg.redis?.sentinels) return null;
  return { ...cfg.redis, url: cfg.redis_url || undefined };
}

const eventsTtl = (cfg: StorageConfig) => Math.min(cfg.events_ttl ?? cfg.ttl, cfg.ttl);

/**
 * The one place that chooses memory or Redis. Everything else sees only the interfaces,
 * so a single instance and a fleet sharing one Redis run the same code.
 */
export function createStores(cfg: StorageConfig, logger?: Logger, opts: StoreOptions = {}): Stores {
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

  const client = createRedisClient(target, { connectionName: "rr-store" });
  // Writes that wait for a replica run on connections of their own: a WAIT never holds the shared one.
  const durable = cfg.durability === "replica" ? new DurableWriter(target, { timeoutMs: cfg.durability_timeout ?? 1_000, readyTimeoutMs: opts.readyTimeoutMs }) : undefined;
  const common = { prefix: cfg.prefix, readyTimeoutMs: opts.readyTimeoutMs };
  const responses = new RedisResponseStore(client, { ...common, ttlMs: cfg.ttl, durable });
  const conversations = new RedisConversationStore(client, { ...common, ttlMs: cfg.ttl, durable });
  const cache = new RedisResponseCache(client, { prefix: cfg.prefix, onError: opts.onCacheError });
  const events = new RedisEventLog(client, { ...common, ttlMs: eventsTtl(cfg) });
  const jobs = new RedisJobQueue({
    target,
    client,
    prefix: cfg.prefix,
    ttlMs: cfg.ttl,
    lockDurationMs: cfg.jobs?.lock_duration,
    stalledIntervalMs: cfg.jobs?.stalled_interval,
    maxStalledCount: cfg.jobs?.max_stalled_count,
    readyTimeoutMs: opts.readyTimeoutMs,
    durable,
    logger,
  });
  return {
    kind: "redis",
    responses,
    conversations,
    cache,
    events,
    jobs,
    limiter: new RedisRateLimiter(client, common),
    usage: new RedisUsageStore(client, common),
    status: responses,
    async close() {
      await jobs.close();
      await Promise.all([closeClient(client), durable?.close()]);
    },
  };
}

export { MemoryResponseStore, MemoryResponseCache } from "./memory/responses.js";
export { MemoryEventLog } from "./memory/events.js";
export { MemoryJobQueue } from "./memory/jobs.js";
export { RedisResponseStore, RedisResponseCache } from "./redis/responses.js";
export { RedisEventLog } from "./redis/events.js";
export { MemoryConversationStore } from "./memory/conversations.js";
export { RedisConversationStore } from "./redis/conversations.js";
export { RedisJobQueue } from "./redis/jobs.js";
export { createRedisClient, describeTarget, RedisStatus, type RedisTarget } from "./redis/client.js";
