/**
 * What src/store/memory/ holds:
 * the embedded adapter: responses and cache, conversations, events, jobs, limiter, usage, and the
 * bounded LRU they keep their strings in
 */
/** The embedded stores of a single instance: what createStores (store/index.ts) builds when the config names no Redis. */
import type { Logger } from "pino";
import { eventsTtl, type StorageConfig } from "../options.js";
import type { StoreStatus, Stores } from "../types.js";
import { MemoryChains } from "./chains.js";
import { MemoryConversationStore } from "./conversations.js";
import { MemoryEventLog } from "./events.js";
import { MemoryFileStore } from "./files.js";
import { MemoryJobQueue } from "./jobs.js";
import { MemoryKeyStore } from "./keys.js";
import { MemoryRateLimiter } from "./limiter.js";
import { MemoryResponseCache, MemoryResponseStore } from "./responses.js";
import { MemoryUsageStore } from "./usage.js";

const alwaysConnected: StoreStatus = { connected: true, onStatusChange: () => () => {} };

export function createMemoryStores(cfg: StorageConfig, logger: Logger | undefined): Stores {
  const limits = { maxEntries: cfg.memory.max_entries, maxBytes: cfg.memory.max_bytes };
  // One set of chains for both: a response made in a conversation links to its items.
  const chains = new MemoryChains(limits, cfg.ttl);
  const responses = new MemoryResponseStore({ ...limits, ttlMs: cfg.ttl }, chains);
  const conversations = new MemoryConversationStore({ ...limits, ttlMs: cfg.ttl }, chains);
  const cache = new MemoryResponseCache(limits);
  const events = new MemoryEventLog({ ...limits, ttlMs: eventsTtl(cfg) });
  const jobs = new MemoryJobQueue({ cancelTtlMs: cfg.ttl, logger });
  const fileJobs = new MemoryJobQueue({ cancelTtlMs: cfg.ttl, logger });
  const keys = new MemoryKeyStore();
  return {
    kind: "memory",
    responses,
    conversations,
    cache,
    events,
    jobs,
    limiter: new MemoryRateLimiter(),
    usage: new MemoryUsageStore(),
    files: new MemoryFileStore(),
    fileJobs,
    keys,
    status: alwaysConnected,
    async close() {
      await Promise.all([jobs.close(), fileJobs.close()]);
      await Promise.all([responses.close(), conversations.close(), cache.close(), events.close(), keys.close()]);
    },
  };
}
