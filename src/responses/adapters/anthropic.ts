/** `kind: anthropic` endpoints: the request translated to POST /v1/messages, the answer translated back (translate/anthropic/). */
import type { Lease } from "../../routing/pool.js";
import type { EventSink } from "../../wire/sse-writer.js";
import { AnthropicStreamTranslator, DeltaShape, anthropicErrorBody, messageToResponse, modelBetaHeader, responsesToMessagesRequest, versionTraits } from "../../translate/anthropic/index.js";
import type { AnswerOptions, AnthropicRequestOptions, Message, RawMessageStreamEvent } from "../../translate/anthropic/index.js";
import { clientText, hasHiddenParts } from "../../translate/openai/rewrite.js";
import { namedTools } from "../../translate/index.js";
import { EventJson } from "../../wire/event-json.js";
import { ENCRYPTED_REASONING } from "../../wire/protocol.js";
import type { ResponseObject, StreamEvent } from "../../wire/types.js";
import { UpstreamFailure } from "../../upstream/errors.js";
import { scrubSecret } from "../../ops/secrets.js";
import type { SseFrame } from "../../upstream/sse.js";
import { CountedStream, END, planSkeleton, sendEvents, translatedItems, type AdaptedRequest, type ReadContext, type StreamTranslation } from "./adapter.js";
import type { Plan } from "../create/plan.js";
import { compactionOptions } from "../compaction/compaction-key.js";

export class AnthropicRequest implements AdaptedRequest {
  readonly path = "/messages";
  body: string;
  readonly headers: Record<string, string> | undefined;
  readonly droppedTools: readonly string[];
  /** The thinking blocks ride in encrypted_content; a client sees it when it asks, as on OpenAI. */
  readonly hidesEncryptedReasoning: boolean;
  private readonly answer: AnswerOptions;

  constructor(
    private readonly plan: Plan,
    lease: Lease,
    stream: boolean,
  ) {
    const items = translatedItems(plan);
    const t = responsesToMessagesRequest(plan.req, items, { ...messagesOptions(plan, lease, stream), contextWindow: plan.modelCfg.context_window });
    this.body = JSON.stringify(t.body);
    this.headers = betaHeader(plan, lease);
    this.droppedTools = t.droppedTools;
    this.answer = { toolNames: namedTools(t.toolNames), answerTool: t.answerTool, thinkingAsSummary: t.thinkingAsSummary };
    this.hidesEncryptedReasoning = !(plan.req.include ?? []).includes(ENCRYPTED_REASONING);
  }

  fromJson(json: unknown, rd: ReadContext): ResponseObject {
    if (!json || typeof json !== "object" || !Array.isArray((json as Message).content)) {
      throw new UpstreamFailure(rd.attempt.endpoint.name, "protocol", "the Messages answer had no content");
    }
    const response = messageToResponse(json as Message, this.skeleton(rd), rd.rt.ids, rd.clock, this.answer);
    if (this.plan.compacted) response.output.unshift(this.plan.compacted);
    return response;
  }

  stream(rd: ReadContext): StreamTranslation {
    const compaction = this.plan.compacted as { id: string; type: "compaction"; encrypted_content: string } | undefined;
    const tr = new AnthropicStreamTranslator(this.skeleton(rd), rd.rt.ids, rd.clock, this.answer, { compaction });
    return new AnthropicStream(tr, rd, this.hidesEncryptedReasoning);
  }

  private skeleton(rd: ReadContext): ResponseObject {
    return planSkeleton(this.plan, rd.initialStatus);
  }
}

/** What the translation needs of the model's and endpoint's config (also for count_tokens and the compaction summary). */
export function messagesOptions(plan: Plan, lease: Lease, stream: boolean): AnthropicRequestOptions {
  const m = plan.modelCfg;
  return {
    upstreamModel: lease.target.upstreamModel,
    stream,
    version: versionTraits(lease.endpoint.config.anthropic_version),
    // Configs built in code (tests) may lack the parsed defaults.
    defaultMaxTokens: m.max_output_tokens ?? 8192,
    thinkingBudget: m.thinking_budget ?? { minimal: 1024, low: 2048, medium: 8192, high: 16384, xhigh: 32768 },
    promptCaching: m.prompt_caching ?? true,
    structuredOutput: m.structured_output ?? "tool",
    hostedTools: m.hosted_tools === "reject" ? "reject" : "drop", // what the router runs (tool-loop/) never reaches the adapter
    historyItems: plan.history.length,
    compaction: compactionOptions(plan.cfg),
    files: { fetched: plan.files, stored: plan.storedFiles },
  };
}

