import { bucketState, dayWindow, MINUTE_MS, monthWindow, SLOT_TTL_MS, type AdmitRequest, type Admission, type LimitName, type RateLimiter, type Settlement } from "../limiter.js";
import { hashTag, redisCall, type RedisClient } from "./client.js";

/**
 * admit in one round trip: refill both buckets, check every limit, charge them all or none.
 * KEYS: bucket hash, slots zset, day counter, month counter.
 * ARGV: now, rpm, tpm, max_concurrent, per_day, per_month, reserve, slot, slot_ttl, day_end, month_end.
 * Returns { refused (0 none, 1 requests, 2 tokens, 3 concurrency, 4 day, 5 month), retry_ms,
 *           requests left (x1000), tokens left (x1000) } - fractions survive as integers.
 */
const ADMIT = `
local now = tonumber(ARGV[1])
local rpm = tonumber(ARGV[2]); local tpm = tonumber(ARGV[3]); local maxc = tonumber(ARGV[4])
local per_day = tonumber(ARGV[5]); local per_month = tonumber(ARGV[6]); local reserve = tonumber(ARGV[7])
local b = redis.call('HMGET', KEYS[1], 'ra', 'rt', 'ta', 'tt')
local function refill(avail, at, per)
  if not avail then return per end
  local v = tonumber(avail) + math.max(0, now - tonumber(at)) * per / ${MINUTE_MS}
  if v > per then return per end
  return v
end
local ra = 0; local ta = 0
if rpm > 0 then ra = refill(b[1], b[2], rpm) end
if tpm > 0 then ta = refill(b[3], b[4], tpm) end
local need = 0
if tpm > 0 then need = math.max(1, math.min(reserve, tpm)) end
local day_used = 0; local month_used = 0
if per_day > 0 then day_used = tonumber(redis.call('GET', KEYS[3]) or '0') end
if per_month > 0 then month_used = tonumber(redis.call('GET', KEYS[4]) or '0') end
local refused = 0; local retry = 0
if per_month > 0 and month_used >= per_month then refused = 5; retry = tonumber(ARGV[11]) - now
elseif per_day > 0 and day_used >= per_day then refused = 4; retry = tonumber(ARGV[10]) - now
elseif rpm > 0 and ra < 1 then refused = 1; retry = (1 - ra) * ${MINUTE_MS} / rpm
elseif tpm > 0 and ta < need then refused = 2; retry = (need - ta) * ${MINUTE_MS} / tpm
elseif maxc > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
  if redis.call('ZCARD', KEYS[2]) >= maxc then refused = 3; retry = 1000 end
end
if refused == 0 then
  if rpm > 0 then ra = ra - 1; redis.call('HSET', KEYS[1], 'ra', tostring(ra), 'rt', ARGV[1]) end
  if tpm > 0 then ta = ta - reserve; redis.call('HSET', KEYS[1], 'ta', tostring(ta), 'tt', ARGV[1]) end
  if rpm > 0 or tpm > 0 then redis.call('PEXPIRE', KEYS[1], ${2 * MINUTE_MS}) end
  if maxc > 0 then
    redis.call('ZADD', KEYS[2], now + tonumber(ARGV[9]), ARGV[8])
    redis.call('PEXPIRE', KEYS[2], tonumber(ARGV[9]))
  end
  -- Relative expiry (the window's end on the caller's clock, plus an hour of slack for late settles).
  if per_day > 0 then redis.call('INCRBY', KEYS[3], reserve); redis.call('PEXPIRE', KEYS[3], tonumber(ARGV[10]) - now + 3600000) end
  if per_month > 0 then redis.call('INCRBY', KEYS[4], reserve); redis.call('PEXPIRE', KEYS[4], tonumber(ARGV[11]) - now + 3600000) end
end
return { refused, math.ceil(retry), math.floor(ra * 1000), math.floor(ta * 1000) }
`;

/**
 * settle in one round trip: free the slot, give back (or take more of) the token bucket and
 * correct the budgets of the window the request was admitted in.
 * KEYS: bucket hash, slots zset, day counter, month counter.
 * ARGV: now, tpm, delta, slot ('' for none), has_day, has_month.
 */
