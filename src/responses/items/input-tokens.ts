/**
 * POST /v1/responses/input_tokens: how many input tokens a create request would use.
 * OpenAI endpoints answer it themselves (pass-through), Anthropic endpoints with their
 * `POST /v1/messages/count_tokens` over the request as it would be sent (an Anthropic-compatible
 * server without that route gets the estimate). Chat endpoints have no such route:
 * the router renders the request as the chat messages it would send and asks the backend's
 * own tokenizer - llama.cpp (`POST /apply-template`, then `POST /tokenize`) or vLLM
 * (`POST /tokenize` with the messages) - and, when the backend has neither, estimates
 * (ESTIMATE_CHARS_PER_TOKEN, plus MESSAGE_OVERHEAD per message). The answer's header
 * `x-router-token-count` says which: `upstream`, `tokenizer` or `estimate`.
 */
import type { InputTokenCountResponse } from "openai/resources/responses/input-tokens";
import type { ApiKey } from "../../keys/policy.js";
import { nativeRequestBody } from "../../translate/openai/rewrite.js";
import type { Lease } from "../../routing/pool.js";
import type { Runtime } from "../../runtime/runtime.js";
import { responsesToChatRequest } from "../../translate/index.js";
import { responsesToMessagesRequest } from "../../translate/anthropic/index.js";
import { betaHeader, messagesOptions } from "../adapters/anthropic.js";
import type { ChatMessage, JsonObject } from "../../wire/types.js";
import type { UpstreamClient } from "../../upstream/client.js";
import { UpstreamFailure } from "../../upstream/errors.js";
import { buildPlan, type Plan } from "../create/plan.js";
import { compactionOptions } from "../compaction/compaction-key.js";
import { validateCreateRequest } from "../create/validate.js";
import { fetchFileUrls } from "../files/fetch-files.js";
import { readStoredFiles } from "../files/stored-files.js";
import { storedFilesInline } from "../../translate/openai/files.js";
import { ESTIMATE_CHARS_PER_TOKEN, MESSAGE_OVERHEAD } from "../../translate/truncation.js";

export type TokenCountSource = "upstream" | "tokenizer" | "estimate";

export { ESTIMATE_CHARS_PER_TOKEN, MESSAGE_OVERHEAD };

/** The fields OpenAI's input_tokens route takes (InputTokenCountParams), after the router resolved the history. */
const COUNT_FIELDS = ["model", "input", "instructions", "parallel_tool_calls", "personality", "reasoning", "text", "tool_choice", "tools", "truncation"];

/** The fields Anthropic's count_tokens takes (MessageCountTokensParams). */
const ANTHROPIC_COUNT_FIELDS = ["model", "messages", "system", "tools", "tool_choice", "thinking", "output_config"] as const;

type Tokenizer = "llama.cpp" | "vllm" | "none";

export class InputTokensService {
  /** Which tokenizer each chat endpoint turned out to have, so a backend without one is probed once. */
  private readonly tokenizers = new Map<string, Tokenizer>();

  constructor(private readonly rt: Runtime) {}

  async count(body: unknown, ctx: { owner: string | null; key: ApiKey | null; signal: AbortSignal }): Promise<{ result: InputTokenCountResponse; source: TokenCountSource; endpoint: string }> {
    const req = validateCreateRequest(body);
    const { rt } = this;
    const plan = await buildPlan(req, { cfg: rt.config, responses: rt.stores.responses, conversations: rt.stores.conversations, ids: rt.ids, now: Date.now }, ctx.owner, ctx.key);
    const counted = await this.countPlan(plan, ctx.signal);
    return { result: { object: "response.input_tokens", input_tokens: counted.tokens }, source: counted.source, endpoint: counted.endpoint };
  }

  /** The input tokens of a planned request, on an endpoint of its pool (also what `context_management` compares with its threshold). */
  async countPlan(plan: Plan, signal: AbortSignal): Promise<{ tokens: number; source: TokenCountSource; endpoint: string }> {
    const { rt } = this;
    plan = await readStoredFiles(rt, plan); // file_id contents from the router's Files, counted as the model would read them
    const lease = await rt.pool.acquire(plan.model, plan.targets, { queueTimeoutMs: plan.cfg.routing.queue_timeout, signal, prefer: plan.preferEndpoint });
    try {
      const client = rt.client(lease.endpoint.name);
      const kind = lease.endpoint.config.kind;
      const counted = kind === "openai" ? await this.upstream(plan, lease, client, signal) : kind === "anthropic" ? await this.anthropic(plan, lease, client, signal) : await this.chat(plan, lease, client, signal);
      return { ...counted, endpoint: lease.endpoint.name };
    } finally {
      lease.release();
    }
  }

  private async upstream(plan: Plan, lease: Lease, client: UpstreamClient, signal: AbortSignal): Promise<{ tokens: number; source: TokenCountSource }> {
    const full = nativeRequestBody(plan.req, { upstreamModel: lease.target.upstreamModel, history: plan.history, stream: false, wantEncryptedReasoning: false, resolved: plan.input });
    full.input = storedFilesInline(full.input, plan.storedFiles) as typeof full.input;
    const body: JsonObject = {};
    for (const k of COUNT_FIELDS) if (full[k] !== undefined) body[k] = full[k];
    const reply = await client.post("/responses/input_tokens", JSON.stringify(body), signal);
    const json = JSON.parse(await reply.body.text()) as { input_tokens?: unknown };
    if (typeof json.input_tokens !== "number") throw new UpstreamFailure(lease.endpoint.name, "protocol", "the input_tokens answer had no count");
    return { tokens: json.input_tokens, source: "upstream" };
  }

