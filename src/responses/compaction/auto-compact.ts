/**
 * Server-side compaction (`context_management: [{type: "compaction", compact_threshold: N}]` on
 * a create request) for models served by `kind: chat` or `kind: anthropic` endpoints: when the request's rendered
 * input is over N tokens - counted as POST /v1/responses/input_tokens counts it (the backend's
 * tokenizer, else the estimate) - the router first asks the backend for a summary (compact.ts),
 * then answers over the compacted context: the plan gains a sealed compaction item that the
 * backend sees after the input (what it summarises is left out) and that is the response's
 * first output item. Models with an `openai` endpoint get the field passed through instead; a
 * background request is not compacted by the router.
 */
import { invalidRequest } from "../../ops/errors.js";
import type { TokenCount } from "../../keys/usage.js";
import { fallbackSteps } from "../../runtime/models.js";
import type { Runtime } from "../../runtime/runtime.js";
import type { CreateResponseRequest } from "../../wire/types.js";
import { UpstreamAttempt } from "../../upstream/attempt.js";
import { countCompaction, readSummary, sealedCompactionItem, summaryRequest, keptUserItems } from "./compact.js";
import { recordTokenUsage } from "../create/execute.js";
import { InputTokensService } from "../items/input-tokens.js";
import type { Plan } from "../create/plan.js";

/** OpenAI's smallest `compact_threshold` (tokens): anything lower is its 400. */
export const MIN_COMPACT_THRESHOLD = 1000;

/** The compaction threshold a request asks for, or null; a malformed entry is a 400. */
export function compactThreshold(req: CreateResponseRequest): number | null {
  const cm = req.context_management;
  if (cm == null) return null;
  if (!Array.isArray(cm)) throw invalidRequest("Invalid type for 'context_management': expected an array of objects.", "context_management", "invalid_type");
  let threshold: number | null = null;
  cm.forEach((entry, i) => {
    const e = entry as { type?: unknown; compact_threshold?: unknown } | null;
    if (!e || typeof e !== "object" || e.type !== "compaction") {
      throw invalidRequest(`Invalid value for 'context_management[${i}].type': only 'compaction' is supported.`, `context_management[${i}].type`, "invalid_value");
    }
    const t = e.compact_threshold;
    if (t == null) return;
    if (typeof t !== "number" || !Number.isInteger(t)) {
      throw invalidRequest(`Invalid value for 'context_management[${i}].compact_threshold': expected an integer.`, `context_management[${i}].compact_threshold`, "invalid_value");
    }
    if (t < MIN_COMPACT_THRESHOLD) {
      throw invalidRequest(
        `Invalid 'context_management[${i}].compact_threshold': integer below minimum value. Expected a value >= ${MIN_COMPACT_THRESHOLD}, but got ${t} instead.`,
        `context_management[${i}].compact_threshold`,
        "integer_below_min_value",
      );
    }
    threshold = threshold === null ? t : Math.min(threshold, t);
  });
  return threshold;
}

export class AutoCompactor {
  private readonly counter: InputTokensService;

  constructor(private readonly rt: Runtime) {
    this.counter = new InputTokensService(rt);
  }

  /** The plan as it is (at once when the request sets no threshold), or with a compaction item when its context is over the requested threshold. */
  apply(plan: Plan, signal: AbortSignal, stats?: { tokens?: TokenCount }): Plan | Promise<Plan> {
    const threshold = compactThreshold(plan.req);
    if (threshold === null || !servedByRouterTranslation(plan)) return plan;
    return this.compactOver(threshold, plan, signal, stats);
  }

  private async compactOver(threshold: number, plan: Plan, signal: AbortSignal, stats?: { tokens?: TokenCount }): Promise<Plan> {
    const { tokens } = await this.counter.countPlan(plan, signal);
    if (tokens <= threshold) return plan;

    const rt = this.rt;
    const items = [...plan.history, ...plan.input];
    const attempt = await UpstreamAttempt.open(rt, {
      model: plan.model,
      // The summary comes from the model's own (chat) pool: a fallback could be another kind.
      steps: fallbackSteps(plan.cfg, plan.model, plan.modelCfg, plan.targets).slice(0, 1),
      routing: plan.cfg.routing,
      signal,
      prefer: plan.preferEndpoint,
      prepare: (lease) => summaryRequest(plan, items, lease, false),
    });
    let ok = false;
    try {
      const { json } = await attempt.readJson();
      const { summary, usage } = readSummary(attempt.endpoint.name, json);
      ok = true;
      countCompaction(rt, { model: plan.model, kind: attempt.endpoint.config.kind === "anthropic" ? "anthropic" : "chat", trigger: "threshold", before: usage.input_tokens || tokens, after: { kept: keptUserItems(plan, items), summary } });
      const spent = recordTokenUsage(rt, { response: { usage } as never, endpoint: attempt.endpoint.name, model: plan.model }, plan.owner);
      if (stats) stats.tokens = spent; // the answer's own usage is added to it when it comes (service.ts finish)
      return { ...plan, compacted: sealedCompactionItem(plan, rt.ids("cmp"), summary), useCache: false };
    } finally {
      attempt.end(ok);
    }
  }
}

/** Every endpoint of the model's pool is `kind: chat` or `kind: anthropic`: the router translates (and compacts) what it sends. */
export function servedByRouterTranslation(plan: Pick<Plan, "cfg" | "targets">): boolean {
  const kinds = new Map(plan.cfg.endpoints.map((e) => [e.name, e.kind]));
  return plan.targets.length > 0 && plan.targets.every((t) => kinds.get(t.endpoint) !== "openai");
}
