/**
 * What src/responses/ holds:
 * the Responses service; `service.ts` is the one entry every transport calls, and each sub-folder
 * is one capability it uses:
 */
import type { ResponseItemList } from "openai/resources/responses/input-items";
import { ApiError, responseNotFound } from "../ops/errors.js";
import type { ApiKey } from "../keys/policy.js";
import { NO_TOKENS, type TokenCount } from "../keys/usage.js";
import { isFinished } from "../wire/protocol.js";
import type { Runtime } from "../runtime/runtime.js";
import { sseBody, type EventSink, type StreamBody } from "../wire/sse-writer.js";
import type { StoredResponse } from "../store/types.js";
import { failedResponse, responseSkeleton, responseToEvents } from "../translate/index.js";
import { emitted } from "../wire/emitted.js";
import { unixSeconds } from "../wire/clock.js";
import type { CreateResponseRequest, EmittedResponse, Item, JsonObject, ResponseObject } from "../wire/types.js";
import { clientText } from "../translate/openai/rewrite.js";
import { AutoCompactor, servedByRouterTranslation } from "./compaction/auto-compact.js";
import { BackgroundJobs } from "./background/jobs.js";
import { cacheableAnswer, cacheKey } from "./create/cache-key.js";
import { appendTurn } from "./conversations/turn.js";
import { recordTokenUsage, spentTokens, type RunOutcome } from "./create/execute.js";
import { checkKeyTools, hostedTools, mayRunTools, openRun } from "./tool-loop/index.js";
import { buildPlan, loadOwned, type HistorySource, type Plan } from "./create/plan.js";
import { pageBounds, pageOf } from "./items/input-items.js";
import { checkInclude, includedResponse, includedView } from "./items/include.js";
import { callStore, requireConnected } from "./create/store-access.js";
import { StreamShutdown } from "./create/stream-shutdown.js";
import { tracePlan } from "./create/trace.js";
import { validateCreateRequest } from "./create/validate.js";
import { fetchFileUrls } from "./files/fetch-files.js";
import { readStoredFiles } from "./files/stored-files.js";

export interface RequestContext {
  owner: string | null;
  /** The caller's key entry (allow-list); null without keys. */
  key?: ApiKey | null;
  signal: AbortSignal;
  /** Aborts the upstream call (a stream's client went away). */
  abort(): void;
  /** Filled in for metrics: time spent on the upstream call, tokens the upstream reported. */
  stats?: { upstreamMs?: number; tokens?: TokenCount; responseId?: string; background?: boolean };
  /** Responses to chain from before the store (a WebSocket connection's recent turns). */
  history?: HistorySource;
  /** Client headers a `kind: openai` upstream receives (allow-listed by the transport, e.g. OpenAI-Beta). */
  upstreamHeaders?: Readonly<Record<string, string>>;
  /** Told of every finished response with its full input (stored or not), before its terminal event. */
  remember?(record: StoredResponse): void;
}

/** `model`: the model that served the request (the one asked for or a fallback); unset for background. */
export type CreateResult =
  | { kind: "json"; /** The response as the client sees it, serialised. */ text: string; endpoint: string; model?: string }
  | { kind: "stream"; body: StreamBody; endpoint: string; model?: string };

/** A streamed create as its event producer: HTTP wraps `run` in an SSE body, a WebSocket sends each event as a message. */
export interface CreateEvents {
  run(sink: EventSink): Promise<void>;
  endpoint: string;
  model?: string;
}

/** What a create started as: a JSON answer, a background stream body, or a stream's event producer. */
type Started = CreateResult | (CreateEvents & { kind: "events" });

/**
 * The Responses service: create / retrieve / delete / cancel / input items. Handlers
 * stay thin: they parse, call one method here, and serialise.
 */
export class ResponsesService {
  readonly background: BackgroundJobs;
  private readonly compactor: AutoCompactor;

