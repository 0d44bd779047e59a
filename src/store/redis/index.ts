/** Redis mode's stores, shared by every instance: loaded by createStores (store/index.ts) only when the config names a Redis. */
import type { Logger } from "pino";
import { eventsTtl, type StorageConfig, type StoreOptions } from "../options.js";
import type { Stores } from "../types.js";
import { closeClient, createRedisClient } from "./client.js";
import { RedisConversationStore } from "./conversations.js";
import { DurableWriter } from "./durable.js";
import { RedisEventLog } from "./events.js";
import { RedisJobQueue } from "./jobs.js";
import { RedisKeyStore } from "./keys.js";
import { RedisRateLimiter } from "./limiter.js";
import { RedisResponseCache, RedisResponseStore } from "./responses.js";
import type { RedisTarget } from "./target.js";
import { RedisUsageStore } from "./usage.js";

export function createRedisStores(target: RedisTarget, cfg: StorageConfig, logger: Logger | undefined, opts: StoreOptions): Stores {
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
  const keys = new RedisKeyStore(client, target, common);
  return {
    kind: "redis",
    responses,
    conversations,
    cache,
    events,
    jobs,
    limiter: new RedisRateLimiter(client, common),
    usage: new RedisUsageStore(client, common),
    keys,
    status: responses,
    async close() {
      await jobs.close();
      await Promise.all([keys.close(), closeClient(client), durable?.close()]);
    },
  };
}
