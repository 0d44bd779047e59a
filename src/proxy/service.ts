/**
 * What src/proxy/ holds:
 * `/v1/chat/completions` and `/v1/embeddings`: forwarded untouched but for `model` to the model's
 * pool, streamed chunk by chunk, chat cache
 */
/**
 * The path of a chat-completions or embeddings request:
 * `POST /v1/chat/completions` and `/v1/embeddings` take steps 1-2, then `proxy/service.ts`:
 * validate, `runtime/models.ts`, chat cache, `proxy/forward.ts` (the same `UpstreamAttempt`:
 * slots, failover, fallbacks, health, metrics), stream or JSON back with the model name mapped.
 */
/**
 * The /v1/chat/completions and /v1/embeddings proxy: the body goes to the model's pool
 * untouched but for `model` (the openai and chat kinds speak these routes; an anthropic
 * endpoint gets chat completions at its OpenAI-compatible route, and no embeddings), the answer comes back
 * with the model name mapped, with the same auth, slots, failover and metrics as
 * /v1/responses. Not the native Responses pass-through: that is translate/openai/ and responses/adapters/openai.ts.
 */
import { NO_KEY, type ApiKey } from "../keys/policy.js";
import { invalidRequest } from "../ops/errors.js";
import { addTokens, NO_TOKENS, type TokenCount } from "../keys/usage.js";
import { targetsFor } from "../runtime/models.js";
import type { Runtime } from "../runtime/runtime.js";
import type { StreamBody } from "../wire/sse-writer.js";
import { cacheable, ChatChunkAccumulator, chatCache, chatCacheKey, completionToChunks, type ChatCompletion } from "./chat-cache.js";
import { chunksSseBody, proxiedSseBody } from "./chat-stream.js";
import { countTokens, forward, modelRenamer, type Forwarded } from "./forward.js";
import { checkChatRequest, checkEmbeddingsRequest, type CheckedRequest } from "./validate.js";

export interface ProxyContext {
  /** The caller's key entry (allow-list); null without keys. */
  key?: ApiKey | null;
  signal: AbortSignal;
  /** Aborts the upstream call (a stream's client went away). */
  abort(): void;
  /** Filled in for metrics and limits: time spent on the upstream call, tokens the upstream reported. */
  stats?: { upstreamMs?: number; tokens?: TokenCount };
}

/** `model`: the model that served the request (the one asked for or a fallback). */
export type ProxyResult =
  | { kind: "json"; body: string; endpoint: string; model: string }
  | { kind: "stream"; body: StreamBody; endpoint: string; model: string };

/**
 * OpenAI's other inference routes, passed through to any endpoint of the model's
 * pool: POST /v1/chat/completions and /v1/embeddings. Same routing, failover, slot
 * accounting and metrics as /v1/responses; the body goes upstream untouched but
 * for `model`, and the answer comes back untouched but for the model name.
 */
export class ProxyService {
  constructor(private readonly rt: Runtime) {}

  async chatCompletions(raw: unknown, ctx: ProxyContext): Promise<ProxyResult> {
    const req = checkChatRequest(raw);
    const { modelCfg, targets } = targetsFor(this.rt.config, req.model, ctx.key);
    const useCache = req.cache ?? modelCfg.cache?.enabled === true;
    const key = useCache ? chatCacheKey(req.model, req.body) : null;
    const ttl = modelCfg.cache?.ttl ?? 3_600_000;
    if (key) {
      const hit = await this.cacheLookup(req.model, key);
      if (hit) {
        if (ctx.stats) ctx.stats.tokens = NO_TOKENS; // no upstream call, no tokens
        return this.serveCached(req, hit);
      }
    }
    const fwd = await forward(this.rt, req, modelCfg, targets, "/chat/completions", ctx.signal);
    // A fallback's answer is not cached under the model asked for.
    const store = key && fwd.step.model === req.model ? (c: ChatCompletion) => this.cacheSet(req.model, key, c, ttl) : null;
    if (!req.stream) return this.json(req, fwd, ctx, store);
    return this.stream(req, fwd, ctx, store);
  }

