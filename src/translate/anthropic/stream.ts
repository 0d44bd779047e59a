/**
 * Messages API stream events -> Responses stream events: ONE explicit state machine, with the
 * chat machine's discipline (translate/chat/stream.ts): every event built once, in emission
 * order, `type` first and `sequence_number` last; items live in `output` and grow in place
 * (the live snapshot); `*.added` events get their own small objects.
 *
 * Anthropic streams one content block at a time (content_block_start, deltas, stop), so the
 * state is the block that is open and the assistant message text blocks join:
 * - text -> an output_text part of the open message (a later text block adds a part);
 * - thinking -> a reasoning item (reasoning_text, or a summary part when asked), closed at its
 *   block's stop with the signature (signature_delta) in encrypted_content;
 * - redacted_thinking -> a reasoning item added and done at once;
 * - tool_use -> a function_call whose arguments are the input_json_delta fragments; a freeform
 *   custom tool's -> a custom_tool_call whose input streams as it decodes from them; the answer
 *   tool of a structured output -> output_text deltas of the message instead;
 * - message_delta carries stop_reason and the final usage; a refusal adds a refusal part at the end.
 * Any block other than text closes the open message, so output indexes follow emission order.
 */
import type { ResponseCustomToolCallItem, ResponseError, ResponseFunctionToolCall, ResponseOutputItem, ResponseOutputMessage, ResponseOutputRefusal, ResponseOutputText, ResponseReasoningItem } from "openai/resources/responses/responses";
import { emitted } from "../../wire/emitted.js";
import type { IdGenerator } from "../../wire/ids.js";
import type { Clock } from "../../wire/clock.js";
import type { EmittedResponse, ResponseObject, StreamEvent } from "../../wire/types.js";
import type { StreamTranslatorOptions } from "../chat/stream-state.js";
import { anthropicUsageToResponses, isCustomTool, reasoningItem, refusalText, terminalFromStopReason, type AnswerOptions } from "./response.js";
import { customCallItem, functionCallItem } from "../chat/response.js";
import { identityFor } from "../chat/tool-names.js";
import { CustomInputStream } from "../custom-tools.js";
import { completedAt } from "../skeleton.js";
import { openingEvents } from "../stream-opening.js";
import type { Message, RawMessageStreamEvent } from "./types.js";

type Status = "completed" | "incomplete";
type TextPart = ResponseOutputText & { logprobs: ResponseOutputText.Logprob[] };

interface MessageState {
  index: number;
  item: ResponseOutputMessage & { content: (TextPart | ResponseOutputRefusal)[] };
  part: TextPart | null;
}

/** The content block open now (Anthropic's `index`). */
type Block =
  | { kind: "text"; index: number }
  | { kind: "answer"; index: number; empty: boolean }
  | { kind: "thinking"; index: number; out: number; item: ResponseReasoningItem; text: string; signature: string; summary: boolean }
  | { kind: "call"; index: number; out: number; item: ResponseFunctionToolCall & { id: string } }
  | { kind: "custom"; index: number; out: number; item: ResponseCustomToolCallItem; input: CustomInputStream }
  | { kind: "ignored"; index: number };

export class AnthropicStreamTranslator {
  private seq: number;
  private started = false;
  private ended = false;
  private readonly output: ResponseOutputItem[] = [];
  private readonly compaction: StreamTranslatorOptions["compaction"] | null;
  /** The skeleton with this stream's output; every snapshot is made from it (as in chat/stream.ts). */
  private live: EmittedResponse;
  private message: MessageState | null = null;
  private block: Block | null = null;
  private stopReason: string | null = null;
  private stopDetails: Message["stop_details"] = null;
  private usage: Partial<Message["usage"]> | null = null;

  constructor(
    skeleton: ResponseObject,
    private readonly ids: IdGenerator,
    /** Read once, when the response completes (its `completed_at`). */
    private readonly clock: Clock,
    private readonly opts: AnswerOptions = {},
    streamOpts: StreamTranslatorOptions = {},
  ) {
    this.seq = streamOpts.startSequence ?? 0;
    this.compaction = streamOpts.compaction ?? null;
    this.live = { ...(skeleton as unknown as EmittedResponse), output: this.output, usage: null };
  }

