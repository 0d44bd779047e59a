import type { ModelTarget } from "../config/load.js";
import { NO_TOKENS, type TokenCount } from "../keys/usage.js";
import type { Lease } from "../routing/pool.js";
import type { Runtime } from "../runtime.js";
import type { UpstreamReply } from "../upstream/client.js";
import { fallbackSteps, type ModelConfig } from "../models.js";
import { callWithFallbacks } from "../upstream/fallback.js";
import { callWithFailover } from "../upstream/failover.js";

/** One proxied call: a body in the OpenAI wire shape, sent as is but for `model`. */
export interface ProxyRequest {
  /** The model the client asked for (the router's name). */
  model: string;
  /** The client's body without the router's own `router` extension. */
  body: Record<string, unknown>;
}

export interface Forwarded {
  reply: UpstreamReply;
  lease: Lease;
  /** The model name the chosen endpoint was sent (upstream_model). */
  upstreamModel: string;
  /** The router model that served it: the one asked for, or a fallback. */
  model: string;
  started: number;
}

/**
 * POSTs `path` (/chat/completions, /embeddings) to the least busy endpoint of the
 * model's pool, whatever its kind: both kinds speak these routes. Failover and
 * slot accounting are the Responses path's (callWithFailover); only `model` is
 * rewritten, to the endpoint's upstream_model. When the whole pool fails before the
 * first byte, the model's fallbacks are tried in order. Resolves on 2xx headers; the
 * caller owns the lease and releases it when the body is done.
 */
export async function forward(rt: Runtime, req: ProxyRequest, modelCfg: ModelConfig, targets: ModelTarget[], path: string, signal: AbortSignal): Promise<Forwarded> {
  const started = performance.now();
  const cfg = rt.config;
  let upstreamModel = req.model;
  const { result: attempt, step } = await callWithFallbacks(
    fallbackSteps(cfg, req.model, modelCfg, targets),
    signal,
    (s) =>
      callWithFailover(rt.failover(s.model, s.targets, cfg.routing, signal, path), (client, lease) => {
        upstreamModel = lease.target.upstreamModel;
        return client.post(path, JSON.stringify({ ...req.body, model: upstreamModel }), signal);
      }),
    (from, to, err) => rt.fellBack(req.model, from.model, to.model, err),
  );
  if (attempt.failedOver > 0) rt.metrics.failovers.inc({ model: req.model });
  rt.metrics.queueWait.observe({ model: req.model }, attempt.lease.waitedMs / 1000);
  return { reply: attempt.reply, lease: attempt.lease, upstreamModel, model: step.model, started };
}

/**
 * Rewrites the upstream's `"model":"<upstream_model>"` back to the client's model
 * name in one serialised JSON object, without parsing it. Inside JSON strings every
 * quote is escaped, so the unescaped pattern can only be the object's own key.
 * Returns null when no rewrite is needed.
 */
export function modelRenamer(upstreamModel: string, model: string): ((json: string) => string) | null {
  if (upstreamModel === model) return null;
  const pattern = new RegExp(`"model"\\s*:\\s*${escapeRegExp(JSON.stringify(upstreamModel))}`);
  const replacement = `"model":${JSON.stringify(model)}`;
  return (json) => json.replace(pattern, () => replacement);
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