  constructor(private readonly rt: Runtime) {
    this.background = new BackgroundJobs(rt);
    this.compactor = new AutoCompactor(rt);
  }

  async create(body: unknown, ctx: RequestContext): Promise<CreateResult> {
    const out = await this.start(body, ctx);
    if (out.kind !== "events") return out;
    return { kind: "stream", body: sseBody(out.run, ctx.abort), endpoint: out.endpoint, model: out.model };
  }

  /**
   * A streamed create (the body's `stream` is forced on) whose events go to the caller's sink:
   * the WebSocket transport. Background requests are the caller's to refuse first.
   */
  async createEvents(body: Record<string, unknown>, ctx: RequestContext): Promise<CreateEvents> {
    const out = await this.start({ ...body, stream: true, background: false }, ctx);
    if (out.kind !== "events") throw new Error("a streamed create answered without events");
    return out;
  }

  /**
   * `generate: false`: validates and plans the request, keeps its state (stored when `store`
   * is on, remembered by the caller) and answers with a completed response without output,
   * so a later turn can chain from its id. No backend is called.
   */
  async prepare(body: Record<string, unknown>, ctx: RequestContext): Promise<CreateEvents> {
    const plan = await this.plan({ ...body, stream: true, background: false }, ctx);
    if (plan.store) await requireConnected(this.rt.stores.status);
    return this.withoutOutputEvents(plan, await this.keepWithoutOutput(plan, ctx));
  }

  /** A completed response without output, kept like any other (stored, appended, remembered) so a later turn chains from it. No backend is called. */
  private async keepWithoutOutput(plan: Plan, ctx: RequestContext): Promise<ResponseObject> {
    if (ctx.stats) ctx.stats.tokens = NO_TOKENS;
    const response = responseSkeleton(plan.req, { id: plan.id, createdAt: plan.createdAt, model: plan.model, status: "completed", previousResponseId: plan.previousResponseId, completedAt: unixSeconds() });
    const endpoint = plan.preferEndpoint ?? undefined;
    await appendTurn(this.rt, plan, response, endpoint, false, () => this.keep(plan, response, endpoint, ctx));
    return response;
  }

  private withoutOutputEvents(plan: Plan, response: ResponseObject): CreateEvents & { kind: "events" } {
    const events = responseToEvents(response);
    return {
      kind: "events",
      run: async (sink) => {
        for (const ev of events) sink.send(ev.type, JSON.stringify(ev));
      },
      endpoint: "none",
      model: plan.model,
    };
  }

  private async plan(body: unknown, ctx: RequestContext): Promise<Plan> {
    const req = validateCreateRequest(body);
    const deps = { cfg: this.rt.config, responses: this.rt.stores.responses, conversations: this.rt.stores.conversations, ids: this.rt.ids, now: Date.now, local: ctx.history, tracing: this.rt.tracing, upstreamHeaders: ctx.upstreamHeaders };
    const plan = await buildPlan(req, deps, ctx.owner, ctx.key ?? null);
    checkKeyTools(ctx.key, plan.req);
    const span = this.rt.tracing.current();
    if (span) tracePlan(span, plan, this.rt.tracing.captureContent);
    return plan;
  }

