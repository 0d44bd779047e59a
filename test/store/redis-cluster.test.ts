import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createStores, type StorageConfig, type Stores } from "../../src/store/index.js";
import type { RedisJobQueue } from "../../src/store/redis/jobs.js";
import { chainTag } from "../../src/store/chain.js";
import { randomId } from "../../src/wire/ids.js";
import { startRedisCluster, type RedisCluster } from "../helpers/redis-cluster.js";
import { describeStoreContract, makeRecord, newId, waitFor } from "./contract.js";

/**
 * The store contract on a real Redis Cluster (3 primaries, 3 replicas on loopback), once with
 * writes acknowledged by the primary and once with `durability: replica`, and what a cluster
 * adds: keys that go together on one slot, spread keys on many, WAIT on the right shard.
 */
let cluster: RedisCluster;
let prefixes = 0;
const uniquePrefix = () => `rrcl:${process.pid}:${++prefixes}:`;

const config = (prefix: string, ttl = 60_000, extra: Partial<StorageConfig> = {}): StorageConfig => ({
  redis_url: "",
  redis: { cluster: cluster.nodes },
  prefix,
  ttl,
  memory: { max_entries: 100, max_bytes: 1_000_000 },
  jobs: { lock_duration: 1_000, stalled_interval: 300, max_stalled_count: 1 },
  ...extra,
});

beforeAll(async () => {
  cluster = await startRedisCluster();
}, 60_000);
afterAll(async () => {
  await cluster?.stop();
});

describeStoreContract("redis cluster", async (opts) => {
  const stores = await createStores(config(uniquePrefix(), opts?.ttlMs), undefined, { limiterLocalAfterMs: 10_000 });
  expect(await stores.responses.ping()).toBe(true);
  return stores;
});

describeStoreContract("redis cluster, durability: replica", async (opts) => {
  const stores = await createStores(config(uniquePrefix(), opts?.ttlMs, { durability: "replica", durability_timeout: 2_000 }), undefined, { limiterLocalAfterMs: 10_000 });
  expect(await stores.responses.ping()).toBe(true);
  return stores;
});

describe("redis cluster specifics", () => {
  const opened: Stores[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((s) => s.close()));
  });
  const open = async (prefix: string, extra: Partial<StorageConfig> = {}) => {
    const s = await createStores(config(prefix, 60_000, extra));
    opened.push(s);
    return s;
  };

  /** Every key under a prefix, from each primary. */
  async function keysByPrimary(prefix: string): Promise<Map<number, string[]>> {
    const out = new Map<number, string[]>();
    for (const port of await cluster.primaryPorts()) {
      const node = new Redis({ host: "127.0.0.1", port, lazyConnect: true });
      try {
        out.set(port, await node.keys(`*${prefix}*`));
      } finally {
        node.disconnect();
      }
    }
    return out;
  }

  it("spreads responses over the shards, and keeps a key's limiter, usage and BullMQ keys each on one slot", async () => {
    const prefix = uniquePrefix();
    const s = await open(prefix);
    // Router ids: each new chain's id carries a tag of its own, which spreads chains over the slots.
    for (let i = 0; i < 30; i++) await s.responses.save(makeRecord(randomId("resp")));
    await s.limiter.admit({ key: "team-a", limits: { requests_per_minute: 10, tokens_per_day: 1_000, tokens_per_month: 10_000, max_concurrent: 2 }, reserve: 5, slot: "s1", now: Date.now() });
    await s.usage.record({ day: "2026-11-28", key: "team-a", model: "m", requests: 1, input_tokens: 2, output_tokens: 3 });
    await s.usage.record({ day: "2026-11-27", key: "team-a", model: "m", requests: 1, input_tokens: 2, output_tokens: 3 });
    expect((await s.usage.query({ from: "2026-11-27", to: "2026-11-28" })).length).toBe(2);
    s.jobs.start(async () => {}, 1);
    await (s.jobs as RedisJobQueue).waitUntilReady();
    await s.jobs.enqueue({ responseId: newId(), payload: {} });

    const byPrimary = await keysByPrimary(prefix);
    const holding = [...byPrimary.values()].filter((keys) => keys.some((k) => k.startsWith(`${prefix}chain:`)));
    expect(holding.length).toBe(3);
    const slotsOf = async (pattern: RegExp) => {
      const keys = [...byPrimary.values()].flat().filter((k) => pattern.test(k));
      expect(keys.length).toBeGreaterThan(0);
      const node = new Redis({ host: "127.0.0.1", port: cluster.nodes[0]!.port, lazyConnect: true });
      try {
        return new Set(await Promise.all(keys.map((k) => node.cluster("KEYSLOT", k))));
      } finally {
        node.disconnect();
      }
    };
    expect((await slotsOf(/limit:/)).size).toBe(1);
    expect((await slotsOf(/usage/)).size).toBe(1);
    expect((await slotsOf(/bull/)).size).toBe(1);
  });

  it("durability: replica waits on the shard that took the write: the replica of the record's primary has it when save returns", async () => {
    const prefix = uniquePrefix();
    const s = await open(prefix, { durability: "replica", durability_timeout: 2_000 });
    // Records on every shard: WAIT on another shard's connection would return at once, confirming nothing.
    for (let i = 0; i < 9; i++) {
      const id = randomId("resp");
      await s.responses.save(makeRecord(id));
      const key = `${prefix}chain:{${chainTag(id)}}`;
      const primary = await cluster.primaryOf(key);
      const node = new Redis({ host: "127.0.0.1", port: primary, lazyConnect: true });
      try {
        const info = await node.info("replication");
        const replica = Number(/slave0:ip=[^,]+,port=(\d+)/.exec(info)?.[1]);
        const rep = new Redis({ host: "127.0.0.1", port: replica, lazyConnect: true });
        try {
          await rep.readonly();
          expect(await rep.exists(key)).toBe(1);
        } finally {
          rep.disconnect();
        }
      } finally {
        node.disconnect();
      }
    }
  });

  it("a job cancelled on one instance is aborted on the other, whichever nodes their connections reached", async () => {
    const prefix = uniquePrefix();
    const [a, b] = [await open(prefix), await open(prefix)];
    let started = "";
    let aborted = false;
    b.jobs.start(async (ctx, signal) => {
      started = ctx.responseId;
      await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
      aborted = true;
    }, 1);
    await (b.jobs as RedisJobQueue).waitUntilReady();
    const id = newId();
    await a.jobs.enqueue({ responseId: id, payload: {} });
    await waitFor(() => started === id, 10_000, "the job to start on b");
    await a.jobs.cancel(id);
    await waitFor(() => aborted, 5_000, "b to abort the job");
  });
});
