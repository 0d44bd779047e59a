/** The embedded stores of a single instance: what createStores (store/index.ts) builds when the config names no Redis. */
import type { Logger } from "pino";
import { eventsTtl, type StorageConfig } from "../options.js";
import type { StoreStatus, Stores } from "../types.js";
import { MemoryConversationStore } from "./conversations.js";
import { MemoryEventLog } from "./events.js";
import { MemoryJobQueue } from "./jobs.js";
import { MemoryKeyStore } from "./keys.js";
import { MemoryRateLimiter } from "./limiter.js";
import { MemoryResponseCache, MemoryResponseStore } from "./responses.js";
import { MemoryUsageStore } from "./usage.js";

const alwaysConnected: StoreStatus = { connected: true, onStatusChange: () => () => {} };

export function createMemoryStores(cfg: StorageConfig, logger: Logger | undefined): Stores {
  const limits = { maxEntries: cfg.memory.max_entries, maxBytes: cfg.memory.max_bytes };
  const responses = new MemoryResponseStore({ ...limits, ttlMs: cfg.ttl });
  const conversations = new MemoryConversationStore({ ...limits, ttlMs: cfg.ttl });
  const cache = new MemoryResponseCache(limits);
  const events = new MemoryEventLog({ ...limits, ttlMs: eventsTtl(cfg) });
  const jobs = new MemoryJobQueue({ cancelTtlMs: cfg.ttl, logger });
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
    keys,
    status: alwaysConnected,
    async close() {
      await jobs.close();
      await Promise.all([responses.close(), conversations.close(), cache.close(), events.close(), keys.close()]);
    },
  };
}
