/**
 * What src/store/redis/ holds:
 * the Redis adapter, same set, built by `index.ts`; `target.ts` where Redis is (and how logs name
 * it) without ioredis; `client.ts` is the one place a Redis connection is made: a URL or a
 * Sentinel group, TLS, fail-fast calls; `durable.ts`: `storage.durability: replica`, the writes a
 * client depends on and their WAIT for one replica on connections of their own (never the shared
 * one)
 */
/** Redis mode's stores, shared by every instance: loaded by createStores (store/index.ts) only when the config names a Redis. */
import { Cluster } from "ioredis";
import type { Logger } from "pino";
import { eventsTtl, type StorageConfig, type StoreOptions } from "../options.js";
import type { Stores } from "../types.js";
import { closeClient, createRedisClient } from "./client.js";
import { RedisConversationStore } from "./conversations.js";
import { DurableWriter } from "./durable.js";
import { RedisEventLog } from "./events.js";
import { RedisFileStore } from "./files.js";
import { ClusterStateReader } from "./health.js";
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
  const responses = new RedisResponseStore(client, { ...common, ttlMs: cfg.ttl, durable, historyCacheBytes: cfg.history_cache_bytes });
  const conversations = new RedisConversationStore(client, { ...common, ttlMs: cfg.ttl, durable });
  const cache = new RedisResponseCache(client, { prefix: cfg.prefix, onError: opts.onCacheError });
  const events = new RedisEventLog(client, { ...common, ttlMs: eventsTtl(cfg), durable });
  const jobOptions = {
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
  };
  const jobs = new RedisJobQueue(jobOptions);
  // Indexing jobs: a queue of their own, so a restart or a dead instance hands them to another.
  const fileJobs = new RedisJobQueue({ ...jobOptions, queueName: "file-indexing" });
  const keys = new RedisKeyStore(client, target, common);
  return {
    kind: "redis",
    responses,
    conversations,
    cache,
    events,
    jobs,
    limiter: new RedisRateLimiter(client, { ...common, localAfterMs: opts.limiterLocalAfterMs }),
    usage: new RedisUsageStore(client, common),
    files: new RedisFileStore(client, { ...common, durable }),
    fileJobs,
    keys,
    status: responses,
    ...(client instanceof Cluster ? { cluster: new ClusterStateReader(client) } : {}),
    async close() {
      await Promise.all([jobs.close(), fileJobs.close()]);
      await Promise.all([keys.close(), closeClient(client), durable?.close()]);
    },
  };
}