/** The request's `anthropic-beta` header when the model adds features to its endpoint's. */
export function betaHeader(plan: Plan, lease: Lease): Record<string, string> | undefined {
  return modelBetaHeader(lease.endpoint.config.anthropic_beta, plan.modelCfg.anthropic_beta);
}

/** What a Messages stream frame carries. */
type UpstreamEvent = RawMessageStreamEvent | { type: "error"; error?: { type?: string; message?: string } } | { type: "ping" };

class AnthropicStream extends CountedStream<AnthropicStreamTranslator> {
  /** message_stop arrived: the stream ended as Anthropic ends one. */
  private stopped = false;
  /** Made once: push runs per upstream event. */
  private readonly write: (ev: StreamEvent) => string;
  /** Text and thinking deltas shaped like the last one read without parsing. */
  private readonly shape = new DeltaShape();
  constructor(tr: AnthropicStreamTranslator, rd: ReadContext, hide: boolean) {
    super(tr, rd, "translated");
    const json = new EventJson();
    // Encrypted reasoning the client did not ask for stays in the stored copy only.
    // A delta event carries text, never an item, and no event carries a reasoning item before the
    // stream has opened one: only the others are walked for hidden parts.
    this.write = hide ? (ev) => (!ev.type.endsWith(".delta") && tr.hasReasoning && hasHiddenParts(ev, true, false) ? clientText(ev, true) : json.text(ev)) : (ev) => json.text(ev);
  }

  start(sink: EventSink): void {
    sendEvents(sink, this.tr.start(), this.write);
  }

  push(frame: SseFrame, sink: EventSink): typeof END | null {
    // Some Anthropic-compatible servers end with OpenAI's marker instead of message_stop.
    if (frame.data === "[DONE]") {
      this.chunks.flush();
      this.stopped = true;
      return END;
    }
    let ev = this.shape.read(frame.data) as UpstreamEvent | undefined;
    if (ev === undefined) {
      ev = JSON.parse(frame.data) as UpstreamEvent;
      this.shape.learn(frame.data, ev);
      // The event's name is in its data; a server that puts it only on the `event:` line is read too (its frames are not learned).
      if (typeof ev.type !== "string" && frame.event) (ev as { type: string }).type = frame.event;
    }
    this.chunks.add(frame.more);
    switch (ev.type) {
      case "ping":
        return null;
      case "message_stop":
        this.chunks.flush();
        this.stopped = true;
        return END;
      case "error":
        throw this.streamError(ev.error);
      case "content_block_delta":
        this.rd.attempt.firstToken();
        break;
      default:
        break;
    }
    sendEvents(sink, this.tr.push(ev), this.write, !frame.more);
    return null;
  }

  /** An `error` event after the headers (overloaded mid-stream, ...): the stream fails with Anthropic's reason. */
  private streamError(e: { type?: string; message?: string } | undefined): UpstreamFailure {
    const ep = this.rd.attempt.endpoint;
    const status = e?.type === "overloaded_error" ? 529 : e?.type === "rate_limit_error" ? 429 : 500;
    const message = scrubSecret(e?.message ?? "upstream error", ep.config.api_key);
    const body = anthropicErrorBody({ message, type: e?.type ?? "api_error", param: null, code: null }, status);
    return new UpstreamFailure(ep.name, "status", message, status, body, undefined, { jsonBody: true });
  }

  override finish(): StreamEvent[] {
    this.chunks.flush();
    // A Messages stream always ends with message_stop: one that closes before it was cut off.
    if (!this.stopped) throw new UpstreamFailure(this.rd.attempt.endpoint.name, "protocol", "the Messages stream ended before message_stop");
    return this.tr.finish();
  }

  serialise(ev: StreamEvent): string {
    return this.write(ev);
  }
}
