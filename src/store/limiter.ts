/**
 * Per-key rate limits and token budgets (adapters: memory and Redis, one contract suite).
 *
 * Semantics, the same in both adapters:
 * - requests_per_minute and tokens_per_minute are token buckets that hold one minute's
 *   allowance and refill continuously (as OpenAI's limits do): a full bucket allows a burst
 *   of the whole minute's allowance, then requests pass at the refill rate.
 * - A request needs 1 request and `min(reserve, tokens_per_minute)` tokens available (at
 *   least 1); it takes them at once, so concurrent requests cannot all pass on the same
 *   allowance. settle() then corrects the reservation to the tokens the upstream reported.
 * - max_concurrent counts held slots; a slot is freed by settle() or, if its holder never
 *   comes back (an instance died), after SLOT_TTL_MS.
 * - tokens_per_day / tokens_per_month count tokens per UTC day / calendar month; a request
 *   is refused once the count has reached the budget, until the window ends.
 * Times are the caller's clock (ms since the epoch), so tests move time instead of waiting.
 */
export interface KeyLimits {
  requests_per_minute?: number;
  tokens_per_minute?: number;
  max_concurrent?: number;
  tokens_per_day?: number;
  tokens_per_month?: number;
}

export interface AdmitRequest {
  /** The key's configured name. */
  key: string;
  /** Names the concurrency slot this request holds until settle(). */
  slot: string;
  limits: KeyLimits;
  /** Tokens taken up front from tokens_per_minute and the budgets (an estimate). */
  reserve: number;
  now: number;
}

export type LimitName = "requests" | "tokens" | "concurrency" | "tokens_per_day" | "tokens_per_month";

export interface BucketState {
  limit: number;
  /** Whole units left after this request. */
  remaining: number;
  /** ms until the bucket is full again. */
  resetMs: number;
}

export interface Admission {
  /** null: admitted (and charged). Otherwise the limit that refused it; nothing was charged. */
  refused: LimitName | null;
  /** When refused: ms until a retry can pass that limit. */
  retryAfterMs: number;
  /** State of the per-minute buckets the key has (null when it has no such limit). */
  requests: BucketState | null;
  tokens: BucketState | null;
  /**
   * Set when the shared store did not answer in time and this instance counted the request on
   * its own (Redis adapter, during a failover); hand it back in settle(), which reconciles the
   * charge with the shared store once it answers again.
   */
  local?: LocalCharge;
}

/** A request admitted on this instance's own count (see Admission.local). */
export interface LocalCharge {
  /** The shared store's answer came after all, and charged it there too. */
  remote: boolean;
}

export interface Settlement {
  key: string;
  /** The slot to free (null: none held). */
  slot: string | null;
  limits: KeyLimits;
  /** What admit() took up front (0 when nothing was reserved). */
  reserved: number;
  /** Tokens the upstream reported. */
  actual: number;
  /** When the tokens were admitted: budgets charge the window the request started in. */
  admittedAt: number;
  now: number;
  /** The admission's `local` (counted on this instance, see Admission.local). */
  local?: LocalCharge;
}

export interface RateLimiter {
  /** Checks every limit the key has and, when all pass, charges them (one atomic step). */
  admit(req: AdmitRequest): Promise<Admission>;
  /** Takes a concurrency slot without checking the limit (a background job that starts running). */
  hold(key: string, slot: string, now: number): Promise<void>;
  /** Frees the slot and corrects the token reservation to the actual count. */
  settle(s: Settlement): Promise<void>;
  close(): Promise<void>;
}

/** A slot whose holder never settles (its instance died) is freed after this long. */
export const SLOT_TTL_MS = 3_600_000;
export const MINUTE_MS = 60_000;

/** The state of a bucket holding `avail` units of a one-minute allowance of `perMinute`. */
export function bucketState(avail: number, perMinute: number): BucketState {
  return { limit: perMinute, remaining: Math.max(0, Math.floor(avail)), resetMs: Math.ceil(((perMinute - avail) * MINUTE_MS) / perMinute) };
}

export interface Window {
  id: string;
  endsAt: number;
}

const DAY_MS = 86_400_000;
// The windows of the last day asked about: every request of a day would otherwise build two Dates and strings.
let cachedDay = NaN;
let cachedWindows: { day: Window; month: Window } = { day: { id: "", endsAt: 0 }, month: { id: "", endsAt: 0 } };

function windowsOf(now: number): { day: Window; month: Window } {
  const day = Math.floor(now / DAY_MS);
  if (day !== cachedDay) {
    const d = new Date(day * DAY_MS);
    cachedWindows = {
      day: { id: d.toISOString().slice(0, 10), endsAt: (day + 1) * DAY_MS },
      month: { id: d.toISOString().slice(0, 7), endsAt: Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) },
    };
    cachedDay = day;
  }
  return cachedWindows;
}

/** The UTC day `now` is in (YYYY-MM-DD) and when it ends. */
export function dayWindow(now: number): Window {
  return windowsOf(now).day;
}

/** The UTC calendar month `now` is in (YYYY-MM) and when it ends. */
export function monthWindow(now: number): Window {
  return windowsOf(now).month;
}
