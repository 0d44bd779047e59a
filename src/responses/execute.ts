import { NO_KEY } from "../keys/policy.js";
import { NO_TOKENS, type TokenCount } from "../keys/usage.js";
import { applyRouterFields, nativeRequestBody } from "../native/rewrite.js";
import { ENCRYPTED_REASONING } from "../protocol.js";
import { NativeStreamMachine } from "../native/stream.js";
import type { Endpoint, Lease } from "../routing/pool.js";
import { fallbackSteps, type ModelStep } from "../models.js";
import type { Runtime } from "../runtime.js";
import type { EventSink } from "../sse-writer.js";
import { ChatStreamTranslator, chatCompletionToResponse, responsesToChatRequest, responseSkeleton } from "../translate/index.js";
import type { ToolNameMap } from "../translate/index.js";
import type { ResponseObject, StreamEvent } from "../types.js";
import { UpstreamAttempt } from "../upstream/attempt.js";
import { UpstreamFailure, scrubSecret } from "../upstream/errors.js";
import type { UpstreamClient, UpstreamReply } from "../upstream/client.js";
import { midStreamError } from "../upstream/mid-stream.js";
import { readSseFrames } from "../upstream/sse.js";
import type { Plan } from "./plan.js";

export interface RunOutcome {
  /** The full response, as stored. */
  response: ResponseObject;
  /** Hide encrypted reasoning the router asked for on the client's behalf. */
  hideEncryptedReasoning: boolean;
  /** The terminal event, held back so the caller can store the response before the client sees it. */
  terminal: { type: string; data: string } | null;
  endpoint: string;
  /** The model that served it: the one asked for, or a fallback. */
  model: string;
  upstreamMs: number;
}

export interface PumpOptions {
  /**
   * When the signal aborts mid-stream, resolve with what was produced so far (open items
   * closed as incomplete, `response.status: "cancelled"`, `terminal: null`) instead of
   * rejecting. Background jobs use it to keep partial output on cancel and shutdown.
   */
  keepPartialOnAbort?: boolean;
}

/** An upstream that answered 2xx; `pump` reads its body to the end and frees the slot. */
export interface Connection {
  endpoint: Endpoint;
  /** The model that serves it: the one asked for, or a fallback. */
  model: string;
  pump(sink: EventSink | null, opts?: PumpOptions): Promise<RunOutcome>;
}

const REASONING_MODEL = /^(o\d|gpt-5|codex|computer-use)/i;

/**
 * Picks an endpoint (with failover) and sends the request in the form its kind
 * speaks. When the whole pool fails before the first byte, the model's fallbacks
 * are tried in order (any kind: the history is the router's, replayed to either).
 * Resolves once an upstream answered 2xx headers: errors before that reach the
 * caller as exceptions (an HTTP error for the client), errors after it become a
 * `response.failed` inside the stream. The client's model name stays on the response.
 */
