/**
 * Compaction: the long history of a session replaced by the user messages it kept plus one
 * `compaction` item that carries a summary. On `kind: openai` endpoints the upstream does it
 * (`POST /responses/compact`, its item returned untouched). On `kind: chat` endpoints the
 * router does it: it asks the model's chat backend for a summary of the history (the
 * configurable `compaction.prompt` as the last user message), keeps the newest user messages
 * (`compaction.user_message_max_tokens`) and seals the summary into the item's
 * `encrypted_content` (seal.ts, key of compaction-key.ts). Used by POST /v1/responses/compact
 * (CompactService), the `compaction_trigger` input item (adapter-compact.ts) and
 * `context_management` (auto-compact.ts).
 */
import type { CompactedResponse } from "openai/resources/responses/responses";
import { invalidRequest } from "../errors.js";
import type { CompactionTrigger } from "../metrics.js";
import { fallbackSteps } from "../models.js";
import { nativeRequestBody } from "../native/rewrite.js";
import type { Lease } from "../routing/pool.js";
import type { Runtime } from "../runtime.js";
import { sealSummary } from "../seal.js";
import { chatUsageToResponses, DEFAULT_SUMMARY_PROMPT, keptUserMessages, messageText, responsesToChatRequest } from "../translate/index.js";
import type { ChatUsage, CreateResponseRequest, Item, JsonObject, Usage } from "../types.js";
import { UpstreamAttempt } from "../upstream/attempt.js";
import { UpstreamFailure } from "../upstream/errors.js";
import { compactionOptions, sealerFor } from "./compaction-key.js";
import { recordTokenUsage } from "./execute.js";
import { buildPlan, type Plan } from "./plan.js";
import type { ApiKey } from "../keys/policy.js";
import type { TokenCount } from "../keys/usage.js";
import { validateCreateRequest } from "./validate.js";

const CHARS_PER_TOKEN = 4;

/** The chat body of a summarisation call: the history as the model would see it, then the summary prompt. No tools. */
export function summaryRequestBody(plan: Plan, items: Item[], lease: Lease, stream: boolean): string {
  const cfg = plan.cfg.compaction;
  const req: CreateResponseRequest = { model: plan.req.model, instructions: plan.req.instructions ?? null };
  const prompt: Item = { type: "message", role: "user", content: cfg.prompt ?? DEFAULT_SUMMARY_PROMPT };
  const t = responsesToChatRequest(req, [...items, prompt], {
    upstreamModel: lease.target.upstreamModel,
    stream,
    developerRole: lease.endpoint.config.developer_role,
    hostedTools: "drop",
    historyItems: plan.history.length,
    compaction: compactionOptions(plan.cfg),
  });
  if (cfg.summary_max_tokens) t.body.max_tokens = cfg.summary_max_tokens;
  return JSON.stringify(t.body);
}

/** A compaction item sealed by the router. */
export function sealedCompactionItem(plan: Plan, id: string, summary: string): Item {
  return { id, type: "compaction", encrypted_content: sealSummary(sealerFor(plan.cfg), summary) };
}

/** The summary and usage of a non-streamed summarisation answer. */
export function readSummary(endpoint: string, json: unknown): { summary: string; usage: Usage } {
  const j = json as { choices?: { message?: { content?: unknown } }[]; usage?: ChatUsage } | null;
  const message = j?.choices?.[0]?.message;
  if (!message) throw new UpstreamFailure(endpoint, "protocol", "the summarisation answer had no message");
  return { summary: typeof message.content === "string" ? message.content : "", usage: chatUsageToResponses(j!.usage) };
}

/** The user messages a chat compaction keeps, as output items. */
export function keptUserItems(plan: Plan, items: Item[]): Item[] {
  return keptUserMessages(items, plan.cfg.compaction.user_message_max_tokens).map((m) => {
    const content = typeof m.content === "string" ? [{ type: "input_text", text: m.content }] : m.content;
    return { id: m.id, type: "message", role: "user", status: "completed", content } as Item;
  });
}

/** Counts a compaction: by kind and trigger, with the context size before (upstream usage) and after (chat: estimated). */
export function countCompaction(rt: Runtime, o: { model: string; kind: "chat" | "openai"; trigger: CompactionTrigger; before: number; after?: { kept: Item[]; summary: string } }): void {
  rt.metrics.compactions.inc({ model: o.model, kind: o.kind, trigger: o.trigger });
  if (o.before > 0) rt.metrics.compactionTokens.inc({ kind: o.kind, trigger: o.trigger, stage: "before" }, o.before);
  if (o.after) {
    let chars = o.after.summary.length;
    for (const m of o.after.kept) chars += messageText(m).length;
    rt.metrics.compactionTokens.inc({ kind: o.kind, trigger: o.trigger, stage: "after" }, Math.ceil(chars / CHARS_PER_TOKEN));
  }
}

/** Fields of a compact body the router does not pass on or take: a compaction is never stored, streamed or run in the background. */
const NOT_COMPACT_FIELDS = ["stream", "store", "background", "router"];

export interface CompactContext {
  owner: string | null;
  key?: ApiKey | null;
  signal: AbortSignal;
  /** Filled in for metrics and limits: time on the upstream, tokens it reported. */
  stats?: { upstreamMs?: number; tokens?: TokenCount };
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
    const plan = await buildPlan(req, { cfg: rt.config, responses: rt.stores.responses, conversations: rt.stores.conversations, ids: rt.ids, now: Date.now }, ctx.owner, ctx.key ?? null);
    if (plan.input.at(-1)?.type === "compaction_trigger") throw invalidRequest("A 'compaction_trigger' item belongs in POST /v1/responses, not in a compact request.", "input", "invalid_value");
    const items = [...plan.history, ...plan.input];
    const attempt = await UpstreamAttempt.open(rt, {
      model: plan.model,
      steps: fallbackSteps(plan.cfg, plan.model, plan.modelCfg, plan.targets),
      routing: plan.cfg.routing,
      signal: ctx.signal,
      prefer: plan.preferEndpoint,
      prepare: (lease) =>
        lease.endpoint.config.kind === "chat"
          ? { path: "/chat/completions", body: summaryRequestBody(plan, items, lease, false) }
          : { path: "/responses/compact", body: JSON.stringify(nativeCompactBody(plan, fields, lease)) },
    });
    let ok = false;
    try {
      const { json } = await attempt.readJson();
      const endpoint = attempt.endpoint.name;
      const kind = attempt.endpoint.config.kind;
      let result: CompactedResponse;
      if (kind === "chat") {
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
  });
  delete body.store;
  delete body.stream;
  return body;
}
