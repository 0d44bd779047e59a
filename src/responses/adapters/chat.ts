/** `kind: chat` endpoints: the request translated to /v1/chat/completions, the answer translated back (translate/). */
import type { Lease } from "../../routing/pool.js";
import type { EventSink } from "../../wire/sse-writer.js";
import { EventJson } from "../../wire/event-json.js";
import { ChatStreamTranslator, FrameShape, chatCompletionToResponse, namedTools, responsesToChatRequest, textOnlyContent, wantsReasoningSummary } from "../../translate/index.js";
import type { StreamTranslatorOptions, ToolNameMap } from "../../translate/index.js";
import type { ResponseObject, StreamEvent } from "../../wire/types.js";
import { UpstreamFailure } from "../../upstream/errors.js";
import { scrubSecret } from "../../ops/secrets.js";
import type { SseFrame } from "../../upstream/sse.js";
import { CountedStream, END, planSkeleton, sendEvents, translatedItems, type AdaptedRequest, type ReadContext, type StreamTranslation } from "./adapter.js";
import type { Plan } from "../create/plan.js";
import { compactionOptions } from "../compaction/compaction-key.js";

type ChatChunk = Parameters<ChatStreamTranslator["push"]>[0];

export class ChatRequest implements AdaptedRequest {
  readonly path = "/chat/completions";
  body: string;
  readonly droppedTools: readonly string[];
  readonly hidesEncryptedReasoning = false;
  /** Tool names shortened for the backend, mapped back in its answer. */
  private readonly toolNames: ToolNameMap | undefined;
  /** The request asked for reasoning summaries: the backend's reasoning is emitted as one. */
  private readonly reasoningSummary: boolean;

  constructor(
    private readonly plan: Plan,
    lease: Lease,
    stream: boolean,
  ) {
    const items = translatedItems(plan);
    const t = responsesToChatRequest(plan.req, items, {
      upstreamModel: lease.target.upstreamModel,
      stream,
      developerRole: lease.endpoint.config.developer_role,
      hostedTools: plan.modelCfg.hosted_tools === "reject" ? "reject" : "drop",
      historyItems: plan.history.length,
      compaction: compactionOptions(plan.cfg),
      files: { fetched: plan.files, stored: plan.storedFiles, inlineText: plan.modelCfg.inline_text_files },
      contextWindow: plan.modelCfg.context_window,
    });
    this.reasoningSummary = wantsReasoningSummary(plan.req.reasoning);
    this.body = JSON.stringify(t.body);
    this.toolNames = namedTools(t.toolNames);
    this.droppedTools = t.droppedTools;
  }

  fromJson(json: unknown, rd: ReadContext): ResponseObject {
    const response = chatCompletionToResponse(json as Parameters<typeof chatCompletionToResponse>[0], this.skeleton(rd), rd.rt.ids, rd.clock, this.toolNames, this.reasoningSummary);
    if (this.plan.compacted) response.output.unshift(this.plan.compacted);
    return response;
  }

  stream(rd: ReadContext): StreamTranslation {
    const compaction = this.plan.compacted as StreamTranslatorOptions["compaction"];
    return new ChatStream(new ChatStreamTranslator(this.skeleton(rd), rd.rt.ids, rd.clock, this.toolNames, { compaction, reasoningSummary: this.reasoningSummary }), rd);
  }

  private skeleton(rd: ReadContext): ResponseObject {
    return planSkeleton(this.plan, rd.initialStatus);
  }
}

class ChatStream extends CountedStream<ChatStreamTranslator> {
  private readonly json = new EventJson();
  /** Made once: push runs per upstream chunk. */
  private readonly write = (ev: StreamEvent): string => this.json.text(ev);
  /** Text chunks shaped like the last one read without parsing. */
  private readonly shape = new FrameShape("content");

  constructor(tr: ChatStreamTranslator, rd: ReadContext) {
    super(tr, rd, "translated");
  }

  start(sink: EventSink): void {
    sendEvents(sink, this.tr.start(), this.write);
  }

  push(frame: SseFrame, sink: EventSink): typeof END | null {
    this.rd.attempt.firstToken();
    if (frame.data === "[DONE]") {
      this.chunks.flush();
      return END;
    }
    const text = this.shape.read(frame.data);
    sendEvents(sink, text !== undefined ? this.tr.pushText(text) : this.parsed(frame.data), this.write, !frame.more);
    this.chunks.add(frame.more);
    return null;
  }

  /** A chunk not read by its shape: parsed (learned when it qualifies) and translated. */
  private parsed(data: string): StreamEvent[] {
    const chunk = JSON.parse(data) as Record<string, unknown>;
    if (chunk.error) {
      const ep = this.rd.attempt.endpoint;
      throw new UpstreamFailure(ep.name, "status", scrubSecret(errorMessage(chunk.error), ep.config.api_key), 500, undefined, undefined, { jsonBody: true });
    }
    const learned = textOnlyContent(chunk as ChatChunk);
    if (learned !== undefined) this.shape.learn(data, learned);
    return this.tr.push(chunk as ChatChunk);
  }

  serialise(ev: StreamEvent): string {
    return this.json.text(ev);
  }
}

function errorMessage(e: unknown): string {
  if (typeof e === "string") return e;
  if (e && typeof e === "object" && typeof (e as { message?: unknown }).message === "string") return (e as { message: string }).message;
  return "upstream error";
}