export async function connect(rt: Runtime, plan: Plan, signal: AbortSignal, stream: boolean, initialStatus: "in_progress" | "queued" = "in_progress"): Promise<Connection> {
  let toolNames: ToolNameMap | undefined;
  let droppedTools: string[] = [];
  const attempt = await UpstreamAttempt.open(rt, {
    model: plan.model,
    steps: fallbackSteps(plan.cfg, plan.model, plan.modelCfg, plan.targets),
    routing: plan.cfg.routing,
    signal,
    prefer: plan.preferEndpoint,
    send: (client, lease, step) => sendTo(client, lease, servedPlan(plan, step)),
  });
  function sendTo(client: UpstreamClient, lease: Lease, plan: Plan): Promise<UpstreamReply> {
    if (lease.endpoint.config.kind === "chat") {
      const t = responsesToChatRequest(plan.req, [...plan.history, ...plan.input], {
        upstreamModel: lease.target.upstreamModel,
        stream,
        developerRole: lease.endpoint.config.developer_role,
        hostedTools: plan.modelCfg.hosted_tools,
        historyItems: plan.history.length,
      });
      toolNames = t.toolNames;
      droppedTools = t.droppedTools;
      return client.post("/chat/completions", JSON.stringify(t.body), signal);
    }
    const body = nativeRequestBody(plan.req, {
      upstreamModel: lease.target.upstreamModel,
      history: plan.history,
      stream,
      wantEncryptedReasoning: wantsEncryptedReasoning(plan),
    });
    return client.post("/responses", JSON.stringify(body), signal);
  }
  for (const tool of droppedTools) rt.metrics.droppedTools.inc({ model: plan.model, tool_type: tool });

  // The plan as the serving model's config shapes it (hosted tools, encrypted reasoning); `model` stays the client's.
  const served = servedPlan(plan, attempt.step);
  const model = attempt.step.model;
  const skeleton = () =>
    responseSkeleton(plan.req, { id: plan.id, createdAt: plan.createdAt, model: plan.model, status: initialStatus, previousResponseId: plan.previousResponseId });
  return {
    endpoint: attempt.endpoint,
    model,
    pump: async (sink, opts = {}) => {
      let ok = false;
      try {
        const native = attempt.endpoint.config.kind === "openai";
        const ctx: PumpContext = { rt, plan: served, attempt, sink, signal, opts };
        const result = native ? await pumpNative(ctx) : await pumpChat(ctx, skeleton(), toolNames);
        ok = result.response.status !== "failed";
        return { ...result, hideEncryptedReasoning: native && shouldHideEncryptedReasoning(served), endpoint: attempt.endpoint.name, model, upstreamMs: performance.now() - attempt.started };
      } finally {
        attempt.end(ok);
      }
    },
  };
}

function servedPlan(plan: Plan, step: ModelStep): Plan {
  return step.model === plan.model ? plan : { ...plan, modelCfg: step.modelCfg, targets: step.targets };
}

/** Counts the tokens an upstream reported for a finished run, under the model that served it and the key's name ("" without keys). */
export function recordTokenUsage(rt: Runtime, out: Pick<RunOutcome, "response" | "endpoint" | "model">, key: string | null): TokenCount {
  const u = out.response.usage;
  if (!u) return NO_TOKENS;
  const model = out.model;
  const upstream = out.endpoint;
  const k = key ?? NO_KEY;
  const m = rt.metrics.tokens;
  m.inc({ model, upstream, type: "input", key: k }, u.input_tokens ?? 0);
  m.inc({ model, upstream, type: "output", key: k }, u.output_tokens ?? 0);
  m.inc({ model, upstream, type: "cached", key: k }, u.input_tokens_details?.cached_tokens ?? 0);
  m.inc({ model, upstream, type: "reasoning", key: k }, u.output_tokens_details?.reasoning_tokens ?? 0);
  return { input: u.input_tokens ?? 0, output: u.output_tokens ?? 0 };
}

export function shouldHideEncryptedReasoning(plan: Plan): boolean {
  return wantsEncryptedReasoning(plan) && !(plan.req.include ?? []).includes(ENCRYPTED_REASONING);
}

function wantsEncryptedReasoning(plan: Plan): boolean {
  if (plan.modelCfg.encrypted_reasoning !== undefined) return plan.modelCfg.encrypted_reasoning;
  return (plan.req.reasoning != null && typeof plan.req.reasoning === "object") || REASONING_MODEL.test(plan.req.model);
}

type Pumped = Pick<RunOutcome, "response" | "terminal">;

/** What both pumps read: the request they serve, the upstream reply, and where events go. */
interface PumpContext {
  rt: Runtime;
  plan: Plan;
  /** The upstream call that answered: its reply, its endpoint's health verdicts, time to first token. */
  attempt: UpstreamAttempt<ModelStep>;
  sink: EventSink | null;
  signal: AbortSignal;
  opts: PumpOptions;
}

