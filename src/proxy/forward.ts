import type { ModelTarget } from "../config/load.js";
import { NO_TOKENS, type TokenCount } from "../keys/usage.js";
import type { Runtime } from "../runtime/runtime.js";
import { fallbackSteps, type ModelConfig, type ModelStep } from "../runtime/models.js";
import { UpstreamAttempt } from "../upstream/attempt.js";

/** One proxied call: a body in the OpenAI wire shape, sent as is but for `model`. */
export interface ProxyRequest {
  /** The model the client asked for (the router's name). */
  model: string;
  /** The client's body without the router's own `router` extension. */
  body: Record<string, unknown>;
}

/**
 * POSTs `path` (/chat/completions, /embeddings) to the least busy endpoint of the
 * model's pool, whatever its kind: both kinds speak these routes. Slot, failover,
 * fallbacks, health and metrics are the Responses path's (upstream/attempt.ts); only
 * `model` is rewritten, to the endpoint's upstream_model (`attempt.lease.target`).
 * Resolves on 2xx headers; the caller ends the attempt when the body is done.
 */
export function forward(rt: Runtime, req: ProxyRequest, modelCfg: ModelConfig, targets: ModelTarget[], path: string, signal: AbortSignal): Promise<Forwarded> {
  return UpstreamAttempt.open(rt, {
    model: req.model,
    steps: fallbackSteps(rt.config, req.model, modelCfg, targets),
    routing: rt.config.routing,
    signal,
    path,
    prepare: (lease) => ({ path, body: JSON.stringify({ ...req.body, model: lease.target.upstreamModel }) }),
  });
}

/** An upstream that answered 2xx to a proxied call. */
export type Forwarded = UpstreamAttempt<ModelStep>;

/**
 * Rewrites the upstream's `"model":"<upstream_model>"` back to the client's model name in
 * serialised JSON (one object, or several SSE frames of one read), without parsing it. Inside
 * JSON strings every quote is escaped, so the unescaped pattern can only be an object's own
 * `model` key. A replacement string, not a function: a JS call per match was most of the cost
 * of a streamed chunk. Returns null when no rewrite is needed.
 */
export function modelRenamer(upstreamModel: string, model: string): ((json: string) => string) | null {
  if (upstreamModel === model) return null;
  const pattern = new RegExp(`"model"\\s*:\\s*${escapeRegExp(JSON.stringify(upstreamModel))}`, "g");
  // `$` is special in a replacement string: a model name that has one keeps it.
  const replacement = `"model":${JSON.stringify(model)}`.replaceAll("$", "$$$$");
  return (json) => json.replace(pattern, replacement);
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}

/** Counts a backend's reported usage (chat or embeddings naming) under the router's token metric, by key ("" without keys). */
export function countTokens(rt: Runtime, model: string, endpoint: string, usage: unknown, key: string): TokenCount {
  if (!usage || typeof usage !== "object") return NO_TOKENS;
  const u = usage as {
    prompt_tokens?: number;
    completion_tokens?: number;
    prompt_tokens_details?: { cached_tokens?: number } | null;
    completion_tokens_details?: { reasoning_tokens?: number } | null;
  };
  const add = (type: "input" | "output" | "cached" | "reasoning", n: unknown): number => {
    if (typeof n !== "number" || !Number.isFinite(n) || n <= 0) return 0;
    rt.metrics.tokens.inc({ model, upstream: endpoint, type, key }, n);
    return n;
  };
  const count = { input: add("input", u.prompt_tokens), output: add("output", u.completion_tokens) };
  add("cached", u.prompt_tokens_details?.cached_tokens);
  add("reasoning", u.completion_tokens_details?.reasoning_tokens);
  return count;
}
