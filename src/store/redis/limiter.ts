import { bucketState, dayWindow, MINUTE_MS, monthWindow, SLOT_TTL_MS, type AdmitRequest, type Admission, type LimitName, type LocalCharge, type RateLimiter, type Settlement } from "../limiter.js";
import { MemoryRateLimiter, type KnownState } from "../memory/limiter.js";
import { settlesWithin } from "../settles-within.js";
import { hashTag, redisCall, type RedisClient } from "./client.js";

/**
 * admit in one round trip: refill both buckets, check every limit, charge them all or none.
 * KEYS: bucket hash, slots zset, day counter, month counter.
 * ARGV: now, rpm, tpm, max_concurrent, per_day, per_month, reserve, slot, slot_ttl, day_end, month_end.
 * Returns { refused (0 none, 1 requests, 2 tokens, 3 concurrency, 4 day, 5 month), retry_ms,
 *           requests left (x1000), tokens left (x1000), day used, month used } - fractions survive as integers.
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
if refused == 0 then day_used = day_used + reserve; month_used = month_used + reserve end
return { refused, math.ceil(retry), math.floor(ra * 1000), math.floor(ta * 1000), day_used, month_used }
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
  rrAdmit(...args: (string | number)[]): Promise<[number, number, number, number, number, number]>;
  rrSettle(...args: (string | number)[]): Promise<number>;
};

/** How long admit waits for Redis before it counts on this instance's own (a request waits no longer than this on the limiter). */
const LOCAL_AFTER_MS = 50;
/** Charges kept for Redis while it is away, at most (then the oldest are dropped: under-counted, never refused wrongly). */
const MAX_OWED = 50_000;

/** A charge counted on this instance's own limiter while Redis did not answer. */
class Local implements LocalCharge {
  remote = false;
  /** settle() has run: a remote charge arriving later is undone instead. */
  settled = false;
  constructor(readonly limiter: MemoryRateLimiter) {}
}

/**
 * Limits shared by every instance on one Redis (or Redis Cluster). The semantics are in limiter.ts.
 *
 * A request never waits on a Redis that is away (a failover, a restart): when the shared client
 * is not connected, or admit's script has not answered within LOCAL_AFTER_MS, this instance
 * counts the request on a limiter of its own, started from the state Redis last reported for
 * the key (what its buckets had left, what its budgets had used), and the admission says so
 * (`local`). Settling such a request charges its tokens to Redis once Redis answers again; so
 * does a settle that failed. What a key may overspend meanwhile: each instance admits on its
 * own count, so up to one per-minute allowance (plus the refill) per instance, and its budgets
 * by what the OTHER instances admit in that window (docs/failover.md).
 */
export class RedisRateLimiter implements RateLimiter {
  private readonly client: LimiterClient;
  /** This instance's own count while Redis is away; null while Redis answers. */
  private local: MemoryRateLimiter | null = null;
  /** What Redis last reported per key, to start the own count from. */
  private readonly known = new Map<string, KnownState>();
  /** Charges (and slot releases) Redis has yet to get, oldest first. */
  private readonly owed: Settlement[] = [];
  private paying = false;

  constructor(
    client: RedisClient,
    private readonly opts: { prefix: string; readyTimeoutMs?: number; localAfterMs?: number },
  ) {
    if (!("rrAdmit" in client)) {
      client.defineCommand("rrAdmit", { numberOfKeys: 4, lua: ADMIT });
      client.defineCommand("rrSettle", { numberOfKeys: 4, lua: SETTLE });
    }
    this.client = client as LimiterClient;
    this.wasReady = client.status === "ready";
    client.on("ready", () => {
      this.wasReady = true;
      void this.payOwed();
    });
  }

  /** The client has been connected: not being so now means Redis is away. */
  private wasReady: boolean;

  private keys(key: string, at: number): [string, string, string, string] {
    // One tag for the key's four: admit and settle touch them all in one script.
    const base = hashTag(this.client, `${this.opts.prefix}limit:${key}`);
    return [base, `${base}:slots`, `${base}:day:${dayWindow(at).id}`, `${base}:month:${monthWindow(at).id}`];
  }

  async admit(req: AdmitRequest): Promise<Admission> {
    // Away (it was connected before): no wait at all. Still connecting at start-up: as every store call.
    if (!this.wasReady) return this.admitRemote(req, this.opts.readyTimeoutMs);
    if (this.client.status !== "ready") return this.admitLocally(req);
    const remote = this.admitRemote(req, 0);
    if (!(await settlesWithin(remote, this.opts.localAfterMs ?? LOCAL_AFTER_MS))) {
      const admission = await this.admitLocally(req);
      remote.then((late) => late.refused === null && this.chargedLate(req, admission.local as Local | undefined)).catch(() => {});
      return admission;
    }
    try {
      const admission = await remote;
      this.local = null;
      if (this.owed.length > 0) void this.payOwed();
      return admission;
    } catch {
      return this.admitLocally(req);
    }
  }