  get response(): ResponseObject {
    return this.live as unknown as ResponseObject;
  }

  /** Whether the output has a reasoning item (a thinking block): only then can an event carry encrypted reasoning. */
  get hasReasoning(): boolean {
    for (const item of this.output) if (item.type === "reasoning") return true;
    return false;
  }

  start(): StreamEvent[] {
    const out: StreamEvent[] = [];
    if (!this.started) this.startInto(out);
    return out;
  }

  /** One Messages stream event (its `type` names it; `ping` and unknown types yield nothing). */
  push(ev: RawMessageStreamEvent): StreamEvent[] {
    if (this.ended) return [];
    const out: StreamEvent[] = [];
    if (!this.started) this.startInto(out);
    switch (ev.type) {
      case "message_start":
        this.usage = { ...ev.message.usage };
        break;
      case "content_block_start":
        this.openBlock(ev.index, ev.content_block as unknown as Loose, out);
        break;
      case "content_block_delta":
        this.delta(ev.index, ev.delta as unknown as Loose, out);
        break;
      case "content_block_stop":
        if (this.block?.index === ev.index) this.closeBlock(out, "completed");
        break;
      case "message_delta":
        if (ev.delta.stop_reason) this.stopReason = ev.delta.stop_reason;
        if (ev.delta.stop_details) this.stopDetails = ev.delta.stop_details;
        this.mergeUsage(ev.usage as unknown as Loose);
        break;
      default:
        break;
    }
    return out;
  }

  /** The stream ended (message_stop): open items close, then response.completed or response.incomplete. */
  finish(): StreamEvent[] {
    const terminal = terminalFromStopReason(this.stopReason);
    return this.terminate([], terminal.status, null, terminal.incomplete_details);
  }

  fail(error: { code: string; message: string }): StreamEvent[] {
    return this.terminate([], "failed", error);
  }

  /** Cancelled: open items close as incomplete, the snapshot becomes `cancelled`, no terminal event. */
  cancel(): StreamEvent[] {
    return this.terminate([], "cancelled", null);
  }

  // ---- lifecycle ----------------------------------------------------------------

  private startInto(out: StreamEvent[]): void {
    this.started = true;
    openingEvents(this.live, this.compaction, this.output, () => this.seq++, out);
    this.live.status = "in_progress";
  }

  private terminate(out: StreamEvent[], status: "completed" | "incomplete" | "failed" | "cancelled", error: { code: string; message: string } | null, incomplete: TerminalIncomplete = null): StreamEvent[] {
    if (this.ended) return out;
    if (!this.started) this.startInto(out);
    this.ended = true;
    const itemStatus: Status = status === "completed" ? "completed" : "incomplete";
    this.closeBlock(out, itemStatus);
    if (status !== "failed" && status !== "cancelled" && this.stopReason === "refusal") this.refusal(out);
    this.closeMessage(out, itemStatus);
    const usage = this.usage || status === "completed" || status === "incomplete" ? anthropicUsageToResponses(this.usage) : null;
    const final: EmittedResponse = { ...this.live, status, completed_at: completedAt(status, this.clock), error: error as ResponseError | null, incomplete_details: incomplete, output: this.output, usage };
    this.live = final;
    if (status !== "cancelled") out.push(emitted({ type: `response.${status}`, response: final, sequence_number: this.seq++ }));
    return out;
  }

  private mergeUsage(u: Loose | null | undefined): void {
    if (!u) return;
    const usage = (this.usage ??= {}) as Record<string, unknown>;
    // message_delta's counts are cumulative; a null leaves message_start's value.
    for (const [k, v] of Object.entries(u)) if (v !== null && v !== undefined) usage[k] = v;
  }

  // ---- blocks -------------------------------------------------------------------

