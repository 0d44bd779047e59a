/**
 * What a key's limits cost per request, in process: one admit() before the upstream call
 * and one settle() after it (the two calls a limited key's request makes), plus the usage
 * row every inference request records. Memory: CPU µs per request. Redis: the same two
 * calls are one Lua round trip each; measured sequentially (latency the request waits for
 * admit, p50/p99) and the client-side CPU per request.
 * Run alone: `node --import tsx test/bench/limiter.ts [redis://127.0.0.1:6379]`.
 */
import { createRedisClient } from "../../src/store/redis/client.js";
import { MemoryRateLimiter } from "../../src/store/memory/limiter.js";
import { MemoryUsageStore } from "../../src/store/memory/usage.js";
import { RedisRateLimiter } from "../../src/store/redis/limiter.js";
import { RedisUsageStore } from "../../src/store/redis/usage.js";
import type { KeyLimits, RateLimiter } from "../../src/store/limiter.js";
import type { UsageStore } from "../../src/store/usage.js";

export interface LimiterCost {
  kind: "memory" | "redis";
  requests: number;
  /** admit + settle, CPU of this process per request. */
  cpuUsPerRequest: number;
  /** Wall time of admit (what a request waits for before its upstream call). */
  admitP50Us: number;
  admitP99Us: number;
  /** One usage row (record), CPU per request. */
  usageCpuUsPerRequest: number;
}

/** Every limit on, none ever reached: the full check runs on each request. */
const LIMITS: KeyLimits = { requests_per_minute: 1e9, tokens_per_minute: 1e12, max_concurrent: 1e6, tokens_per_day: 1e15, tokens_per_month: 1e15 };

async function measure(kind: LimiterCost["kind"], limiter: RateLimiter, usage: UsageStore, n: number): Promise<LimiterCost> {
  const admitUs: number[] = [];
  const run = async (count: number, record: boolean) => {
    for (let i = 0; i < count; i++) {
      const now = Date.now();
      const t0 = performance.now();
      await limiter.admit({ key: "bench", slot: `s${i}`, limits: LIMITS, reserve: 20, now });
      if (record) admitUs.push((performance.now() - t0) * 1000);
      await limiter.settle({ key: "bench", slot: `s${i}`, limits: LIMITS, reserved: 20, actual: 17, admittedAt: now, now });
    }
  };
  await run(Math.min(500, n), false); // warm-up (JIT, connection, script load)
  const c0 = process.cpuUsage();
  await run(n, true);
  const c = process.cpuUsage(c0);
  const u0 = process.cpuUsage();
  for (let i = 0; i < n; i++) await usage.record({ day: "2026-06-15", key: "bench", model: "m", requests: 1, input_tokens: 12, output_tokens: 5 });
  const u = process.cpuUsage(u0);
  admitUs.sort((a, b) => a - b);
  return {
    kind,
    requests: n,
    cpuUsPerRequest: (c.user + c.system) / n,
    admitP50Us: admitUs[Math.floor(n * 0.5)]!,
    admitP99Us: admitUs[Math.floor(n * 0.99)]!,
    usageCpuUsPerRequest: (u.user + u.system) / n,
  };
}

export async function measureLimiter(redisUrl: string | null, n = 5_000): Promise<LimiterCost[]> {
  const out = [await measure("memory", new MemoryRateLimiter(), new MemoryUsageStore(), n * 10)];
  if (redisUrl) {
    const client = createRedisClient(redisUrl, { connectionName: "rr-bench-limiter" });
    try {
      const prefix = `rrbench:${process.pid}:`;
      out.push(await measure("redis", new RedisRateLimiter(client, { prefix }), new RedisUsageStore(client, { prefix }), n));
    } finally {
      client.disconnect();
    }
  }
  return out;
}

export function limiterLine(c: LimiterCost): string {
  const f = (v: number, d = 1) => v.toFixed(d);
  return `per-key limits, ${c.kind} (admit + settle, every limit on; ${c.requests} requests in process): ${f(c.cpuUsPerRequest, 2)} µs CPU per request, admit waits p50 ${f(c.admitP50Us)} µs / p99 ${f(c.admitP99Us)} µs; usage row ${f(c.usageCpuUsPerRequest, 2)} µs CPU per request`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const c of await measureLimiter(process.argv[2] ?? null)) console.log(limiterLine(c));
}
