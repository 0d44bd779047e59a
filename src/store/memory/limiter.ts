import { bucketState, dayWindow, MINUTE_MS, monthWindow, SLOT_TTL_MS, type AdmitRequest, type Admission, type LimitName, type RateLimiter, type Settlement } from "../limiter.js";

/** A continuously refilling bucket holding one minute's allowance. */
interface Bucket {
  avail: number;
  at: number;
}

interface KeyState {
  requests: Bucket | null;
  tokens: Bucket | null;
  /** slot -> expiry */
  slots: Map<string, number>;
  day: { id: string; used: number } | null;
  month: { id: string; used: number } | null;
}

/** What the shared store last said about a key (see MemoryRateLimiter.restore). */
export interface KnownState {
  /** When the shared store said so (the buckets refill from then). */
  at: number;
  requests?: number;
  tokens?: number;
  day?: { id: string; used: number };
  month?: { id: string; used: number };
}

/** Per-instance limits (memory mode; Redis mode's own count while Redis is away). The semantics are in limiter.ts. */
export class MemoryRateLimiter implements RateLimiter {
  private readonly keys = new Map<string, KeyState>();

  private state(key: string): KeyState {
    let s = this.keys.get(key);
    if (!s) {
      s = { requests: null, tokens: null, slots: new Map(), day: null, month: null };
      this.keys.set(key, s);
    }
    return s;
  }

  async admit(req: AdmitRequest): Promise<Admission> {
    const { limits, now } = req;
    const s = this.state(req.key);
    const rpm = limits.requests_per_minute;
    const tpm = limits.tokens_per_minute;
    const reqAvail = rpm ? refill(s.requests, rpm, now) : 0;
    const tokAvail = tpm ? refill(s.tokens, tpm, now) : 0;
    const need = tpm ? Math.max(1, Math.min(req.reserve, tpm)) : 0;
    const day = dayWindow(now);
    const month = monthWindow(now);
    const dayUsed = s.day?.id === day.id ? s.day.used : 0;
    const monthUsed = s.month?.id === month.id ? s.month.used : 0;

    let refused: LimitName | null = null;
    let retryAfterMs = 0;
    if (limits.tokens_per_month && monthUsed >= limits.tokens_per_month) [refused, retryAfterMs] = ["tokens_per_month", month.endsAt - now];
    else if (limits.tokens_per_day && dayUsed >= limits.tokens_per_day) [refused, retryAfterMs] = ["tokens_per_day", day.endsAt - now];
    else if (rpm && reqAvail < 1) [refused, retryAfterMs] = ["requests", ((1 - reqAvail) * MINUTE_MS) / rpm];
    else if (tpm && tokAvail < need) [refused, retryAfterMs] = ["tokens", ((need - tokAvail) * MINUTE_MS) / tpm];
    else if (limits.max_concurrent && liveSlots(s.slots, now) >= limits.max_concurrent) [refused, retryAfterMs] = ["concurrency", 1_000];

    const charged = refused === null;
    const reqLeft = rpm ? reqAvail - (charged ? 1 : 0) : 0;
    const tokLeft = tpm ? tokAvail - (charged ? req.reserve : 0) : 0;
    if (charged) {
      if (rpm) s.requests = { avail: reqLeft, at: now };
      if (tpm) s.tokens = { avail: tokLeft, at: now };
      if (limits.max_concurrent) s.slots.set(req.slot, now + SLOT_TTL_MS);
      if (limits.tokens_per_day) s.day = { id: day.id, used: dayUsed + req.reserve };
      if (limits.tokens_per_month) s.month = { id: month.id, used: monthUsed + req.reserve };
    }
    return { refused, retryAfterMs: Math.ceil(retryAfterMs), requests: rpm ? bucketState(reqLeft, rpm) : null, tokens: tpm ? bucketState(tokLeft, tpm) : null };
  }

  /**
   * Starts a key from a state counted elsewhere (the shared store's, when an instance falls
   * back to its own count): what is left in its per-minute buckets and what its budgets used.
   */
  restore(key: string, known: KnownState): void {
    const s = this.state(key);
    if (known.requests !== undefined) s.requests = { avail: known.requests, at: known.at };
    if (known.tokens !== undefined) s.tokens = { avail: known.tokens, at: known.at };
    if (known.day) s.day = { ...known.day };
    if (known.month) s.month = { ...known.month };
  }

  async hold(key: string, slot: string, now: number): Promise<void> {
    this.state(key).slots.set(slot, now + SLOT_TTL_MS);
  }

  async settle(st: Settlement): Promise<void> {
    const s = this.keys.get(st.key);
    if (!s) return;
    if (st.slot !== null) s.slots.delete(st.slot);
    const delta = st.actual - st.reserved;
    if (delta === 0) return;
    const tpm = st.limits.tokens_per_minute;
    if (tpm) s.tokens = { avail: refill(s.tokens, tpm, st.now) - delta, at: st.now };
    const day = dayWindow(st.admittedAt).id;
    if (st.limits.tokens_per_day) {
      if (s.day?.id === day) s.day.used = Math.max(0, s.day.used + delta);
      else if (!s.day || s.day.id < day) s.day = { id: day, used: Math.max(0, delta) };
    }
    const month = monthWindow(st.admittedAt).id;
    if (st.limits.tokens_per_month) {
      if (s.month?.id === month) s.month.used = Math.max(0, s.month.used + delta);
      else if (!s.month || s.month.id < month) s.month = { id: month, used: Math.max(0, delta) };
    }
  }

  async close(): Promise<void> {
    this.keys.clear();
  }
}

/** Units available now: the stored amount plus what refilled since, capped at one minute's allowance. A new bucket is full. */
function refill(b: Bucket | null, perMinute: number, now: number): number {
  if (!b) return perMinute;
  return Math.min(perMinute, b.avail + (Math.max(0, now - b.at) * perMinute) / MINUTE_MS);
}

function liveSlots(slots: Map<string, number>, now: number): number {
  for (const [slot, expires] of slots) if (expires <= now) slots.delete(slot);
  return slots.size;
}