  private openBlock(index: number, cb: Loose, out: StreamEvent[]): void {
    this.closeBlock(out, "completed");
    if (cb.type === "text") {
      this.block = { kind: "text", index };
      if (typeof cb.text === "string" && cb.text) this.text(cb.text, out);
    } else if (cb.type === "thinking") {
      this.closeMessage(out, "completed");
      const summary = this.opts.thinkingAsSummary === true;
      const id = this.ids("rs");
      const item: ResponseReasoningItem = { id, type: "reasoning", summary: [] };
      const at = this.output.length;
      this.output.push(item);
      this.block = { kind: "thinking", index, out: at, item, text: "", signature: typeof cb.signature === "string" ? cb.signature : "", summary };
      out.push(emitted({ type: "response.output_item.added", output_index: at, item: { id, type: "reasoning", summary: [] }, sequence_number: this.seq++ }));
      if (summary) out.push(emitted({ type: "response.reasoning_summary_part.added", item_id: id, output_index: at, summary_index: 0, part: { type: "summary_text", text: "" }, sequence_number: this.seq++ }));
      else out.push(emitted({ type: "response.content_part.added", item_id: id, output_index: at, content_index: 0, part: { type: "reasoning_text", text: "" }, sequence_number: this.seq++ }));
      if (typeof cb.thinking === "string" && cb.thinking) this.thinking(cb.thinking, out);
    } else if (cb.type === "redacted_thinking" && typeof cb.data === "string") {
      this.closeMessage(out, "completed");
      const item = reasoningItem(this.ids("rs"), { type: "redacted_thinking", data: cb.data }, false) as unknown as ResponseReasoningItem;
      const at = this.output.length;
      this.output.push(item);
      out.push(emitted({ type: "response.output_item.added", output_index: at, item: { id: item.id, type: "reasoning", summary: [] }, sequence_number: this.seq++ }));
      out.push(emitted({ type: "response.output_item.done", output_index: at, item, sequence_number: this.seq++ }));
      this.block = { kind: "ignored", index };
    } else if (cb.type === "tool_use" && typeof cb.name === "string") {
      if (this.opts.answerTool && cb.name === this.opts.answerTool) {
        this.block = { kind: "answer", index, empty: true };
        return;
      }
      this.closeMessage(out, "completed");
      const callId = typeof cb.id === "string" && cb.id ? cb.id : this.ids("call");
      const at = this.output.length;
      if (isCustomTool(this.opts.toolNames, cb.name)) {
        const item = customCallItem(this.ids("ctc"), callId, identityFor(this.opts.toolNames, cb.name), "", "in_progress") as unknown as ResponseCustomToolCallItem;
        this.output.push(item);
        this.block = { kind: "custom", index, out: at, item, input: new CustomInputStream() };
        out.push(emitted({ type: "response.output_item.added", output_index: at, item: { ...item }, sequence_number: this.seq++ }));
        return;
      }
      const item = functionCallItem(this.ids("fc"), callId, cb.name, "", "in_progress", this.opts.toolNames) as unknown as ResponseFunctionToolCall & { id: string };
      this.output.push(item);
      this.block = { kind: "call", index, out: at, item };
      out.push(emitted({ type: "response.output_item.added", output_index: at, item: { ...item }, sequence_number: this.seq++ }));
    } else {
      this.block = { kind: "ignored", index }; // server tool blocks: the router asks for none
    }
  }