  async embeddings(raw: unknown, ctx: ProxyContext): Promise<ProxyResult> {
    const req = checkEmbeddingsRequest(raw);
    const { modelCfg, targets } = targetsFor(this.rt.config, req.model, ctx.key);
    // The Messages API has no embeddings route: asking it would only count 404s against the endpoint.
    const kinds = new Map(this.rt.config.endpoints.map((e) => [e.name, e.kind]));
    if (targets.every((t) => kinds.get(t.endpoint) === "anthropic")) {
      throw invalidRequest(`The model '${req.model}' is served by an Anthropic Messages API endpoint, which has no embeddings.`, "model", "model_not_supported");
    }
    return this.json(req, await forward(this.rt, req, modelCfg, targets, "/embeddings", ctx.signal), ctx, null);
  }

  /** Reads a JSON answer whole, counts its usage, maps the model name back. */
  private async json(req: CheckedRequest, fwd: Forwarded, ctx: ProxyContext, store: ((c: ChatCompletion) => Promise<void>) | null): Promise<ProxyResult> {
    const endpoint = fwd.endpoint.name;
    let ok = false;
    try {
      const { text, json } = await fwd.readJson();
      const parsed = json as Record<string, unknown>;
      ok = true;
      const tokens = countTokens(this.rt, fwd.step.model, endpoint, parsed.usage, ctx.key?.name ?? NO_KEY);
      if (ctx.stats && tokens !== NO_TOKENS) ctx.stats.tokens = tokens; // unset: the upstream reported no usage
      const rename = modelRenamer(fwd.lease.target.upstreamModel, req.model);
      if (store && Array.isArray(parsed.choices) && cacheable(parsed as ChatCompletion)) await store(parsed as ChatCompletion);
      return { kind: "json", body: rename ? rename(text) : text, endpoint, model: fwd.step.model };
    } finally {
      const ms = fwd.end(ok);
      if (ctx.stats) ctx.stats.upstreamMs = ms;
    }
  }

  private stream(req: CheckedRequest, fwd: Forwarded, ctx: ProxyContext, store: ((c: ChatCompletion) => Promise<void>) | null): ProxyResult {
    const endpoint = fwd.endpoint.name;
    const accumulator = store ? new ChatChunkAccumulator() : null;
    const body = proxiedSseBody(fwd.reply.body, {
      rename: modelRenamer(fwd.lease.target.upstreamModel, req.model),
      secret: fwd.endpoint.config.api_key,
      accumulator,
      abort: ctx.abort,
      deadline: this.rt.streamsDeadline,
      onFirstFrame: () => fwd.firstToken(),
      onUsage: (usage) => {
        const tokens = countTokens(this.rt, fwd.step.model, endpoint, usage, ctx.key?.name ?? NO_KEY);
        if (ctx.stats) addTokens(ctx.stats, tokens);
      },
      onEnd: (outcome) => {
        const ms = fwd.end(outcome.ok);
        if (ctx.stats) ctx.stats.upstreamMs = ms;
        if (!outcome.ok && !outcome.cancelled) {
          fwd.streamBroke(outcome.error);
          this.rt.log.warn({ model: req.model, endpoint, err: (outcome.error as Error)?.message }, "chat completion stream broke mid-way");
        }
        if (outcome.ok && outcome.everyChunkRead && accumulator && store) {
          const completion = accumulator.result();
          if (cacheable(completion)) void store(completion);
        }
      },
    });
    return { kind: "stream", body, endpoint, model: fwd.step.model };
  }

  private async cacheLookup(model: string, key: string): Promise<ChatCompletion | null> {
    try {
      const hit = await chatCache(this.rt.stores.cache).get(key);
      this.rt.metrics.cache.inc({ model, result: hit ? "hit" : "miss" });
      return hit;
    } catch {
      this.rt.metrics.cache.inc({ model, result: "error" });
      return null;
    }
  }

  private async cacheSet(model: string, key: string, completion: ChatCompletion, ttlMs: number): Promise<void> {
    try {
      await chatCache(this.rt.stores.cache).set(key, completion, ttlMs);
    } catch {
      this.rt.metrics.cache.inc({ model, result: "error" });
    }
  }

  /** A hit is a new completion (new id and time) that never touches a backend. */
  private serveCached(req: CheckedRequest, cached: ChatCompletion): ProxyResult {
    const completion: ChatCompletion = { ...cached, id: `chatcmpl-${this.rt.ids("item").slice(5)}`, created: Math.floor(Date.now() / 1000), model: req.model };
    if (!req.stream) return { kind: "json", body: JSON.stringify(completion), endpoint: "cache", model: req.model };
    const includeUsage = (req.body.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true;
    return { kind: "stream", body: chunksSseBody(completionToChunks(completion, includeUsage)), endpoint: "cache", model: req.model };
  }
}