  private async admitRemote(req: AdmitRequest, readyTimeoutMs: number | undefined): Promise<Admission> {
    const { limits: l, now } = req;
    const rpm = l.requests_per_minute ?? 0;
    const tpm = l.tokens_per_minute ?? 0;
    const [code, retry, ra, ta, dayUsed, monthUsed] = await redisCall(
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
      readyTimeoutMs,
    );
    this.known.set(req.key, {
      at: now,
      requests: rpm ? ra / 1000 : undefined,
      tokens: tpm ? ta / 1000 : undefined,
      day: l.tokens_per_day ? { id: dayWindow(now).id, used: dayUsed } : undefined,
      month: l.tokens_per_month ? { id: monthWindow(now).id, used: monthUsed } : undefined,
    });
    return { refused: REFUSED[code] ?? null, retryAfterMs: retry, requests: rpm ? bucketState(ra / 1000, rpm) : null, tokens: tpm ? bucketState(ta / 1000, tpm) : null };
  }

  /**
   * Redis charged a request after all, whose admission was this instance's own: settle() corrects
   * that charge instead of adding the local one; a request refused here, or settled already, gives
   * Redis's charge back (its slot too).
   */
  private chargedLate(req: AdmitRequest, local: Local | undefined): void {
    if (local && !local.settled) {
      local.remote = true;
      return;
    }
    const slot = req.limits.max_concurrent ? req.slot : null;
    this.owe({ key: req.key, slot, limits: req.limits, reserved: req.reserve, actual: 0, admittedAt: req.now, now: req.now });
  }

  /** Admits on this instance's own count, each key started from what Redis last said of it. */
  private async admitLocally(req: AdmitRequest): Promise<Admission> {
    let local = this.local;
    if (!local) {
      local = this.local = new MemoryRateLimiter();
      for (const [key, state] of this.known) local.restore(key, state);
    }
    const admission = await local.admit(req);
    return admission.refused ? admission : { ...admission, local: new Local(local) };
  }

  async hold(key: string, slot: string, now: number): Promise<void> {
    const [, slots] = this.keys(key, now);
    await redisCall(this.client, "limiter.hold", () => this.client.multi().zadd(slots, now + SLOT_TTL_MS, slot).pexpire(slots, SLOT_TTL_MS).exec(), this.opts.readyTimeoutMs);
  }

  async settle(s: Settlement): Promise<void> {
    const local = s.local;
    if (local instanceof Local) {
      local.settled = true;
      await local.limiter.settle(s);
      // Charged only here: Redis gets the tokens used (its slot and reservation were never taken there).
      if (!local.remote) return this.owe({ ...s, slot: null, reserved: 0, local: undefined });
    }
    const settlement = { ...s, local: undefined };
    if (this.client.status !== "ready") return this.owe(settlement);
    await this.settleRemote(settlement).catch((err: unknown) => {
      this.owe(settlement);
      throw err;
    });
  }

  private settleRemote(s: Settlement): Promise<number> {
    const [bucket, slots] = this.keys(s.key, s.now);
    const [, , day, month] = this.keys(s.key, s.admittedAt);
    return redisCall(
      this.client,
      "limiter.settle",
      () =>
        this.client.rrSettle(bucket, slots, day, month, s.now, s.limits.tokens_per_minute ?? 0, s.actual - s.reserved, s.slot ?? "", s.limits.tokens_per_day ? 1 : 0, s.limits.tokens_per_month ? 1 : 0),
      this.opts.readyTimeoutMs,
    );
  }

  /** Keeps a charge for Redis, paid as soon as it answers. */
  private owe(s: Settlement): void {
    if (s.actual === s.reserved && s.slot === null) return;
    this.owed.push(s);
    if (this.owed.length > MAX_OWED) this.owed.shift();
    if (this.client.status === "ready") void this.payOwed();
  }

  /** Replays what Redis is owed, oldest first, until it is paid or Redis fails again. */
  private async payOwed(): Promise<void> {
    if (this.paying) return;
    this.paying = true;
    try {
      while (this.owed.length > 0 && this.client.status === "ready") {
        await this.settleRemote(this.owed[0]!);
        this.owed.shift();
      }
    } catch {
      // Still away: paid at the next reconnect.
    } finally {
      this.paying = false;
    }
  }

  /** Charges not yet reconciled with Redis (tests and metrics). */
  get owedCount(): number {
    return this.owed.length;
  }

  async close(): Promise<void> {}
}