  private delta(index: number, d: Loose, out: StreamEvent[]): void {
    const b = this.block;
    if (!b || b.index !== index) return;
    if (b.kind === "text" || b.kind === "answer") {
      const t = b.kind === "text" ? (d.type === "text_delta" ? d.text : null) : d.type === "input_json_delta" ? d.partial_json : null;
      if (typeof t === "string" && t) {
        if (b.kind === "answer") b.empty = false;
        this.text(t, out);
      }
    } else if (b.kind === "thinking") {
      if (d.type === "thinking_delta" && typeof d.thinking === "string" && d.thinking) this.thinking(d.thinking, out);
      else if (d.type === "signature_delta" && typeof d.signature === "string") b.signature += d.signature;
    } else if (b.kind === "call" && d.type === "input_json_delta" && typeof d.partial_json === "string" && d.partial_json) {
      b.item.arguments += d.partial_json;
      out.push(emitted({ type: "response.function_call_arguments.delta", item_id: b.item.id, output_index: b.out, delta: d.partial_json, sequence_number: this.seq++ }));
    } else if (b.kind === "custom" && d.type === "input_json_delta" && typeof d.partial_json === "string") {
      // The input streams as it decodes from the `{"input": "..."}` fragments.
      const text = b.input.push(d.partial_json);
      if (text) this.inputDelta(b, text, out);
    }
  }

  private inputDelta(b: Extract<Block, { kind: "custom" }>, delta: string, out: StreamEvent[]): void {
    b.item.input += delta;
    out.push(emitted({ type: "response.custom_tool_call_input.delta", item_id: b.item.id!, output_index: b.out, delta, sequence_number: this.seq++ }));
  }

  private closeBlock(out: StreamEvent[], status: Status): void {
    const b = this.block;
    if (!b) return;
    this.block = null;
    if (b.kind === "text") this.closePart(out);
    else if (b.kind === "answer") {
      if (b.empty) this.text("{}", out); // an answer tool called without input streams no fragment
      this.closePart(out);
    }
    else if (b.kind === "thinking") this.closeThinking(b, out, status);
    else if (b.kind === "call") {
      const item = b.item;
      if (!item.arguments) {
        // A tool without input streams no fragment; its arguments are still an object.
        item.arguments = "{}";
        out.push(emitted({ type: "response.function_call_arguments.delta", item_id: item.id, output_index: b.out, delta: "{}", sequence_number: this.seq++ }));
      }
      item.status = status;
      // OpenAI's done event also names the function (not in the package's type yet).
      const at = { item_id: item.id, output_index: b.out, name: item.name };
      out.push(emitted({ type: "response.function_call_arguments.done", ...at, arguments: item.arguments, sequence_number: this.seq++ }));
      out.push(emitted({ type: "response.output_item.done", output_index: b.out, item, sequence_number: this.seq++ }));
    } else if (b.kind === "custom") {
      const { input, rest } = b.input.finish();
      if (rest) this.inputDelta(b, rest, out);
      b.item.input = input;
      b.item.status = status;
      out.push(emitted({ type: "response.custom_tool_call_input.done", item_id: b.item.id!, output_index: b.out, input, sequence_number: this.seq++ }));
      out.push(emitted({ type: "response.output_item.done", output_index: b.out, item: b.item, sequence_number: this.seq++ }));
    }
  }

  // ---- thinking -----------------------------------------------------------------

  private thinking(delta: string, out: StreamEvent[]): void {
    const b = this.block as Extract<Block, { kind: "thinking" }>;
    b.text += delta;
    const base = { item_id: b.item.id, output_index: b.out };
    if (b.summary) out.push(emitted({ type: "response.reasoning_summary_text.delta", ...base, summary_index: 0, delta, sequence_number: this.seq++ }));
    else out.push(emitted({ type: "response.reasoning_text.delta", ...base, content_index: 0, delta, sequence_number: this.seq++ }));
  }

