import { describe, expect, it } from "vitest";
import { SLOT_TTL_MS, type KeyLimits, type Stores } from "../../src/store/index.js";

let n = 0;
/** A key name no other test (or earlier run on the same Redis) has used. */
const freshKey = () => `key-${process.pid}-${Date.now().toString(36)}-${++n}`;
/** Noon UTC on some day: far from a day boundary. */
const NOON = Date.UTC(2026, 5, 15, 12, 0, 0);

/** The rate limiter part of the store contract (called from contract.ts). */
export function describeLimiterContract(open: () => Promise<Stores>): void {
  describe("rate limiter", () => {
    it("requests_per_minute: a bucket of one minute's allowance that refills continuously", async () => {
      const { limiter } = await open();
      const key = freshKey();
      const limits: KeyLimits = { requests_per_minute: 3 };
      const admit = (now: number, slot = "s") => limiter.admit({ key, slot, limits, reserve: 0, now });
      const seen = [];
      for (let i = 0; i < 3; i++) seen.push(await admit(NOON));
      expect(seen.map((a) => [a.refused, a.requests?.remaining])).toEqual([[null, 2], [null, 1], [null, 0]]);
      expect(seen[2]!.requests).toEqual({ limit: 3, remaining: 0, resetMs: 60_000 });
      expect(seen[2]!.tokens).toBeNull();
      const refused = await admit(NOON);
      expect(refused).toMatchObject({ refused: "requests", retryAfterMs: 20_000, requests: { limit: 3, remaining: 0 } });
      expect((await admit(NOON + 19_999)).refused).toBe("requests");
      expect(await admit(NOON + 20_000)).toMatchObject({ refused: null, requests: { remaining: 0, resetMs: 60_000 } });
      // A full minute later the whole allowance is back.
      expect((await admit(NOON + 80_000)).requests).toEqual({ limit: 3, remaining: 2, resetMs: 20_000 });
    });

    it("tokens_per_minute: reserves up front, settle() corrects to the actual count", async () => {
      const { limiter } = await open();
      const key = freshKey();
      const limits: KeyLimits = { tokens_per_minute: 100 };
      const first = await limiter.admit({ key, slot: "a", limits, reserve: 10, now: NOON });
      expect(first).toMatchObject({ refused: null, requests: null, tokens: { limit: 100, remaining: 90, resetMs: 6_000 } });
      await limiter.settle({ key, slot: "a", limits, reserved: 10, actual: 70, admittedAt: NOON, now: NOON });
      expect((await limiter.admit({ key, slot: "b", limits, reserve: 10, now: NOON })).tokens?.remaining).toBe(20);
      // 50 needed, 20 left: refused until 30 more have refilled (30 * 600 ms).
      expect(await limiter.admit({ key, slot: "c", limits, reserve: 50, now: NOON })).toMatchObject({ refused: "tokens", retryAfterMs: 18_000, tokens: { remaining: 20 } });
      // Asking for more than the whole minute's allowance needs only a full bucket.
      expect((await limiter.admit({ key, slot: "d", limits, reserve: 500, now: NOON + 60_000 })).refused).toBeNull();
      // A reservation that was too high is given back.
      await limiter.settle({ key, slot: "d", limits, reserved: 500, actual: 5, admittedAt: NOON + 60_000, now: NOON + 60_000 });
      expect((await limiter.admit({ key, slot: "e", limits, reserve: 0, now: NOON + 60_000 })).tokens?.remaining).toBe(95);
    });

    it("max_concurrent: slots are held until settled; hold() takes one without checking", async () => {
      const { limiter } = await open();
      const key = freshKey();
      const limits: KeyLimits = { max_concurrent: 2 };
      const admit = (slot: string) => limiter.admit({ key, slot, limits, reserve: 0, now: NOON });
      expect((await admit("a")).refused).toBeNull();
      expect((await admit("b")).refused).toBeNull();
      expect(await admit("c")).toMatchObject({ refused: "concurrency", retryAfterMs: 1_000 });
      await limiter.settle({ key, slot: "a", limits, reserved: 0, actual: 0, admittedAt: NOON, now: NOON });
      expect((await admit("c")).refused).toBeNull();
      await limiter.settle({ key, slot: "b", limits, reserved: 0, actual: 0, admittedAt: NOON, now: NOON });
      await limiter.hold(key, "job", NOON);
      expect((await admit("d")).refused).toBe("concurrency");
      // A holder that never settles (its instance died) lets go after SLOT_TTL_MS.
      expect((await limiter.admit({ key, slot: "e", limits, reserve: 0, now: NOON + SLOT_TTL_MS + 1 })).refused).toBeNull();
    });

    it("tokens_per_day: refused once the UTC day's count reached the budget, until the next day", async () => {
      const { limiter } = await open();
      const key = freshKey();
      const limits: KeyLimits = { tokens_per_day: 100 };
      expect((await limiter.admit({ key, slot: "a", limits, reserve: 10, now: NOON })).refused).toBeNull();
      await limiter.settle({ key, slot: "a", limits, reserved: 10, actual: 60, admittedAt: NOON, now: NOON });
      expect((await limiter.admit({ key, slot: "b", limits, reserve: 10, now: NOON })).refused).toBeNull();
      await limiter.settle({ key, slot: "b", limits, reserved: 10, actual: 40, admittedAt: NOON, now: NOON });
      expect(await limiter.admit({ key, slot: "c", limits, reserve: 1, now: NOON })).toMatchObject({ refused: "tokens_per_day", retryAfterMs: 12 * 3_600_000 });
      expect((await limiter.admit({ key, slot: "d", limits, reserve: 1, now: NOON + 12 * 3_600_000 })).refused).toBeNull();
    });

    it("tokens_per_month: counts the calendar month (UTC)", async () => {
      const { limiter } = await open();
      const key = freshKey();
      const limits: KeyLimits = { tokens_per_month: 50 };
      expect((await limiter.admit({ key, slot: "a", limits, reserve: 50, now: NOON })).refused).toBeNull();
      expect((await limiter.admit({ key, slot: "b", limits, reserve: 1, now: NOON + 86_400_000 })).refused).toBe("tokens_per_month");
      expect((await limiter.admit({ key, slot: "c", limits, reserve: 1, now: Date.UTC(2026, 6, 1) })).refused).toBeNull();
    });

    it("charges all limits or none, atomically under concurrency, per key", async () => {
      const { limiter } = await open();
      const key = freshKey();
      const other = freshKey();
      const limits: KeyLimits = { requests_per_minute: 5, max_concurrent: 100 };
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => limiter.admit({ key, slot: `s${i}`, limits, reserve: 0, now: NOON })));
      expect(results.filter((r) => r.refused === null)).toHaveLength(5);
      // Refused requests took no slot; another key has its own buckets.
      expect((await limiter.admit({ key: other, slot: "x", limits: { max_concurrent: 1, requests_per_minute: 1 }, reserve: 0, now: NOON })).refused).toBeNull();
      const concurrent: KeyLimits = { max_concurrent: 5 };
      const slots = await Promise.all(Array.from({ length: 12 }, (_, i) => limiter.admit({ key: `${key}-c`, slot: `c${i}`, limits: concurrent, reserve: 0, now: NOON })));
      expect(slots.filter((r) => r.refused === null)).toHaveLength(5);
    });
  });
}