async function pumpChat(ctx: PumpContext, skeleton: ResponseObject, toolNames: ToolNameMap | undefined): Promise<Pumped> {
  const { rt, attempt, sink, signal, opts } = ctx;
  const lease = attempt.lease;
  if (!sink) {
    const { json } = (await attempt.readJson()) as { json: Parameters<typeof chatCompletionToResponse>[0] };
    return { response: chatCompletionToResponse(json, skeleton, rt.ids, toolNames), terminal: null };
  }
  const tr = new ChatStreamTranslator(skeleton, rt.ids, toolNames);
  sendAll(sink, tr.start());
  let tail: StreamEvent[];
  try {
    for await (const frame of readSseFrames(attempt.reply.body)) {
      attempt.firstToken();
      if (frame.data === "[DONE]") break;
      const chunk = JSON.parse(frame.data) as Record<string, unknown>;
      if (chunk.error) throw new UpstreamFailure(lease.endpoint.name, "status", scrubSecret(errorMessage(chunk.error), lease.endpoint.config.api_key), 500, undefined, undefined, { jsonBody: true });
      sendAll(sink, tr.push(chunk as Parameters<ChatStreamTranslator["push"]>[0]), !frame.more);
      rt.metrics.streamChunks.inc({ kind: "translated" });
    }
    tail = tr.finish();
  } catch (err) {
    if (signal.aborted) {
      if (!opts.keepPartialOnAbort) throw err;
      sendAll(sink, tr.cancel());
      return { response: tr.response, terminal: null };
    }
    // An in-band error chunk is the server's own answer (maybe about this request): not an endpoint fault.
    attempt.streamBroke(err);
    tail = tr.fail(midStreamError(err, "responses"));
  }
  const terminal = tail.pop()!;
  sendAll(sink, tail);
  return { response: tr.response, terminal: { type: terminal.type, data: JSON.stringify(terminal) } };
}

async function pumpNative(ctx: PumpContext): Promise<Pumped> {
  const { rt, plan, attempt, sink, signal, opts } = ctx;
  const lease = attempt.lease;
  const fields = {
    id: plan.id,
    previousResponseId: plan.previousResponseId,
    conversation: plan.conversationId ? { id: plan.conversationId } : undefined,
    store: plan.store,
    background: plan.background,
    model: lease.target.upstreamModel === plan.model ? undefined : plan.model,
    hideEncryptedReasoning: shouldHideEncryptedReasoning(plan),
    defaults: responseSkeleton(plan.req, { id: plan.id, createdAt: plan.createdAt, model: plan.model, status: "in_progress", previousResponseId: plan.previousResponseId }),
  };
  if (!sink) {
    const { json } = (await attempt.readJson()) as { json: Record<string, unknown> };
    return { response: applyRouterFields(json, fields), terminal: null };
  }
  const secret = lease.endpoint.config.api_key;
  const m = new NativeStreamMachine(fields, { scrub: (text) => scrubSecret(text, secret) });
  let tail: StreamEvent[];
  try {
    for await (const frame of readSseFrames(attempt.reply.body)) {
      if (frame.data === "[DONE]") break;
      const out = m.push(frame.event, frame.data);
      if (out.type.endsWith(".delta")) attempt.firstToken();
      rt.metrics.streamChunks.inc({ kind: "native" });
      if (out.terminal) {
        sink.flush?.(); // what came before the terminal event must not wait for the store
        return { response: m.response, terminal: { type: out.type, data: out.data } };
      }
      sink.send(out.type, out.data);
      if (!frame.more) sink.flush?.();
    }
    tail = m.finish();
  } catch (err) {
    if (signal.aborted) {
      if (!opts.keepPartialOnAbort) throw err;
      for (const ev of m.cancel()) sink.send(ev.type, m.serialise(ev));
      sink.flush?.();
      return { response: m.response, terminal: null };
    }
    attempt.streamBroke(err);
    tail = m.fail(midStreamError(err, "responses"));
  }
  const terminal = tail.pop()!;
  for (const ev of tail) sink.send(ev.type, m.serialise(ev));
  sink.flush?.();
  return { response: m.response, terminal: { type: terminal.type, data: m.serialise(terminal) } };
}

/** Sends events; flushes unless the caller knows more frames from the same upstream read follow. */
function sendAll(sink: EventSink, events: StreamEvent[], flush = true): void {
  for (const ev of events) sink.send(ev.type, JSON.stringify(ev));
  if (flush) sink.flush?.();
}

function errorMessage(e: unknown): string {
  if (typeof e === "string") return e;
  if (e && typeof e === "object" && typeof (e as { message?: unknown }).message === "string") return (e as { message: string }).message;
  return "upstream error";
}
