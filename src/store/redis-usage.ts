import type { Redis } from "ioredis";
import { redisCall } from "./redis-client.js";
import { daysBetween, rowsOfDay, SEP, USAGE_RETENTION_DAYS, type UsageQuery, type UsageRow, type UsageStore } from "./usage.js";

/** Usage counts shared by every instance: one hash per UTC day (`${prefix}usage:YYYY-MM-DD`). */
export class RedisUsageStore implements UsageStore {
  constructor(
    private readonly client: Redis,
    private readonly opts: { prefix: string; readyTimeoutMs?: number },
  ) {}

  private dayKey(day: string): string {
    return `${this.opts.prefix}usage:${day}`;
  }

  async record(row: UsageRow): Promise<void> {
    const key = this.dayKey(row.day);
    const base = row.key + SEP + row.model + SEP;
    await redisCall(
      this.client,
      "usage.record",
      () =>
        this.client
          .multi()
          .hincrby(key, `${base}r`, row.requests)
          .hincrby(key, `${base}i`, row.input_tokens)
          .hincrby(key, `${base}o`, row.output_tokens)
          .expire(key, USAGE_RETENTION_DAYS * 86_400)
          .exec(),
      this.opts.readyTimeoutMs,
    );
  }

  async query(q: UsageQuery): Promise<UsageRow[]> {
    const days = daysBetween(q.from, q.to);
    if (days.length === 0) return [];
    const replies = await redisCall(
      this.client,
      "usage.query",
      () => days.reduce((p, d) => p.hgetall(this.dayKey(d)), this.client.pipeline()).exec(),
      this.opts.readyTimeoutMs,
    );
    return days.flatMap((d, i) => {
      const [err, hash] = replies?.[i] ?? [null, {}];
      if (err) throw err;
      return rowsOfDay(d, Object.entries(hash as Record<string, string>).map(([f, v]) => [f, Number(v)] as [string, number]), q.key);
    });
  }

  async close(): Promise<void> {}
}
