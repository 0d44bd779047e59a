import { hashTag, redisCall, type RedisClient } from "./client.js";
import { daysBetween, rowsOfDay, SEP, USAGE_RETENTION_DAYS, type UsageQuery, type UsageRow, type UsageStore } from "../usage.js";

/** One row in one call (a MULTI of four commands costs about twice the client CPU). KEYS: the day's hash; ARGV: field base, r, i, o, ttl s. */
const RECORD = `
redis.call('HINCRBY', KEYS[1], ARGV[1] .. 'r', ARGV[2])
redis.call('HINCRBY', KEYS[1], ARGV[1] .. 'i', ARGV[3])
redis.call('HINCRBY', KEYS[1], ARGV[1] .. 'o', ARGV[4])
redis.call('EXPIRE', KEYS[1], ARGV[5])
return 0
`;

type UsageClient = RedisClient & { rrUsage(key: string, base: string, r: number, i: number, o: number, ttl: number): Promise<number> };

/**
 * Usage counts shared by every instance: one hash per UTC day (`${prefix}usage:YYYY-MM-DD`; `{${prefix}usage}:YYYY-MM-DD` on a cluster).
 * A row Redis cannot take now (a failover) is added up on this instance, per day, key and
 * model, and written once Redis is back: nothing is lost, and a request never waits for it.
 */
export class RedisUsageStore implements UsageStore {
  private readonly client: UsageClient;
  /** Rows Redis has yet to get, summed per day, key and model. */
  private readonly owed = new Map<string, UsageRow>();
  private paying = false;

  constructor(
    client: RedisClient,
    private readonly opts: { prefix: string; readyTimeoutMs?: number },
  ) {
    if (!("rrUsage" in client)) client.defineCommand("rrUsage", { numberOfKeys: 1, lua: RECORD });
    this.client = client as UsageClient;
    this.wasReady = client.status === "ready";
    client.on("ready", () => {
      this.wasReady = true;
      void this.payOwed();
    });
  }

  /** The client has been connected: not being so now means Redis is away (at start-up a row waits for it as every store call). */
  private wasReady: boolean;

  private dayKey(day: string): string {
    // Every day under one tag: a query reads its days in one pipeline, which a cluster sends to one slot.
    return `${hashTag(this.client, `${this.opts.prefix}usage`)}:${day}`;
  }

  async record(row: UsageRow): Promise<void> {
    if (this.client.status !== "ready" && this.wasReady) return this.owe(row);
    await this.write(row, this.wasReady ? 0 : this.opts.readyTimeoutMs).catch((err: unknown) => {
      this.owe(row);
      throw err;
    });
  }

  private write(row: UsageRow, readyTimeoutMs: number | undefined): Promise<number> {
    const key = this.dayKey(row.day);
    const base = row.key + SEP + row.model + SEP;
    return redisCall(this.client, "usage.record", () => this.client.rrUsage(key, base, row.requests, row.input_tokens, row.output_tokens, USAGE_RETENTION_DAYS * 86_400), readyTimeoutMs);
  }

  private owe(row: UsageRow): void {
    const id = row.day + SEP + row.key + SEP + row.model;
    const sum = this.owed.get(id);
    if (!sum) this.owed.set(id, { ...row });
    else {
      sum.requests += row.requests;
      sum.input_tokens += row.input_tokens;
      sum.output_tokens += row.output_tokens;
    }
    if (this.client.status === "ready") void this.payOwed();
  }

  /** Writes the rows kept while Redis was away, until they are written or it fails again. */
  private async payOwed(): Promise<void> {
    if (this.paying) return;
    this.paying = true;
    try {
      for (const [id, row] of this.owed) {
        if (this.client.status !== "ready") break;
        this.owed.delete(id);
        await this.write(row, 0).catch((err: unknown) => {
          this.owe(row);
          throw err;
        });
      }
    } catch {
      // Still away: written at the next reconnect.
    } finally {
      this.paying = false;
    }
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
