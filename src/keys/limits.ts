import { ApiError } from "../ops/errors.js";
import type { Admission, BucketState, KeyLimits, LimitName, LocalCharge, RateLimiter } from "../store/limiter.js";
import type { ApiKey } from "./policy.js";
import type { TokenCount } from "./usage.js";

/** The limits a key has, or null when it has none (then the limiter is never called). */
export function keyLimits(key: ApiKey | null | undefined): KeyLimits | null {
  if (!key || (!key.limits && !key.budget)) return null;
  return { ...key.limits, ...key.budget };
}

/**
 * Tokens reserved up front: the body's bytes / 4 (a rough count of the prompt) plus the
 * output cap the request sets. History from previous_response_id is not in the body and is
 * not counted here; settle() charges the real figure the upstream reports.
 */
export function estimateTokens(bodyBytes: number, body: unknown): number {
  const b = body as { max_output_tokens?: unknown; max_tokens?: unknown; max_completion_tokens?: unknown } | null;
  const cap = [b?.max_output_tokens, b?.max_completion_tokens, b?.max_tokens].find((v) => typeof v === "number" && Number.isFinite(v) && v > 0) as number | undefined;
  return Math.ceil(bodyBytes / 4) + (cap ?? 0);
}

/** OpenAI's rate-limit headers for the buckets a key has. */
export function rateLimitHeaders(a: Pick<Admission, "requests" | "tokens">): Record<string, string> {
  const h: Record<string, string> = {};
  if (a.requests) put(h, "requests", a.requests);
  if (a.tokens) put(h, "tokens", a.tokens);
  return h;
}

function put(h: Record<string, string>, what: "requests" | "tokens", b: BucketState): void {
  h[`x-ratelimit-limit-${what}`] = String(b.limit);
  h[`x-ratelimit-remaining-${what}`] = String(b.remaining);
  h[`x-ratelimit-reset-${what}`] = goDuration(b.resetMs);
}

/** A duration as OpenAI writes it in x-ratelimit-reset-* (Go's format): "20ms", "1s", "1.5s", "6m0s", "1h2m3s". */
export function goDuration(ms: number): string {
  const total = Math.max(0, Math.round(ms));
  if (total < 1000) return `${total}ms`;
  const h = Math.floor(total / 3_600_000);
  const m = Math.floor((total % 3_600_000) / 60_000);
  const s = (total % 60_000) / 1000;
  const sec = `${Number(s.toFixed(3))}s`;
  if (h > 0) return `${h}h${m}m${sec}`;
  if (m > 0) return `${m}m${sec}`;
  return sec;
}

/** The 429 for a refused admission, shaped as OpenAI's (rate limits) or its quota error (budgets). */
export function limitError(keyName: string, limits: KeyLimits, a: Admission, reserve: number, now: number): ApiError {
  const retryAfterMs = Math.max(1, a.retryAfterMs);
  const headers = { "retry-after": String(Math.max(1, Math.ceil(retryAfterMs / 1000))), ...rateLimitHeaders(a) };
  const wait = `Please try again in ${goDuration(retryAfterMs)}.`;
  const refused = a.refused as LimitName;
  if (refused === "tokens_per_day" || refused === "tokens_per_month") {
    const per = refused === "tokens_per_day" ? "day" : "month";
    const budget = refused === "tokens_per_day" ? limits.tokens_per_day : limits.tokens_per_month;
    const resets = new Date(now + retryAfterMs).toISOString().replace(/\.\d{3}Z$/, "Z");
    return new ApiError(429, `You exceeded the token budget of API key '${keyName}': ${budget} tokens per ${per} (UTC). It resets at ${resets}.`, {
      type: "insufficient_quota",
      code: "insufficient_quota",
      headers,
    });
  }
  const message =
    refused === "requests"
      ? `Rate limit reached for requests per min (RPM) on API key '${keyName}': Limit ${limits.requests_per_minute}, Used ${limits.requests_per_minute}, Requested 1. ${wait}`
      : refused === "tokens"
        ? `Rate limit reached for tokens per min (TPM) on API key '${keyName}': Limit ${limits.tokens_per_minute}, Remaining ${a.tokens?.remaining ?? 0}, Requested ${reserve}. ${wait}`
        : `Too many concurrent requests on API key '${keyName}': Limit ${limits.max_concurrent} in flight. Please try again when one finishes.`;
  return new ApiError(429, message, { type: refused === "tokens" ? "tokens" : "requests", code: "rate_limit_exceeded", headers });
}

