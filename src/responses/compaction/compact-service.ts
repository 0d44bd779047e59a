/**
 * Where compaction enters the request path:
 * `POST /v1/responses/compact` takes steps 1-3 (`http/routes/compact.ts`,
 * `responses/compaction/compact-service.ts`), then one `UpstreamAttempt` whose request is the
 * kind's: a summarisation call on `kind: chat` and `kind: anthropic`
 * (`responses/compaction/compact.ts`: the router seals the summary, `wire/seal.ts`), the
 * upstream's `/responses/compact` on `kind: openai`. On `POST /v1/responses`, a
 * `compaction_trigger` last input item makes step 6 pick the compaction adapter on chat and
 * anthropic endpoints (`responses/compaction/trigger-adapter.ts`), and `context_management` over
 * its threshold compacts between steps 3 and 5 (`responses/compaction/auto-compact.ts`).
 */
/**
 * POST /v1/responses/compact: OpenAI's body and `response.compaction` object on both endpoint
 * kinds, through the one upstream attempt (slot, failover, fallbacks, health). `kind: chat` and
 * `kind: anthropic`: the router summarises (compact.ts); `kind: openai`: the upstream's `/responses/compact`,
 * history replayed as input (no previous_response_id upstream), its items returned untouched.
 * A compaction is not stored (OpenAI does not store it either).
 */
import type { CompactedResponse } from "openai/resources/responses/responses";
import { invalidRequest } from "../../ops/errors.js";
import type { ApiKey } from "../../keys/policy.js";
import type { TokenCount } from "../../keys/usage.js";
import { fallbackSteps } from "../../runtime/models.js";
import { nativeRequestBody } from "../../translate/openai/rewrite.js";
import { clientHeadersFor } from "../adapters/openai.js";
import type { Lease } from "../../routing/pool.js";
import type { Runtime } from "../../runtime/runtime.js";
import type { CreateResponseRequest, JsonObject } from "../../wire/types.js";
import { UpstreamAttempt } from "../../upstream/attempt.js";
import { UpstreamFailure } from "../../upstream/errors.js";
import { countCompaction, keptUserItems, readSummary, routerCompactionsAsText, sealedCompactionItem, summaryRequest } from "./compact.js";
import { recordTokenUsage } from "../create/execute.js";
import { buildPlan, type Plan } from "../create/plan.js";
import { fetchFileUrls } from "../files/fetch-files.js";
import { readStoredFiles } from "../files/stored-files.js";
import { storedFilesInline } from "../../translate/openai/files.js";
import { validateCreateRequest } from "../create/validate.js";

/** Fields of a compact body the router does not pass on or take: a compaction is never stored, streamed or run in the background. */
const NOT_COMPACT_FIELDS = ["stream", "store", "background", "router"];

export interface CompactContext {
  owner: string | null;
  key?: ApiKey | null;
  signal: AbortSignal;
  /** Filled in for metrics and limits: time on the upstream, tokens it reported. */
  stats?: { upstreamMs?: number; tokens?: TokenCount };
  /** Client headers a `kind: openai` upstream receives (OpenAI-Beta). */
  upstreamHeaders?: Readonly<Record<string, string>>;
}

/** POST /v1/responses/compact: OpenAI's body and `response.compaction` object on both endpoint kinds. */
export class CompactService {
  constructor(private readonly rt: Runtime) {}

  async compact(body: unknown, ctx: CompactContext): Promise<{ result: CompactedResponse; endpoint: string; model: string }> {
    const rt = this.rt;
    if (body === null || typeof body !== "object" || Array.isArray(body)) throw invalidRequest("The request body must be a JSON object.", null, "invalid_type");
    const fields: JsonObject = { ...(body as JsonObject) };
    for (const k of NOT_COMPACT_FIELDS) delete fields[k];
    const req = validateCreateRequest({ ...fields, store: false });
    const plan = await readStoredFiles(rt, await fetchFileUrls(await buildPlan(req, { cfg: rt.config, responses: rt.stores.responses, conversations: rt.stores.conversations, ids: rt.ids, now: Date.now }, ctx.owner, ctx.key ?? null), ctx.signal));
    if (plan.input.at(-1)?.type === "compaction_trigger") throw invalidRequest("A 'compaction_trigger' item belongs in POST /v1/responses, not in a compact request.", "input", "invalid_value");
    const items = [...plan.history, ...plan.input];
    const attempt = await UpstreamAttempt.open(rt, {
      model: plan.model,
      steps: fallbackSteps(plan.cfg, plan.model, plan.modelCfg, plan.targets),
      routing: plan.cfg.routing,
      signal: ctx.signal,
      prefer: plan.preferEndpoint,
      prepare: (lease) =>
        lease.endpoint.config.kind === "openai"
          ? { path: "/responses/compact", body: JSON.stringify(nativeCompactBody(plan, fields, lease)), headers: clientHeadersFor(ctx.upstreamHeaders, lease.endpoint.config.headers) }
          : summaryRequest(plan, items, lease, false),
    });
    let ok = false;
    try {
      const { json } = await attempt.readJson();
      const endpoint = attempt.endpoint.name;
      const kind = attempt.endpoint.config.kind;
      let result: CompactedResponse;
      if (kind !== "openai") {
        const { summary, usage } = readSummary(endpoint, json);
        const kept = keptUserItems(plan, items);
        const output = [...kept, sealedCompactionItem(plan, rt.ids("cmp"), summary)];
        result = { id: plan.id, object: "response.compaction", created_at: plan.createdAt, output, usage } as unknown as CompactedResponse;
        countCompaction(rt, { model: plan.model, kind, trigger: "compact", before: usage.input_tokens, after: { kept, summary } });
      } else {
        if (!json || typeof json !== "object" || !Array.isArray((json as JsonObject).output)) throw new UpstreamFailure(endpoint, "protocol", "the compact answer had no output");
        // The upstream's items (its encrypted_content included) reach the client untouched; only the id is the router's.
        result = { ...(json as CompactedResponse), id: plan.id };
        countCompaction(rt, { model: plan.model, kind, trigger: "compact", before: result.usage?.input_tokens ?? 0 });
      }
      ok = true;
      const tokens = recordTokenUsage(rt, { response: { usage: result.usage } as never, endpoint, model: attempt.step.model }, plan.owner);
      if (ctx.stats) {
        ctx.stats.tokens = tokens;
        ctx.stats.upstreamMs = performance.now() - attempt.started;
      }
      return { result, endpoint, model: attempt.step.model };
    } finally {
      attempt.end(ok);
    }
  }
}

/** The native compact body: the client's fields, history replayed as input (no previous_response_id upstream), the upstream's model name. */
function nativeCompactBody(plan: Plan, fields: JsonObject, lease: Lease): JsonObject {
  const body = nativeRequestBody({ ...fields, model: plan.req.model, input: plan.req.input } as CreateResponseRequest, {
    upstreamModel: lease.target.upstreamModel,
    history: plan.history,
    stream: false,
    wantEncryptedReasoning: false,
    resolved: plan.input,
  });
  delete body.store;
  delete body.stream;
  body.input = storedFilesInline(routerCompactionsAsText(body.input, plan.cfg), plan.storedFiles) as typeof body.input;
  return body;
}