  private async start(body: unknown, ctx: RequestContext): Promise<Started> {
    let plan = await this.plan(body, ctx);
    if (ctx.stats) {
      ctx.stats.responseId = plan.id;
      ctx.stats.background = plan.background;
    }
    // Fail before spending an upstream call on a response that could not be stored.
    if (plan.store) await requireConnected(this.rt.stores.status);
    // Tools the router runs are checked (server URLs, labels) before anything is queued; their
    // results come from outside the model, so such a response is never served from the cache.
    // They are resolved once here and handed to openRun.
    const hosted = mayRunTools(this.rt, plan) ? await hostedTools(this.rt.config, plan, this.rt.files) : null;
    if (hosted) plan = { ...plan, useCache: false };
    // No upstream tokens for this request itself: a background job counts its own, a cache hit costs none.
    if (plan.background) return this.createBackground(plan, ctx);
    // A prompt-cache warm-up generates nothing (OpenAI's prewarm); on a kind the router translates for it answers without an upstream call.
    if (prewarms(plan.req) && servedByRouterTranslation(plan)) {
      const response = await this.keepWithoutOutput(plan, ctx);
      return plan.stream ? this.withoutOutputEvents(plan, response) : { kind: "json", text: JSON.stringify(response), endpoint: "none", model: plan.model };
    }
    // Awaited only when there is something to wait for: an await costs a promise and a microtask turn on every request.
    const fetched = fetchFileUrls(plan, ctx.signal); // file_url contents for a chat or anthropic backend (the compactor may read them too)
    plan = fetched instanceof Promise ? await fetched : fetched;
    const read = readStoredFiles(this.rt, plan); // file_id contents from the router's Files (404 for an unknown one), for every kind
    plan = read instanceof Promise ? await read : read;
    const compacted = this.compactor.apply(plan, ctx.signal, ctx.stats); // context_management over its threshold
    plan = compacted instanceof Promise ? await compacted : compacted;

    const key = plan.useCache ? cacheKey(plan.req, plan.model, [...plan.history, ...plan.input]) : null;
    if (key) {
      const hit = await this.cacheLookup(plan, key);
      if (hit) {
        if (ctx.stats) ctx.stats.tokens = NO_TOKENS;
        return this.serveCached(plan, hit, ctx);
      }
    }

    const conn = await openRun(this.rt, plan, ctx.signal, plan.stream, "in_progress", hosted);
    const endpoint = conn.endpoint.name;
    if (!plan.stream) {
      const out = await conn.pump(null).catch((err: unknown) => {
        const spent = spentTokens(err);
        if (spent && ctx.stats) ctx.stats.tokens = spent; // charged to the key although the request failed
        throw err;
      });
      if (ctx.stats) ctx.stats.upstreamMs = out.upstreamMs;
      const stored = await this.finish(plan, out, key, ctx);
      // The stored JSON is the client's too unless something in it is hidden from the client
      // (an Anthropic answer without thinking has nothing to hide: it is serialised once).
      const text = clientText(out.response, out.hideEncryptedReasoning, out.hideSearchSources, stored);
      return { kind: "json", text, endpoint, model: conn.model };
    }
    const run = async (sink: EventSink) => {
      const shutdown = new StreamShutdown(this.rt, sink, ctx.abort);
      try {
        const out = shutdown.outcome(await conn.pump(shutdown.sink, shutdown.options));
        if (ctx.stats) ctx.stats.upstreamMs = out.upstreamMs;
        const terminal = await this.finishStreamed(plan, out, key, ctx);
        sink.send(terminal.type, terminal.data);
      } finally {
        shutdown.stop();
      }
    };
    return { kind: "events", run, endpoint, model: conn.model };
  }

  /** GET /v1/responses/{id}: the parts OpenAI returns only on request only when `include` names them. */
  async retrieve(id: string, owner: string | null, include: readonly string[] = []): Promise<ResponseObject> {
    checkInclude(include);
    return includedResponse((await loadOwned(this.rt.stores.responses, id, owner)).response, include);
  }

  async remove(id: string, owner: string | null): Promise<JsonObject> {
    const rec = await loadOwned(this.rt.stores.responses, id, owner);
    // A background job still running stops; its recorded events go with it.
    if (rec.response.background === true && !isFinished(rec.response.status)) await callStore(() => this.rt.stores.jobs.cancel(id));
    await callStore(() => this.rt.stores.responses.delete(id));
    if (rec.response.background === true) await this.rt.stores.events.delete(id).catch(() => this.rt.metrics.storeErrors.inc({ store: "events", op: "delete" }));
    return { id, object: "response", deleted: true };
  }

  cancel(id: string, owner: string | null): Promise<ResponseObject> {
    return this.background.cancel(id, owner);
  }

