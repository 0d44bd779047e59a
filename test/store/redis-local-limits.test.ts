import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createStores, dayWindow, type KeyLimits, type Stores } from "../../src/store/index.js";
import { startRedis, type RedisServerHandle } from "../helpers/redis-server.js";
import { waitFor } from "./contract.js";

/**
 * Limits and usage while Redis is away: a request never waits for it (the instance counts on
 * its own, from the state Redis last reported), and what was counted meanwhile reaches Redis
 * once it is back. A real redis-server (with AOF, so a restart keeps its counts) is stopped,
 * restarted and frozen (SIGSTOP) under the stores.
 */
const NOON = Date.UTC(2026, 5, 15, 12, 0, 0);
const DAY = dayWindow(NOON).id;
let redis: RedisServerHandle;
let dir: string;
let raw: Redis;
let stores: Stores;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "rr-local-limits-"));
  redis = await startRedis({ persistDir: dir });
  raw = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  raw.on("error", () => {});
  stores = await createStores({ redis_url: redis.url, prefix: `rrlocal:${process.pid}:`, ttl: 60_000, memory: { max_entries: 10, max_bytes: 100_000 } });
  await raw.connect();
  await waitFor(() => stores.status.connected, 5_000);
});
afterAll(async () => {
  await stores?.close();
  raw?.disconnect();
  await redis?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const dayCounter = (key: string) => raw.get(`rrlocal:${process.pid}:limit:${key}:day:${DAY}`).then(Number);
const connected = () => stores.status.connected;

describe("limits and usage while Redis is away", () => {
  it("a stopped Redis: admit counts on the instance from what Redis last reported; the tokens reach Redis when it is back", async () => {
    const { limiter, usage } = stores;
    const key = "team-stopped";
    const limits: KeyLimits = { requests_per_minute: 3, tokens_per_day: 10_000 };
    const first = await limiter.admit({ key, slot: "r1", limits, reserve: 100, now: NOON });
    expect(first).toMatchObject({ refused: null, requests: { remaining: 2 } });
    expect(first.local).toBeUndefined();
    await limiter.settle({ key, slot: null, limits, reserved: 100, actual: 100, admittedAt: NOON, now: NOON });

    await redis.stop();
    await waitFor(() => !connected(), 5_000);
    // The bucket Redis reported (2 left) goes on here: two more pass, the third is refused.
    const during = [];
    for (let i = 0; i < 3; i++) during.push(await limiter.admit({ key, slot: `d${i}`, limits, reserve: 100, now: NOON }));
    expect(during.map((a) => [a.refused, a.requests?.remaining, a.local !== undefined])).toEqual([
      [null, 1, true],
      [null, 0, true],
      ["requests", 0, false],
    ]);
    for (const a of during.slice(0, 2)) await limiter.settle({ key, slot: null, limits, reserved: 100, actual: 300, admittedAt: NOON, now: NOON, local: a.local });
    // Usage counted meanwhile is kept too.
    await usage.record({ day: DAY, key, model: "m", requests: 2, input_tokens: 400, output_tokens: 200 });
    await usage.record({ day: DAY, key, model: "m", requests: 1, input_tokens: 10, output_tokens: 5 });

    await redis.restart();
    await waitFor(connected, 10_000);
    // Redis had 100 of the day's budget; the two requests counted here used 300 each.
    await waitFor(async () => (await dayCounter(key)) === 700, 10_000);
    await waitFor(async () => (await usage.query({ key, from: DAY, to: DAY })).length === 1, 10_000);
    expect(await usage.query({ key, from: DAY, to: DAY })).toEqual([{ day: DAY, key, model: "m", requests: 3, input_tokens: 410, output_tokens: 205 }]);
    // Back on Redis's count.
    const after = await limiter.admit({ key, slot: "a1", limits, reserve: 0, now: NOON + 60_000 });
    expect(after.local).toBeUndefined();
  }, 40_000);

  it("a frozen Redis (connected, never answering): admit does not wait for it, and a charge it made after all is corrected, not doubled", async () => {
    const { limiter } = stores;
    const key = "team-frozen";
    const limits: KeyLimits = { tokens_per_day: 10_000, max_concurrent: 5 };
    await limiter.admit({ key, slot: "warm", limits, reserve: 50, now: NOON });
    await limiter.settle({ key, slot: "warm", limits, reserved: 50, actual: 50, admittedAt: NOON, now: NOON });
    await waitFor(async () => (await dayCounter(key)) === 50, 5_000);

    redis.pause();
    try {
      // Redis cannot answer while frozen: the admission is this instance's own.
      const a = await limiter.admit({ key, slot: "f1", limits, reserve: 100, now: NOON });
      expect(a.refused).toBeNull();
      expect(a.local).toMatchObject({ remote: false });
      redis.resume();
      // The queued script runs once Redis thaws: Redis charged the reservation after all.
      await waitFor(() => a.local!.remote, 5_000);
      await limiter.settle({ key, slot: "f1", limits, reserved: 100, actual: 400, admittedAt: NOON, now: NOON, local: a.local });
      await waitFor(async () => (await dayCounter(key)) === 450, 5_000);
      expect(await raw.zcard(`rrlocal:${process.pid}:limit:${key}:slots`)).toBe(0);
    } finally {
      redis.resume();
    }
  }, 30_000);
});
