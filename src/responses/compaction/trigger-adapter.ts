/**
 * A `compaction_trigger` as the last input item, on a `kind: chat` or `kind: anthropic` endpoint: instead of a
 * turn, the router asks the backend for a summary of everything before the trigger
 * (compact.ts) and answers with exactly one `compaction` output item, sealed by the router.
 * Streamed, the summary is read whole from the backend's chunks (or Messages events) and the item is emitted at
 * the end: `output_item.added`, `response.compaction.compacting`, `output_item.done`, then
 * `response.completed` with usage (a compaction item has no deltas; its content is opaque).
 * On `kind: openai` the trigger passes through untouched (adapter-native.ts).
 */
import { emitted } from "../../wire/emitted.js";
import type { Lease } from "../../routing/pool.js";
import type { EventSink } from "../../wire/sse-writer.js";
import { chatUsageToResponses, responseSkeleton } from "../../translate/index.js";
import { anthropicUsageToResponses } from "../../translate/anthropic/index.js";
import type { ChatUsage, EmittedResponse, Item, ResponseObject, StreamEvent, Usage } from "../../wire/types.js";
import { UpstreamFailure } from "../../upstream/errors.js";
import { scrubSecret } from "../../ops/secrets.js";
import type { SseFrame } from "../../upstream/sse.js";
import { END, sendEvents, type AdaptedRequest, type ReadContext, type StreamTranslation } from "../adapters/adapter.js";
import { keptUserItems, readSummary, sealedCompactionItem, summaryRequest, countCompaction } from "./compact.js";
import type { Plan } from "../create/plan.js";

/** Whether a plan's input ends with the v2 compaction trigger. */
export const endsWithCompactionTrigger = (plan: Plan): boolean => plan.input.at(-1)?.type === "compaction_trigger";

export class CompactTriggerRequest implements AdaptedRequest {
  readonly path: string;
  body: string;
  readonly headers: Record<string, string> | undefined;
  /** The summary is read from an Anthropic Messages stream rather than chat chunks. */
  readonly anthropic: boolean;
  readonly droppedTools: readonly string[] = [];
  readonly hidesEncryptedReasoning = false;
  /** What is summarised: the history and this turn's input before the trigger. */
  private readonly items: Item[];

  constructor(
    private readonly plan: Plan,
    lease: Lease,
    stream: boolean,
  ) {
    this.items = [...plan.history, ...plan.input.slice(0, -1)];
    const sent = summaryRequest(plan, this.items, lease, stream);
    this.path = sent.path;
    this.body = sent.body;
    this.headers = sent.headers;
    this.anthropic = lease.endpoint.config.kind === "anthropic";
  }

  fromJson(json: unknown, rd: ReadContext): ResponseObject {
    const { summary, usage } = readSummary(rd.attempt.endpoint.name, json);
    const response = this.skeleton(rd, "completed");
    response.output = [this.item(rd, summary)];
    response.usage = usage;
    this.count(rd, usage, summary);
    return response;
  }

  stream(rd: ReadContext): StreamTranslation {
    return new CompactTriggerStream(this, this.skeleton(rd, rd.initialStatus), rd);
  }

  item(rd: ReadContext, summary: string): Item {
    return sealedCompactionItem(this.plan, rd.rt.ids("cmp"), summary);
  }

  count(rd: ReadContext, usage: Usage, summary: string): void {
    countCompaction(rd.rt, { model: this.plan.model, kind: this.anthropic ? "anthropic" : "chat", trigger: "trigger", before: usage.input_tokens, after: { kept: keptUserItems(this.plan, this.items), summary } });
  }

  private skeleton(rd: ReadContext, status: ResponseObject["status"]): ResponseObject {
    const p = this.plan;
    return responseSkeleton(p.req, { id: p.id, createdAt: p.createdAt, model: p.model, status, previousResponseId: p.previousResponseId, completedAt: rd.clock() });
  }
}

class CompactTriggerStream implements StreamTranslation {
  private seq = 0;
  private summary = "";
  private usage: Usage | null = null;
  private ended = false;
  private anthropicUsage: Record<string, unknown> = {};

  constructor(
    private readonly req: CompactTriggerRequest,
    private readonly live: ResponseObject,
    private readonly rd: ReadContext,
  ) {}

  get response(): ResponseObject {
    return this.live;
  }