  /** GET /v1/responses/{id}?stream=true[&starting_after=N] for a background response. */
  streamAgain(id: string, owner: string | null, startingAfter: string | undefined): Promise<StreamBody> {
    return this.background.stream(id, owner, startingAfter);
  }

  /** 200 at once with the queued response; with stream: true, the job's events as it records them. */
  private async createBackground(plan: Plan, ctx: RequestContext): Promise<Started> {
    if (ctx.stats) ctx.stats.tokens = NO_TOKENS;
    const response = await this.background.submit(plan);
    if (!plan.stream) return { kind: "json", text: JSON.stringify(response), endpoint: "background" };
    return { kind: "stream", body: this.background.follow(plan.id, -1), endpoint: "background" };
  }

  async inputItems(id: string, owner: string | null, query: { after?: string; limit?: string; order?: string; include?: readonly string[] }): Promise<ResponseItemList> {
    const include = query.include ?? [];
    checkInclude(include);
    // The ids first, then only the parts of the history this page shows.
    const index = await callStore(() => this.rt.stores.responses.inputIndex(id));
    if (!index || (index.owner !== null && index.owner !== owner)) throw responseNotFound(id);
    const { at, hasMore } = pageBounds(index.ids, query);
    const page = pageOf(await callStore(() => index.load(at)), hasMore);
    return { ...page, data: (page.data as unknown as Item[]).map((i) => includedView(i, include)) as unknown as ResponseItemList["data"] };
  }

  /**
   * Stores (when asked) and accounts for a finished response. Store failures surface as 503.
   * Resolves with the response's JSON when the store or the cache needed it (a JSON answer
   * reuses it), else undefined: it is serialised once, after appendTurn's last change to it.
   */
  private async finish(plan: Plan, out: RunOutcome, key: string | null, ctx: RequestContext): Promise<string | undefined> {
    const tokens = recordTokenUsage(this.rt, out, plan.owner);
    // unset: the upstream reported no usage; already set: a compaction before the answer spent some
    if (ctx.stats && tokens !== NO_TOKENS) ctx.stats.tokens = ctx.stats.tokens ? { input: ctx.stats.tokens.input + tokens.input, output: ctx.stats.tokens.output + tokens.output } : tokens;
    let json: string | undefined;
    await appendTurn(this.rt, plan, out.response, out.endpoint, out.terminal !== null, async () => {
      json = plan.store ? JSON.stringify(out.response) : undefined;
      if (plan.store || ctx.remember) await this.keep(plan, out.response, out.endpoint, ctx, json);
    });
    if (key && out.response.status === "completed" && cacheableAnswer(out.response)) await this.cacheSet(plan, key, out.response, (json ??= JSON.stringify(out.response)));
    return json;
  }

  /**
   * Stream variant: the response is stored BEFORE the terminal event goes out,
   * so a client that reads `response.completed` can chain from it at once. If
   * storing fails the stream ends in `response.failed` rather than a silent loss.
   */
  private async finishStreamed(plan: Plan, out: RunOutcome, key: string | null, ctx: RequestContext): Promise<{ type: string; data: string }> {
    try {
      await this.finish(plan, out, key, ctx);
      return out.terminal!;
    } catch (err) {
      const message = err instanceof ApiError ? err.message : "The response could not be stored.";
      this.rt.log.error({ model: plan.model, err: message }, "storing a streamed response failed");
      const seq = (JSON.parse(out.terminal!.data) as { sequence_number: number }).sequence_number;
      const response = failedResponse(out.response, { code: "server_error", message }) as unknown as EmittedResponse;
      const event = emitted({ type: "response.failed", response, sequence_number: seq });
      return { type: "response.failed", data: clientText(event, out.hideEncryptedReasoning, out.hideSearchSources) };
    }
  }