  private closeThinking(b: Extract<Block, { kind: "thinking" }>, out: StreamEvent[], status: Status): void {
    const full = reasoningItem(b.item.id, { type: "thinking", thinking: b.text, signature: b.signature }, b.summary) as unknown as ResponseReasoningItem;
    // The item keeps its place in `output`: filled in, not replaced.
    Object.assign(b.item, full);
    if (status === "incomplete") b.item.status = "incomplete";
    const base = { item_id: b.item.id, output_index: b.out };
    if (b.summary) {
      const part = { type: "summary_text" as const, text: b.text };
      if (!b.item.summary.length) b.item.summary = [part];
      out.push(emitted({ type: "response.reasoning_summary_text.done", ...base, summary_index: 0, text: b.text, sequence_number: this.seq++ }));
      out.push(emitted({ type: "response.reasoning_summary_part.done", ...base, summary_index: 0, part, sequence_number: this.seq++ }));
    } else {
      const part = { type: "reasoning_text" as const, text: b.text };
      if (!b.item.content?.length) b.item.content = [part];
      out.push(emitted({ type: "response.reasoning_text.done", ...base, content_index: 0, text: b.text, sequence_number: this.seq++ }));
      out.push(emitted({ type: "response.content_part.done", ...base, content_index: 0, part, sequence_number: this.seq++ }));
    }
    out.push(emitted({ type: "response.output_item.done", output_index: b.out, item: b.item, sequence_number: this.seq++ }));
  }

  // ---- message ------------------------------------------------------------------

  private text(delta: string, out: StreamEvent[]): void {
    const m = this.message ?? this.openMessage(out);
    let part = m.part;
    if (!part) {
      part = { type: "output_text", text: "", annotations: [], logprobs: [] };
      m.item.content.push(part);
      m.part = part;
      out.push(emitted({ type: "response.content_part.added", item_id: m.item.id, output_index: m.index, content_index: m.item.content.length - 1, part: { type: "output_text", text: "", annotations: [], logprobs: [] }, sequence_number: this.seq++ }));
    }
    part.text += delta;
    out.push(emitted({ type: "response.output_text.delta", item_id: m.item.id, output_index: m.index, content_index: m.item.content.length - 1, delta, logprobs: [], sequence_number: this.seq++ }));
  }

  private openMessage(out: StreamEvent[]): MessageState {
    const id = this.ids("msg");
    const index = this.output.length;
    const item: MessageState["item"] = { id, type: "message", status: "in_progress", role: "assistant", content: [] };
    this.output.push(item);
    out.push(emitted({ type: "response.output_item.added", output_index: index, item: { id, type: "message", status: "in_progress", role: "assistant", content: [] }, sequence_number: this.seq++ }));
    return (this.message = { index, item, part: null });
  }

  private closePart(out: StreamEvent[]): void {
    const m = this.message;
    const part = m?.part;
    if (!m || !part) return;
    m.part = null;
    const at = { item_id: m.item.id, output_index: m.index, content_index: m.item.content.length - 1 };
    out.push(emitted({ type: "response.output_text.done", ...at, text: part.text, logprobs: part.logprobs, sequence_number: this.seq++ }));
    out.push(emitted({ type: "response.content_part.done", ...at, part, sequence_number: this.seq++ }));
  }

  private refusal(out: StreamEvent[]): void {
    const m = this.message ?? this.openMessage(out);
    this.closePart(out);
    const refusal = refusalText(this.stopDetails);
    const part: ResponseOutputRefusal = { type: "refusal", refusal: "" };
    m.item.content.push(part);
    const at = { item_id: m.item.id, output_index: m.index, content_index: m.item.content.length - 1 };
    out.push(emitted({ type: "response.content_part.added", ...at, part: { type: "refusal", refusal: "" }, sequence_number: this.seq++ }));
    part.refusal = refusal;
    out.push(emitted({ type: "response.refusal.delta", ...at, delta: refusal, sequence_number: this.seq++ }));
    out.push(emitted({ type: "response.refusal.done", ...at, refusal, sequence_number: this.seq++ }));
    out.push(emitted({ type: "response.content_part.done", ...at, part, sequence_number: this.seq++ }));
  }

  private closeMessage(out: StreamEvent[], status: Status): void {
    const m = this.message;
    if (!m) return;
    this.closePart(out);
    this.message = null;
    m.item.status = status;
    out.push(emitted({ type: "response.output_item.done", output_index: m.index, item: m.item, sequence_number: this.seq++ }));
  }
}

/** A stream event's payload as it arrives (the SDK's unions, read field by field). */
type Loose = { type: string; [k: string]: unknown };

type TerminalIncomplete = EmittedResponse["incomplete_details"];
