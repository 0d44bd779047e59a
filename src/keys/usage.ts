import { dayWindow } from "../store/limiter.js";
import type { UsageStore } from "../store/usage.js";

/** Tokens an upstream reported for one answer. */
export interface TokenCount {
  input: number;
  output: number;
}

/** Zero tokens; also what counting returns when the upstream reported no usage (compare by identity). */
export const NO_TOKENS: TokenCount = Object.freeze({ input: 0, output: 0 });

/** Adds `more` into `into` (a request whose stream reports usage more than once). */
export function addTokens(into: { tokens?: TokenCount }, more: TokenCount): void {
  into.tokens = into.tokens ? { input: into.tokens.input + more.input, output: into.tokens.output + more.output } : more;
}

export interface UsageDeps {
  usage: UsageStore;
  now: () => number;
  onStoreError: (err: unknown) => void;
}

/**
 * Adds one request's counts to its key's usage for today (UTC), off the request's path:
 * a store that fails loses the row (counted in store_errors_total), never the answer.
 */
export function recordUsage(deps: UsageDeps, key: string, model: string, requests: number, input: number, output: number): void {
  const day = dayWindow(deps.now()).id;
  deps.usage.record({ day, key, model, requests, input_tokens: input, output_tokens: output }).catch(deps.onStoreError);
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** A YYYY-MM-DD date that names a real day, or null. */
export function parseDay(value: string): string | null {
  if (!DAY.test(value)) return null;
  const t = Date.parse(`${value}T00:00:00Z`);
  return Number.isNaN(t) || new Date(t).toISOString().slice(0, 10) !== value ? null : value;
}