/** One admitted request's hold on its key's limits; settle() exactly once, when it is over. */
export class KeyGate {
  private settled = false;

  constructor(
    private readonly limiter: RateLimiter,
    readonly key: string,
    readonly limits: KeyLimits,
    private readonly slot: string | null,
    private readonly reserved: number,
    private readonly admittedAt: number,
    private readonly now: () => number,
    private readonly onError: (err: unknown) => void,
    /** Counted on this instance while the shared store was away (Admission.local). */
    private readonly local?: LocalCharge,
  ) {}

  /** Frees the slot and charges `tokens` (the upstream's count) instead of the reservation. */
  settle(tokens: number): void {
    if (this.settled) return;
    this.settled = true;
    const { limiter, key, limits, slot, reserved, admittedAt, local } = this;
    limiter.settle({ key, slot, limits, reserved, actual: tokens, admittedAt, now: this.now(), local }).catch(this.onError);
  }

  /**
   * An answer whose upstream reported no usage (a chat stream without
   * stream_options.include_usage): the reservation stands as its count.
   */
  settleUnreported(): void {
    this.settle(this.reserved);
  }

  /**
   * Settles a request by how it ended, the one rule for every transport: answered without a
   * usage report, the estimate stands; failed before an answer, nothing is charged; else the
   * upstream's count.
   */
  settleOutcome(tokens: TokenCount | undefined, answered: boolean): void {
    if (!tokens && answered) this.settleUnreported();
    else this.settle(tokens ? tokens.input + tokens.output : 0);
  }
}

/**
 * Admits one request against its key's limits: 429 when a limit refuses it, else a gate
 * to settle when the answer is over, and the headers to send with the answer.
 * Fails open (admits) when the store cannot be reached: a Redis outage must not stop every key
 * (the Redis limiter counts on the instance's own meanwhile, see store/redis/limiter.ts).
 */
export interface LimiterDeps {
  limiter: RateLimiter;
  now: () => number;
  onStoreError: (err: unknown) => void;
}

export async function admit(
  deps: LimiterDeps,
  key: ApiKey,
  limits: KeyLimits,
  slot: string,
  reserve: number,
): Promise<{ gate: KeyGate; headers: Record<string, string> }> {
  const now = deps.now();
  let a: Admission;
  try {
    a = await deps.limiter.admit({ key: key.name, slot, limits, reserve, now });
  } catch (err) {
    deps.onStoreError(err);
    return { gate: new KeyGate(deps.limiter, key.name, limits, null, 0, now, deps.now, deps.onStoreError), headers: {} };
  }
  // Counted on this instance's own: the shared store failed this request (counted as such).
  if (a.local) deps.onStoreError(new Error("limiter.admit: counted on this instance while the store is away"));
  if (a.refused) throw limitError(key.name, limits, a, reserve, now);
  const gate = new KeyGate(deps.limiter, key.name, limits, limits.max_concurrent ? slot : null, reserve, now, deps.now, deps.onStoreError, a.local);
  return { gate, headers: rateLimitHeaders(a) };
}

/**
 * A background job's hold on its key while it runs: a max_concurrent slot (taken without
 * checking: the job was admitted when it was created) and the tokens it uses. Null when the
 * key has no limits, or is gone from the config.
 */
export async function jobGate(deps: LimiterDeps, keys: ApiKey[], owner: string | null, responseId: string): Promise<KeyGate | null> {
  const key = owner === null ? undefined : keys.find((k) => k.name === owner);
  const limits = keyLimits(key);
  if (!key || !limits) return null;
  const now = deps.now();
  let slot: string | null = null;
  if (limits.max_concurrent) {
    try {
      await deps.limiter.hold(key.name, responseId, now);
      slot = responseId;
    } catch (err) {
      deps.onStoreError(err);
    }
  }
  return new KeyGate(deps.limiter, key.name, limits, slot, 0, now, deps.now, deps.onStoreError);
}
