import { NO_KEY } from "../keys/policy.js";
import { NO_TOKENS, type TokenCount } from "../keys/usage.js";
import { applyRouterFields, nativeRequestBody } from "../native/rewrite.js";
import { ENCRYPTED_REASONING } from "../protocol.js";
import { NativeStreamMachine } from "../native/stream.js";
import type { Endpoint, Lease } from "../routing/pool.js";
import { fallbackSteps } from "../models.js";
import type { Runtime } from "../runtime.js";
import type { EventSink } from "../sse-writer.js";
import { ChatStreamTranslator, chatCompletionToResponse, responsesToChatRequest, responseSkeleton } from "../translate/index.js";
import type { ToolNameMap } from "../translate/index.js";
import type { ResponseObject, StreamEvent } from "../types.js";
import { callWithFallbacks } from "../upstream/fallback.js";
import { callWithFailover } from "../upstream/failover.js";
import { UpstreamFailure, scrubSecret } from "../upstream/errors.js";
import type { UpstreamClient, UpstreamReply } from "../upstream/client.js";
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
  const started = performance.now();
  let toolNames: ToolNameMap | undefined;
  let droppedTools: string[] = [];
  // The plan as the serving model's config shapes it (hosted tools, encrypted reasoning); `model` stays the client's.
  let served = plan;
  const steps = fallbackSteps(plan.cfg, plan.model, plan.modelCfg, plan.targets);
  const { result: attempt, step } = await callWithFallbacks(
    steps,
    signal,
    (s) => {
      const p = (served = s.model === plan.model ? plan : { ...plan, modelCfg: s.modelCfg, targets: s.targets });
      // Conversation affinity applies to the model asked for; a fallback pool has its own endpoints.
      const prefer = s.model === plan.model ? plan.preferEndpoint : undefined;
      return callWithFailover(rt.failover(s.model, s.targets, plan.cfg.routing, signal, undefined, prefer), (client, lease) => sendTo(client, lease, p));
    },
    (from, to, err) => rt.fellBack(plan.model, from.model, to.model, err),
  );
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
  if (attempt.failedOver > 0) rt.metrics.failovers.inc({ model: plan.model });
  for (const tool of droppedTools) rt.metrics.droppedTools.inc({ model: plan.model, tool_type: tool });
  rt.metrics.queueWait.observe({ model: plan.model }, attempt.lease.waitedMs / 1000);

  const { lease, reply } = attempt;
  const skeleton = () =>
    responseSkeleton(plan.req, { id: plan.id, createdAt: plan.createdAt, model: plan.model, status: initialStatus, previousResponseId: plan.previousResponseId });
  return {
    endpoint: lease.endpoint,
    model: step.model,
    pump: async (sink, opts = {}) => {
      const endpoint = lease.endpoint.name;
      let outcome: "ok" | "error" = "error";
      const firstByte = () => rt.metrics.timeToFirstToken.observe({ model: plan.model, upstream: endpoint }, (performance.now() - started) / 1000);
      try {
        const native = lease.endpoint.config.kind === "openai";
        const ctx: PumpContext = { rt, plan: served, reply, sink, signal, lease, onFirstChunk: firstByte, opts };
        const result = native ? await pumpNative(ctx) : await pumpChat(ctx, skeleton(), toolNames);
        outcome = result.response.status === "failed" ? "error" : "ok";
        return { ...result, hideEncryptedReasoning: native && shouldHideEncryptedReasoning(served), endpoint, model: step.model, upstreamMs: performance.now() - started };
      } finally {
        lease.release();
        rt.metrics.upstreamDuration.observe({ upstream: endpoint, outcome }, (performance.now() - started) / 1000);
      }
    },
  };
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
  reply: UpstreamReply;
  sink: EventSink | null;
  signal: AbortSignal;
  lease: Lease;
  /** Called once, when the first upstream chunk (chat) or delta (native) arrives: time to first token. */
  onFirstChunk: () => void;
  opts: PumpOptions;
}

async function pumpChat(ctx: PumpContext, skeleton: ResponseObject, toolNames: ToolNameMap | undefined): Promise<Pumped> {
  const { rt, reply, sink, signal, lease, onFirstChunk, opts } = ctx;
  if (!sink) {
    const json = (await readJson(reply, lease)) as Parameters<typeof chatCompletionToResponse>[0];
    return { response: chatCompletionToResponse(json, skeleton, rt.ids, toolNames), terminal: null };
  }
  const tr = new ChatStreamTranslator(skeleton, rt.ids, toolNames);
  sendAll(sink, tr.start());
  let tail: StreamEvent[];
  let first = true;
  try {
    for await (const frame of readSseFrames(reply.body)) {
      if (first) {
        first = false;
        onFirstChunk();
      }
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
    if (!(err instanceof UpstreamFailure) || err.endpointFault) lease.endpoint.health.recordFailure(`stream broke: ${(err as Error).message}`);
    tail = tr.fail(midStreamError(err));
  }
  const terminal = tail.pop()!;
  sendAll(sink, tail);
  return { response: tr.response, terminal: { type: terminal.type, data: JSON.stringify(terminal) } };
}

async function pumpNative(ctx: PumpContext): Promise<Pumped> {
  const { rt, plan, reply, sink, signal, lease, onFirstChunk, opts } = ctx;
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
    const json = (await readJson(reply, lease)) as Record<string, unknown>;
    return { response: applyRouterFields(json, fields), terminal: null };
  }
  const secret = lease.endpoint.config.api_key;
  const m = new NativeStreamMachine(fields, { scrub: (text) => scrubSecret(text, secret) });
  let first = true;
  let tail: StreamEvent[];
  try {
    for await (const frame of readSseFrames(reply.body)) {
      if (frame.data === "[DONE]") break;
      const out = m.push(frame.event, frame.data);
      if (first && out.type.endsWith(".delta")) {
        first = false;
        onFirstChunk();
      }
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
    lease.endpoint.health.recordFailure(`stream broke: ${(err as Error).message}`);
    tail = m.fail(midStreamError(err));
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

async function readJson(reply: UpstreamReply, lease: Lease): Promise<unknown> {
  const text = await reply.body.text();
  try {
    return JSON.parse(text);
  } catch {
    lease.endpoint.health.recordFailure("invalid JSON body");
    throw new UpstreamFailure(lease.endpoint.name, "protocol", "the body was not JSON");
  }
}

function errorMessage(e: unknown): string {
  if (typeof e === "string") return e;
  if (e && typeof e === "object" && typeof (e as { message?: unknown }).message === "string") return (e as { message: string }).message;
  return "upstream error";
}

function midStreamError(err: unknown): { code: string; message: string } {
  if (err instanceof UpstreamFailure) {
    return { code: err.kind === "timeout" ? "timeout" : "server_error", message: `The upstream failed mid-stream: ${err.message}` };
  }
  const e = err as Error & { code?: string };
  if (e?.code === "UND_ERR_BODY_TIMEOUT" || e?.name === "BodyTimeoutError") return { code: "timeout", message: "The upstream stopped sending data (idle timeout)." };
  if (e instanceof SyntaxError) return { code: "server_error", message: "The upstream sent a malformed stream chunk." };
  return { code: "server_error", message: "The upstream connection was lost mid-stream." };
}