  /** Anthropic's own count: POST /v1/messages/count_tokens with the request as it would be sent. */
  private async anthropic(plan: Plan, lease: Lease, client: UpstreamClient, signal: AbortSignal): Promise<{ tokens: number; source: TokenCountSource }> {
    plan = await fetchFileUrls(plan, signal);
    const t = responsesToMessagesRequest(plan.req, [...plan.history, ...plan.input], { ...messagesOptions(plan, lease, false), promptCaching: false });
    const body: JsonObject = {};
    for (const k of ANTHROPIC_COUNT_FIELDS) if (t.body[k] !== undefined) body[k] = t.body[k];
    let reply;
    try {
      reply = await client.post("/messages/count_tokens", JSON.stringify(body), signal, betaHeader(plan, lease));
    } catch (err) {
      // An Anthropic-compatible server without count_tokens: the documented estimate instead.
      if (!(err instanceof UpstreamFailure) || !err.routeMissing) throw err;
      const messages = (t.body.system ? [{ role: "system", content: t.body.system }, ...t.body.messages] : t.body.messages) as ChatMessage[];
      return { tokens: estimateTokens(messages, t.body.tools), source: "estimate" };
    }
    const json = JSON.parse(await reply.body.text()) as { input_tokens?: unknown };
    if (typeof json.input_tokens !== "number") throw new UpstreamFailure(lease.endpoint.name, "protocol", "the count_tokens answer had no count");
    return { tokens: json.input_tokens, source: "upstream" };
  }

  private async chat(plan: Plan, lease: Lease, client: UpstreamClient, signal: AbortSignal): Promise<{ tokens: number; source: TokenCountSource }> {
    plan = await fetchFileUrls(plan, signal);
    const t = responsesToChatRequest(plan.req, [...plan.history, ...plan.input], {
      upstreamModel: lease.target.upstreamModel,
      stream: false,
      developerRole: lease.endpoint.config.developer_role,
      hostedTools: plan.modelCfg.hosted_tools === "reject" ? "reject" : "drop",
      historyItems: plan.history.length,
      compaction: compactionOptions(plan.cfg),
      files: { fetched: plan.files, stored: plan.storedFiles, inlineText: plan.modelCfg.inline_text_files },
    });
    const messages = t.body.messages as ChatMessage[];
    const tools = t.body.tools as unknown[] | undefined;
    const name = lease.endpoint.name;
    const known = this.tokenizers.get(name);
    if (known !== "none") {
      if (known !== "vllm") {
        const n = await llamaCppCount(client, messages, tools, signal);
        if (n !== null) return this.found(name, "llama.cpp", n);
      }
      if (known !== "llama.cpp") {
        const n = await vllmCount(client, lease.target.upstreamModel, messages, tools, signal);
        if (n !== null) return this.found(name, "vllm", n);
      }
      if (known === undefined) this.tokenizers.set(name, "none");
    }
    return { tokens: estimateTokens(messages, tools), source: "estimate" };
  }

  private found(endpoint: string, tokenizer: Tokenizer, tokens: number): { tokens: number; source: TokenCountSource } {
    this.tokenizers.set(endpoint, tokenizer);
    return { tokens, source: "tokenizer" };
  }
}

/** llama.cpp server: the chat template applied by the backend, then its tokenizer. Null when it has no such routes. */
async function llamaCppCount(client: UpstreamClient, messages: ChatMessage[], tools: unknown[] | undefined, signal: AbortSignal): Promise<number | null> {
  const templated = await tryJson(client, "/apply-template", { messages, ...(tools ? { tools } : {}) }, signal);
  if (typeof templated?.prompt !== "string") return null;
  const tokenized = await tryJson(client, "/tokenize", { content: templated.prompt, add_special: true }, signal);
  return Array.isArray(tokenized?.tokens) ? tokenized.tokens.length : null;
}

/** vLLM: `/tokenize` applies the chat template itself and answers `count`. */
async function vllmCount(client: UpstreamClient, model: string, messages: ChatMessage[], tools: unknown[] | undefined, signal: AbortSignal): Promise<number | null> {
  const out = await tryJson(client, "/tokenize", { model, messages, ...(tools ? { tools } : {}), add_generation_prompt: true }, signal);
  return typeof out?.count === "number" ? out.count : null;
}

/** A tokenizer probe: any failure (no such route, an error, not JSON) is "no", never the client's error. */
async function tryJson(client: UpstreamClient, path: string, body: unknown, signal: AbortSignal): Promise<JsonObject | null> {
  try {
    const reply = await client.postAtRoot(path, JSON.stringify(body), signal);
    return JSON.parse(await reply.body.text()) as JsonObject;
  } catch (err) {
    if (signal.aborted) throw err;
    return null;
  }
}

/** The documented estimate: text characters / ESTIMATE_CHARS_PER_TOKEN, plus MESSAGE_OVERHEAD per message (role and template markers). */
export function estimateTokens(messages: ChatMessage[], tools: unknown[] | undefined): number {
  let chars = tools ? JSON.stringify(tools).length : 0;
  for (const m of messages) {
    chars += typeof m.content === "string" ? m.content.length : m.content == null ? 0 : JSON.stringify(m.content).length;
    if (m.tool_calls) chars += JSON.stringify(m.tool_calls).length;
  }
  return Math.ceil(chars / ESTIMATE_CHARS_PER_TOKEN) + MESSAGE_OVERHEAD * messages.length;
}