  start(sink: EventSink): void {
    const base = this.live as unknown as EmittedResponse;
    const events = [
      emitted({ type: "response.created", response: { ...base, status: base.status === "queued" ? "queued" : "in_progress", output: [], usage: null }, sequence_number: this.seq++ }),
      emitted({ type: "response.in_progress", response: { ...base, status: "in_progress", output: [], usage: null }, sequence_number: this.seq++ }),
    ];
    this.live.status = "in_progress";
    sendEvents(sink, events, serialise);
  }

  push(frame: SseFrame): typeof END | null {
    const { attempt } = this.rd;
    attempt.firstToken();
    if (frame.data === "[DONE]") return END;
    if (this.req.anthropic) return this.pushAnthropic(frame);
    const chunk = JSON.parse(frame.data) as { error?: unknown; usage?: ChatUsage | null; choices?: { index?: number; delta?: { content?: unknown } }[] };
    if (chunk.error) {
      const ep = attempt.endpoint;
      const message = typeof chunk.error === "object" && typeof (chunk.error as { message?: unknown }).message === "string" ? (chunk.error as { message: string }).message : "upstream error";
      throw new UpstreamFailure(ep.name, "status", scrubSecret(message, ep.config.api_key), 500, undefined, undefined, { jsonBody: true });
    }
    if (chunk.usage) this.usage = chatUsageToResponses(chunk.usage);
    for (const choice of chunk.choices ?? []) {
      const content = choice.delta?.content;
      if ((choice.index ?? 0) === 0 && typeof content === "string") this.summary += content;
    }
    this.rd.rt.metrics.streamChunks.inc({ kind: "translated" });
    return null;
  }

  /** An Anthropic Messages stream: text deltas are the summary; usage from message_start and message_delta. */
  private pushAnthropic(frame: SseFrame): typeof END | null {
    const ev = JSON.parse(frame.data) as { type: string; error?: { message?: string }; message?: { usage?: object }; usage?: object; delta?: { type?: string; text?: unknown } };
    this.rd.rt.metrics.streamChunks.inc({ kind: "translated" });
    if (ev.type === "message_stop") return END;
    if (ev.type === "error") {
      const ep = this.rd.attempt.endpoint;
      throw new UpstreamFailure(ep.name, "status", scrubSecret(ev.error?.message ?? "upstream error", ep.config.api_key), 500, undefined, undefined, { jsonBody: true });
    }
    if (ev.type === "content_block_delta" && ev.delta?.type === "text_delta" && typeof ev.delta.text === "string") this.summary += ev.delta.text;
    else if (ev.type === "message_start" || ev.type === "message_delta") {
      const u = ev.type === "message_start" ? ev.message?.usage : ev.usage;
      for (const [k, v] of Object.entries(u ?? {})) if (v != null) this.anthropicUsage[k] = v;
      this.usage = anthropicUsageToResponses(this.anthropicUsage);
    }
    return null;
  }

  finish(): StreamEvent[] {
    if (this.ended) return [];
    this.ended = true;
    const item = this.req.item(this.rd, this.summary);
    const usage = this.usage ?? chatUsageToResponses(null);
    this.req.count(this.rd, usage, this.summary);
    const compaction = item as { id: string; type: "compaction"; encrypted_content: string };
    const out: StreamEvent[] = [
      emitted({ type: "response.output_item.added", output_index: 0, item: compaction, sequence_number: this.seq++ }),
      emitted({ type: "response.compaction.compacting", item_id: compaction.id, output_index: 0, sequence_number: this.seq++ }),
      emitted({ type: "response.output_item.done", output_index: 0, item: compaction, sequence_number: this.seq++ }),
    ];
    Object.assign(this.live, { status: "completed", completed_at: this.rd.clock(), output: [item], usage });
    out.push(emitted({ type: "response.completed", response: this.live as unknown as EmittedResponse, sequence_number: this.seq++ }));
    return out;
  }

  fail(error: { code: string; message: string }): StreamEvent[] {
    if (this.ended) return [];
    this.ended = true;
    Object.assign(this.live, { status: "failed", error, usage: this.usage });
    return [emitted({ type: "response.failed", response: this.live as unknown as EmittedResponse, sequence_number: this.seq++ })];
  }

  cancel(): StreamEvent[] {
    this.ended = true;
    this.live.status = "cancelled";
    return [];
  }

  serialise(ev: StreamEvent): string {
    return serialise(ev);
  }
}

const serialise = (ev: StreamEvent): string => JSON.stringify(ev);
