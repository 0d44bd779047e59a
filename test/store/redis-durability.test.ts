import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createStores, StoreUnavailableError, type StorageConfig, type Stores } from "../../src/store/index.js";
import { startSentinelGroup, type SentinelGroup } from "../helpers/redis-sentinel.js";
import { startRedis, type RedisServerHandle } from "../helpers/redis-server.js";
import { describeStoreContract, makeRecord, newId, waitFor } from "./contract.js";
import { chainTag } from "../../src/store/chain.js";
import { chainKeys } from "../../src/store/redis/chain-scripts.js";

/**
 * storage.durability: replica over real servers: a primary with one replica (no sentinels),
 * and a lone primary that has none.
 */
let pair: SentinelGroup;
let lone: RedisServerHandle;
let prefixes = 0;
const uniquePrefix = () => `rrdur:${process.pid}:${++prefixes}:`;
const url = (port: number) => `redis://127.0.0.1:${port}`;

// 2 s for a replica to confirm: with the whole suite on 2 cores a starved replica took over 300 ms.
const config = (redisUrl: string, prefix: string, ttl = 60_000, durabilityMs = 2_000): StorageConfig => ({
  redis_url: redisUrl,
  durability: "replica",
  durability_timeout: durabilityMs,
  prefix,
  ttl,
  memory: { max_entries: 100, max_bytes: 1_000_000 },
  jobs: { lock_duration: 1_000, stalled_interval: 300, max_stalled_count: 1 },
});

beforeAll(async () => {
  [pair, lone] = await Promise.all([startSentinelGroup({ replicas: 1, sentinels: 0 }), startRedis()]);
}, 30_000);
afterAll(async () => {
  await Promise.all([pair?.stop(), lone?.stop()]);
});

// Every store operation behaves the same when its writes wait for a replica.
// The limiter's own count when Redis is slow is tested on its own (redis-local-limits): here Redis's count, however loaded the machine.
describeStoreContract("redis, durability: replica", async (opts) => await createStores(config(url(pair.initial.primary), uniquePrefix(), opts?.ttlMs), undefined, { limiterLocalAfterMs: 10_000 }));

describe("durability: replica", () => {
  it("a save returns only once the replica has the response", async () => {
    const prefix = uniquePrefix();
    const stores: Stores = await createStores(config(url(pair.initial.primary), prefix));
    const replica = new Redis(pair.initial.replicas[0]!, "127.0.0.1", { lazyConnect: true });
    try {
      await replica.connect();
      for (let i = 0; i < 20; i++) {
        const rec = makeRecord(newId());
        await stores.responses.save(rec);
        // Read straight from the replica right after the acknowledgement.
        expect(await replica.hexists(chainKeys(prefix, chainTag(rec.response.id)).hash, `${rec.response.id}:s`)).toBe(1);
      }
    } finally {
      replica.disconnect();
      await stores.close();
    }
  });

  it("a final status saved by saveIfOpen is on the replica when it returns; a refused write waits for nothing", async () => {
    const prefix = uniquePrefix();
    const stores: Stores = await createStores(config(url(pair.initial.primary), prefix));
    const replica = new Redis(pair.initial.replicas[0]!, "127.0.0.1", { lazyConnect: true });
    try {
      await replica.connect();
      const id = newId();
      const rec = makeRecord(id);
      await stores.responses.save({ ...rec, response: { ...rec.response, status: "in_progress" } });
      expect(await stores.responses.saveIfOpen({ ...rec, response: { ...rec.response, status: "failed" } })).toBe("saved");
      expect(await replica.hget(chainKeys(prefix, chainTag(id)).hash, `${id}:s`)).toBe("failed");
      expect(await stores.responses.saveIfOpen(rec)).toBe("finished");
    } finally {
      replica.disconnect();
      await stores.close();
    }
  });

  it("with no replica to confirm, writes fail as store unavailable (the router answers 503) instead of being acknowledged", async () => {
    const stores = await createStores(config(lone.url, uniquePrefix(), 60_000, 300));
    try {
      const err = await stores.responses.save(makeRecord(newId())).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(StoreUnavailableError);
      expect((err as Error).message).toMatch(/no replica confirmed the write within 300 ms/);
      // Known now: the next write asks the primary first and fails without writing or waiting.
      const id = newId();
      const next = await stores.responses.save(makeRecord(id)).catch((e: unknown) => e);
      expect((next as Error).message).toMatch(/the primary has no replica to confirm the write/);
      expect(await stores.responses.get(id)).toBeNull();
      await expect(stores.conversations.create({ conversation: { id: "conv_1", object: "conversation", created_at: 0, metadata: {} }, owner: null, endpoint: null }, [])).rejects.toBeInstanceOf(StoreUnavailableError);
      await expect(stores.jobs.enqueue({ responseId: newId(), payload: {} })).rejects.toBeInstanceOf(StoreUnavailableError);
      // While the primary is known to have no replica, even a conditional write that would write nothing is refused first.
      await expect(stores.responses.saveIfOpen(makeRecord(newId()))).rejects.toBeInstanceOf(StoreUnavailableError);
      // Reads do not wait for anything.
      expect(await stores.responses.get(newId())).toBeNull();
    } finally {
      await stores.close();
    }
  });

  it("a WAIT never holds the connection every other store call shares, and waiting writes fail within the bound", async () => {
    // No replica: each WAIT holds its connection for the whole durability timeout.
    const stores = await createStores(config(lone.url, uniquePrefix(), 60_000, 1_500), undefined, { readyTimeoutMs: 300 });
    const admin = new Redis(lone.port, "127.0.0.1");
    try {
      // Connections up, with a conditional write that writes nothing (so waits for nothing): one whose
      // WAIT failed would make the next writes ask for a replica and fail without a WAIT.
      expect(await stores.responses.saveIfOpen(makeRecord(newId()))).toBe("missing");
      const errors: unknown[] = [];
      const saves = Array.from({ length: 10 }, () => stores.responses.save(makeRecord(newId())).catch((e: unknown) => void errors.push(e)));
      // Eight durable connections each sit in WAIT at once (not one after another on one connection).
      for (let i = 0; i < 100; i++) {
        const waiting = ((await admin.client("LIST")) as string).split("\n").filter((l) => / cmd=wait /.test(l)).length;
        if (waiting === 8) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(((await admin.client("LIST")) as string).split("\n").filter((l) => / cmd=wait /.test(l))).toHaveLength(8);
      // Meanwhile the shared connection answers at once: reads and the limiter (what store: false requests use).
      expect(await stores.responses.get(newId())).toBeNull();
      const admitted = await stores.limiter.admit({ key: "k", slot: "s", limits: { requests_per_minute: 100 }, reserve: 0, now: Date.now() });
      expect(admitted.refused).toBeNull();
      // The two writes with no free connection give up after the ready timeout, long before the WAITs end.
      await waitFor(() => errors.length >= 2, 5_000, "the writes with no free connection to give up");
      expect(errors).toHaveLength(2);
      for (const e of errors) expect((e as Error).message).toMatch(/every durable-write connection is still waiting for a replica/);
      await Promise.all(saves);
      expect(errors).toHaveLength(10);
      for (const e of errors.slice(2)) expect((e as Error).message).toMatch(/no replica confirmed the write within 1500 ms/);
      for (const e of errors) expect(e).toBeInstanceOf(StoreUnavailableError);
    } finally {
      admin.disconnect();
      await stores.close();
    }
  });
});
