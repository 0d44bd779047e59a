/**
 * What src/responses/compaction/ holds:
 * compaction: `compact.ts` the summarisation (chat completions or Messages) and sealing, `compact-
 * service.ts` POST /v1/responses/compact, `trigger-adapter.ts` the `compaction_trigger` item on
 * chat and anthropic, `auto-compact.ts` `context_management`, `compaction-key.ts` the sealer of a
 * config
 */
/**
 * Compaction: the long history of a session replaced by the user messages it kept plus one
 * `compaction` item that carries a summary. On `kind: openai` endpoints the upstream does it
 * (`POST /responses/compact`, its item returned untouched). On `kind: chat` endpoints the
 * router does it: it asks the model's chat backend for a summary of the history (the
 * configurable `compaction.prompt` as the last user message), keeps the newest user messages
 * (`compaction.user_message_max_tokens`) and seals the summary into the item's
 * `encrypted_content` (wire/seal.ts, key of compaction-key.ts). Used by POST /v1/responses/compact
 * (compact-service.ts), the `compaction_trigger` input item (adapter-compact.ts) and
 * `context_management` (auto-compact.ts).
 */
import type { CompactionTrigger } from "../../ops/metrics.js";
import type { Lease } from "../../routing/pool.js";
import type { Runtime } from "../../runtime/runtime.js";
import { isRouterSealed, sealSummary } from "../../wire/seal.js";
import { anthropicUsageToResponses, responsesToMessagesRequest, type Message } from "../../translate/anthropic/index.js";
import { betaHeader, messagesOptions } from "../adapters/anthropic.js";
import type { PreparedRequest } from "../../upstream/attempt.js";
import { chatUsageToResponses, DEFAULT_SUMMARY_PROMPT, keptUserMessages, messageText, responsesToChatRequest, summaryMessageText, supersededByCompaction } from "../../translate/index.js";
import type { ChatUsage, CreateResponseRequest, Item, Usage } from "../../wire/types.js";
import { UpstreamFailure } from "../../upstream/errors.js";
import { compactionOptions, openCompaction, sealerFor } from "./compaction-key.js";
import type { Plan } from "../create/plan.js";

const CHARS_PER_TOKEN = 4;

/** The chat body of a summarisation call: the history as the model would see it, then the summary prompt. No tools. */
export function summaryRequestBody(plan: Plan, items: Item[], lease: Lease, stream: boolean): string {
  const cfg = plan.cfg.compaction;
  // No tools of its own; "none" for those the history's additional_tools items bring in (hoisted by the translation).
  const req: CreateResponseRequest = { model: plan.req.model, instructions: plan.req.instructions ?? null, tool_choice: "none" };
  const prompt: Item = { type: "message", role: "user", content: cfg.prompt ?? DEFAULT_SUMMARY_PROMPT };
  const t = responsesToChatRequest(req, [...items, prompt], {
    upstreamModel: lease.target.upstreamModel,
    stream,
    developerRole: lease.endpoint.config.developer_role,
    hostedTools: "drop",
    historyItems: plan.history.length,
    compaction: compactionOptions(plan.cfg),
    files: { fetched: plan.files, stored: plan.storedFiles, inlineText: plan.modelCfg.inline_text_files },
  });
  if (cfg.summary_max_tokens) t.body.max_tokens = cfg.summary_max_tokens;
  return JSON.stringify(t.body);
}

/**
 * The summarisation call for an endpoint the router compacts for: chat completions on `kind: chat`,
 * the Messages API on `kind: anthropic` (the tools stay defined, as Anthropic requires for a history
 * with tool calls, but none may be called).
 */
export function summaryRequest(plan: Plan, items: Item[], lease: Lease, stream: boolean): PreparedRequest {
  if (lease.endpoint.config.kind !== "anthropic") return { path: "/chat/completions", body: summaryRequestBody(plan, items, lease, stream) };
  const cfg = plan.cfg.compaction;
  // "none" also covers tools the history's additional_tools items bring in (hoisted by the translation).
  const req: CreateResponseRequest = { model: plan.req.model, instructions: plan.req.instructions ?? null, tools: plan.req.tools, tool_choice: "none" };
  const prompt: Item = { type: "message", role: "user", content: cfg.prompt ?? DEFAULT_SUMMARY_PROMPT };
  const opts = messagesOptions(plan, lease, stream);
  const t = responsesToMessagesRequest(req, [...items, prompt], { ...opts, defaultMaxTokens: cfg.summary_max_tokens ?? opts.defaultMaxTokens, hostedTools: "drop" });
  return { path: "/messages", body: JSON.stringify(t.body), headers: betaHeader(plan, lease) };
}

/** A compaction item sealed by the router. */
export function sealedCompactionItem(plan: Plan, id: string, summary: string): Item {
  return { id, type: "compaction", encrypted_content: sealSummary(sealerFor(plan.cfg), summary) };
}

/** The summary and usage of a non-streamed summarisation answer (chat completion or Anthropic message). */
export function readSummary(endpoint: string, json: unknown): { summary: string; usage: Usage } {
  const msg = json as Message | null;
  if (msg && msg.type === "message" && Array.isArray(msg.content)) {
    let summary = "";
    for (const b of msg.content) if (b.type === "text") summary += b.text;
    return { summary, usage: anthropicUsageToResponses(msg.usage) };
  }
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
export function countCompaction(rt: Runtime, o: { model: string; kind: "chat" | "openai" | "anthropic"; trigger: CompactionTrigger; before: number; after?: { kept: Item[]; summary: string } }): void {
  rt.metrics.compactions.inc({ model: o.model, kind: o.kind, trigger: o.trigger });
  if (o.before > 0) rt.metrics.compactionTokens.inc({ kind: o.kind, trigger: o.trigger, stage: "before" }, o.before);
  if (o.after) {
    let chars = o.after.summary.length;
    for (const m of o.after.kept) chars += messageText(m).length;
    rt.metrics.compactionTokens.inc({ kind: o.kind, trigger: o.trigger, stage: "after" }, Math.ceil(chars / CHARS_PER_TOKEN));
  }
}

/**
 * The router's own compaction items, for an `openai` endpoint (a chain or fallback that crosses
 * kinds): OpenAI cannot open them, so each one the router opens becomes the framed summary as a
 * user message, and when the last compaction item is the router's, what it summarises is left
 * out as on a chat backend. OpenAI's own items (and any the router cannot open) pass untouched;
 * the upstream judges those. Returns the same array when there is nothing of the router's.
 */
export function routerCompactionsAsText(items: unknown, cfg: Plan["cfg"]): unknown {
  if (!Array.isArray(items) || !items.some((i: Item) => i?.type === "compaction" && isRouterSealed(i.encrypted_content))) return items;
  const list = items as Item[];
  const last = list.findLastIndex((i) => i?.type === "compaction");
  const skip = isRouterSealed(list[last]!.encrypted_content) ? supersededByCompaction(list, cfg.compaction.user_message_max_tokens) : null;
  const out: Item[] = [];
  list.forEach((item, i) => {
    if (skip?.has(i)) return;
    const summary = item?.type === "compaction" ? openCompaction(cfg, item.encrypted_content) : null;
    out.push(summary === null ? item : { type: "message", role: "user", content: [{ type: "input_text", text: summaryMessageText(summary) }] });
  });
  return out;
}