  /**
   * Stores the response (when the plan says so), then tells the transport of it (ctx.remember):
   * one record for both, its full input copied once. `responseJson`: the response already
   * serialised (for its JSON answer), not serialised again.
   */
  private async keep(plan: Plan, response: ResponseObject, endpoint: string | undefined, ctx: RequestContext, responseJson?: string): Promise<void> {
    if (!plan.store && !ctx.remember) return;
    const record: StoredResponse = { response, input: [...plan.history, ...plan.input], owner: plan.owner, endpoint };
    if (plan.basis) record.basis = plan.basis;
    if (plan.store) await this.save(record, responseJson);
    ctx.remember?.(record);
  }

  private async save(record: StoredResponse, responseJson?: string): Promise<void> {
    try {
      await callStore(() => this.rt.tracing.store("responses.save", () => this.rt.stores.responses.save(record, responseJson)));
    } catch (err) {
      this.rt.metrics.storeErrors.inc({ store: "responses", op: "save" });
      throw err;
    }
  }

  private async cacheLookup(plan: Plan, key: string): Promise<ResponseObject | null> {
    try {
      const hit = await this.rt.stores.cache.get(key);
      this.rt.metrics.cache.inc({ model: plan.model, result: hit ? "hit" : "miss" });
      return hit?.response ?? null;
    } catch {
      this.rt.metrics.cache.inc({ model: plan.model, result: "error" });
      return null;
    }
  }

  private async cacheSet(plan: Plan, key: string, response: ResponseObject, responseJson: string): Promise<void> {
    try {
      await this.rt.stores.cache.set(key, { response }, plan.modelCfg.cache?.ttl ?? 3_600_000, responseJson);
    } catch {
      this.rt.metrics.cache.inc({ model: plan.model, result: "error" });
    }
  }

  /**
   * A cache hit becomes a new response (new ids) and is stored like any other. It is the
   * cached response with the fields the cache key leaves out (cache-key.ts) taken from this
   * request, so a hit carries exactly the fields the miss carried.
   */
  private async serveCached(plan: Plan, cached: ResponseObject, ctx: RequestContext): Promise<Started> {
    const fresh = responseSkeleton(plan.req, { id: plan.id, createdAt: plan.createdAt, model: plan.model, status: cached.status, previousResponseId: plan.previousResponseId, completedAt: unixSeconds() });
    const response: ResponseObject = {
      ...fresh,
      ...cached,
      id: fresh.id,
      created_at: fresh.created_at,
      completed_at: fresh.completed_at,
      previous_response_id: fresh.previous_response_id,
      store: fresh.store,
      background: fresh.background,
      metadata: fresh.metadata,
      model: fresh.model,
      output: cached.output.map((item) => ({ ...item, id: this.rt.ids(idPrefix(item)) })),
    };
    if (fresh.conversation) response.conversation = fresh.conversation;
    else delete response.conversation;
    let json: string | undefined;
    await appendTurn(this.rt, plan, response, undefined, false, async () => {
      json = plan.stream ? undefined : JSON.stringify(response); // the answer's, reused by the store
      await this.keep(plan, response, undefined, ctx, json);
    });
    if (json !== undefined) return { kind: "json", text: json, endpoint: "cache", model: plan.model };
    const events = responseToEvents(response);
    const run = async (sink: EventSink) => {
      for (const ev of events) sink.send(ev.type, JSON.stringify(ev));
    };
    return { kind: "events", run, endpoint: "cache", model: plan.model };
  }
}

function idPrefix(item: Item): "msg" | "fc" | "rs" | "item" {
  return item.type === "message" ? "msg" : item.type === "function_call" ? "fc" : item.type === "reasoning" ? "rs" : "item";
}

/** `prompt_cache_options.prewarm: true`: prepare the prompt cache without generating output (it overrides `generate` to false). */
function prewarms(req: CreateResponseRequest): boolean {
  const options = (req as { prompt_cache_options?: unknown }).prompt_cache_options as { prewarm?: unknown } | null | undefined;
  return typeof options === "object" && options !== null && options.prewarm === true;
}