const SETTLE = `
if ARGV[4] ~= '' then redis.call('ZREM', KEYS[2], ARGV[4]) end
local delta = tonumber(ARGV[3])
if delta == 0 then return 0 end
local now = tonumber(ARGV[1]); local tpm = tonumber(ARGV[2])
if tpm > 0 then
  local b = redis.call('HMGET', KEYS[1], 'ta', 'tt')
  local ta = tpm
  if b[1] then ta = math.min(tpm, tonumber(b[1]) + math.max(0, now - tonumber(b[2])) * tpm / ${MINUTE_MS}) end
  redis.call('HSET', KEYS[1], 'ta', tostring(ta - delta), 'tt', ARGV[1])
  redis.call('PEXPIRE', KEYS[1], ${2 * MINUTE_MS})
end
local function correct(key)
  local v = redis.call('INCRBY', key, delta)
  if v < 0 then redis.call('SET', key, 0, 'KEEPTTL') end
  if redis.call('PTTL', key) < 0 then redis.call('PEXPIRE', key, 32 * 86400000) end
end
if ARGV[5] == '1' then correct(KEYS[3]) end
if ARGV[6] == '1' then correct(KEYS[4]) end
return 0
`;

const REFUSED: (LimitName | null)[] = [null, "requests", "tokens", "concurrency", "tokens_per_day", "tokens_per_month"];

type LimiterClient = RedisClient & {
  rrAdmit(...args: (string | number)[]): Promise<[number, number, number, number]>;
  rrSettle(...args: (string | number)[]): Promise<number>;
};

/** Limits shared by every instance on one Redis (or Redis Cluster). The semantics are in limiter.ts. */
export class RedisRateLimiter implements RateLimiter {
  private readonly client: LimiterClient;

  constructor(
    client: RedisClient,
    private readonly opts: { prefix: string; readyTimeoutMs?: number },
  ) {
    if (!("rrAdmit" in client)) {
      client.defineCommand("rrAdmit", { numberOfKeys: 4, lua: ADMIT });
      client.defineCommand("rrSettle", { numberOfKeys: 4, lua: SETTLE });
    }
    this.client = client as LimiterClient;
  }

  private keys(key: string, at: number): [string, string, string, string] {
    // One tag for the key's four: admit and settle touch them all in one script.
    const base = hashTag(this.client, `${this.opts.prefix}limit:${key}`);
    return [base, `${base}:slots`, `${base}:day:${dayWindow(at).id}`, `${base}:month:${monthWindow(at).id}`];
  }

  async admit(req: AdmitRequest): Promise<Admission> {
    const { limits: l, now } = req;
    const rpm = l.requests_per_minute ?? 0;
    const tpm = l.tokens_per_minute ?? 0;
    const [code, retry, ra, ta] = await redisCall(
      this.client,
      "limiter.admit",
      () =>
        this.client.rrAdmit(
          ...this.keys(req.key, now),
          now,
          rpm,
          tpm,
          l.max_concurrent ?? 0,
          l.tokens_per_day ?? 0,
          l.tokens_per_month ?? 0,
          req.reserve,
          req.slot,
          SLOT_TTL_MS,
          dayWindow(now).endsAt,
          monthWindow(now).endsAt,
        ),
      this.opts.readyTimeoutMs,
    );
    return { refused: REFUSED[code] ?? null, retryAfterMs: retry, requests: rpm ? bucketState(ra / 1000, rpm) : null, tokens: tpm ? bucketState(ta / 1000, tpm) : null };
  }

  async hold(key: string, slot: string, now: number): Promise<void> {
    const [, slots] = this.keys(key, now);
    await redisCall(this.client, "limiter.hold", () => this.client.multi().zadd(slots, now + SLOT_TTL_MS, slot).pexpire(slots, SLOT_TTL_MS).exec(), this.opts.readyTimeoutMs);
  }

  async settle(s: Settlement): Promise<void> {
    const [bucket, slots] = this.keys(s.key, s.now);
    const [, , day, month] = this.keys(s.key, s.admittedAt);
    await redisCall(
      this.client,
      "limiter.settle",
      () =>
        this.client.rrSettle(bucket, slots, day, month, s.now, s.limits.tokens_per_minute ?? 0, s.actual - s.reserved, s.slot ?? "", s.limits.tokens_per_day ? 1 : 0, s.limits.tokens_per_month ? 1 : 0),
      this.opts.readyTimeoutMs,
    );
  }

  async close(): Promise<void> {}
}
