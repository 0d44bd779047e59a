import { dayWindow } from "../store/limiter.js";
import type { UsageStore } from "../store/usage.js";

/** Tokens an upstream reported for one answer. */
export interface TokenCount {
  input: number;
  output: number;
  /** The same tokens by the model that produced them, when more than one did (a tool loop's rounds after a fallback). */
  byModel?: { model: string; input: number; output: number }[];
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

/** recordUsage for a request's tokens: the request under `model`, the tokens under the models that produced them. */
export function recordUsageOf(deps: UsageDeps, key: string, model: string, requests: number, tokens: TokenCount): void {
  if (!tokens.byModel) return recordUsage(deps, key, model, requests, tokens.input, tokens.output);
  if (!tokens.byModel.some((m) => m.model === model)) recordUsage(deps, key, model, requests, 0, 0);
  for (const m of tokens.byModel) recordUsage(deps, key, m.model, m.model === model ? requests : 0, m.input, m.output);
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** A YYYY-MM-DD date that names a real day, or null. */
export function parseDay(value: string): string | null {
  if (!DAY.test(value)) return null;
  const t = Date.parse(`${value}T00:00:00Z`);
  return Number.isNaN(t) || new Date(t).toISOString().slice(0, 10) !== value ? null : value;
}
