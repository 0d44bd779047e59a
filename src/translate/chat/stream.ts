/**
 * Chat-completion chunk stream -> Responses stream events: ONE explicit state machine.
 *
 * State: the open message item (with its open text/refusal part), the open reasoning
 * item, and the tool calls keyed by the chat `index`. Every event is built once, in
 * emission order, with `type` first and `sequence_number` last. Items live in `output`
 * and are mutated in place as deltas arrive (the live snapshot); `*.added` events get
 * their own small objects so an event never changes after it was emitted.
 *
 * Reasoning streams as `reasoning_text`, or as a summary (`reasoning_summary_*` events) when
 * the request asked for one (`reasoningSummary`). A call of a freeform `custom` tool is a
 * `custom_tool_call` item whose input streams as it decodes from the call's arguments.
 *
 * Item boundaries: text/refusal, reasoning and tool calls each close whatever other
 * kind is open before they open their own item, so output indexes follow emission
 * order and each item is opened and closed by its own events.
 *
 * Interleaved tool calls (fragments of index 0 arriving after index 1 started): every
 * call keeps its own state and streams its argument deltas in real time. When a new
 * index appears, earlier calls whose arguments already parse as complete JSON are
 * closed (the usual sequential stream then reads added/delta/done per call, as OpenAI
 * sends it); a call whose JSON is still incomplete stays open next to the new one and
 * closes at the end. Several open function_call items are valid for openai-node's
 * ResponseStream (it routes by output_index and item_id). A fragment for a call that
 * was already closed could only follow complete JSON; it is dropped.
 */
import { emitted } from "../../wire/emitted.js";
import type { IdGenerator } from "../../wire/ids.js";
import type { Clock } from "../../wire/clock.js";
import type { ResponseError, ResponseOutputItem } from "openai/resources/responses/responses";
import type { ChatUsage, EmittedResponse, ResponseObject, StreamEvent } from "../../wire/types.js";
import type { ChatChunkLike, ChatTokenLogprob, ChatToolCallDelta, ToolNameMap } from "./chat-types.js";
import { chatUsageToResponses, customCallItem, functionCallItem, mapLogprobs, terminalFromFinishReason } from "./response.js";
import { CustomInputStream } from "../custom-tools.js";
import { completedAt } from "../skeleton.js";
import { openingEvents } from "../stream-opening.js";
import { identityFor } from "./tool-names.js";
import type { CallState, MessageState, Part, ReasoningState, Status, StreamTranslatorOptions } from "./stream-state.js";
import { isCompleteJson } from "./stream-state.js";

export type { StreamTranslatorOptions } from "./stream-state.js";

/**
 * The text of a chunk whose only news is text for choice 0: no usage, error, finish reason,
 * logprobs, reasoning, refusal or tool call (a `role` is no news). Undefined for any other chunk.
 * What `pushText` takes in place of `push` for a chunk of the same shape.
 */
export function textOnlyContent(chunk: ChatChunkLike): string | undefined {
  if (chunk.usage || chunk.error) return undefined;
  const choices = chunk.choices;
  if (!choices || choices.length !== 1) return undefined;
  const choice = choices[0]!;
  const d = choice.delta;
  if ((choice.index ?? 0) !== 0 || choice.finish_reason || choice.logprobs || !d) return undefined;
  if (typeof d.content !== "string" || !d.content || d.reasoning_content || d.reasoning || d.refusal || (d.tool_calls && d.tool_calls.length > 0)) return undefined;
  return d.content;
}

export class ChatStreamTranslator {
  private seq: number;
  private started = false;
  private ended = false;
  private readonly output: ResponseOutputItem[] = [];
  private readonly compaction: StreamTranslatorOptions["compaction"] | null;
  private readonly reasoningSummary: boolean;
  /**
   * The response as streamed so far: the skeleton (as the openai package types it) with this
   * stream's output. The skeleton itself is not kept: every snapshot is made from this one
   * (its fields are the skeleton's but for those each snapshot sets), one object less per open stream.
   */
  private live: EmittedResponse;
  private message: MessageState | null = null;
  private reasoning: ReasoningState | null = null;
  private readonly calls = new Map<number, CallState>();
  private readonly openCalls: CallState[] = [];
  private readonly callIds = new Set<string>();
  private lastCall: CallState | null = null;
  private finishReason: string | null = null;
  private usage: ChatUsage | null = null;

  constructor(
    skeleton: ResponseObject,
    private readonly ids: IdGenerator,
    /** Read once, when the response completes (its `completed_at`). */
    private readonly clock: Clock,
    private readonly toolNames?: ToolNameMap,
    opts: StreamTranslatorOptions = {},
  ) {
    this.seq = opts.startSequence ?? 0;
    this.compaction = opts.compaction ?? null;
    this.reasoningSummary = opts.reasoningSummary === true;
    this.live = { ...(skeleton as unknown as EmittedResponse), output: this.output, usage: null };
  }

  /** The response as streamed so far (final once a terminal method ran). */
  get response(): ResponseObject { return this.live as unknown as ResponseObject; }
  /** The sequence_number the next event will carry. */
  get sequence(): number { return this.seq; }

  start(): StreamEvent[] {
    const out: StreamEvent[] = [];
    if (!this.started) this.startInto(out);
    return out;
  }

  push(chunk: ChatChunkLike): StreamEvent[] {
    if (this.ended) return [];
    const out: StreamEvent[] = [];
    if (!this.started) this.startInto(out);
    if (chunk.error) {
      const code = chunk.error.code;
      return this.terminate(out, "failed", { code: typeof code === "string" && code ? code : "server_error", message: chunk.error.message ?? "The backend reported an error." });
    }
    if (chunk.usage) this.usage = chunk.usage;
    const choices = chunk.choices;
    if (!choices) return out;
    for (let c = 0; c < choices.length; c++) {
      const choice = choices[c]!;
      if ((choice.index ?? 0) !== 0) continue;
      const d = choice.delta;
      if (d) {
        const reasoning = d.reasoning_content || d.reasoning;
        if (typeof reasoning === "string" && reasoning) this.reasoningDelta(reasoning, out);
        if (typeof d.content === "string" && d.content) this.messageDelta("output_text", d.content, choice.logprobs?.content, out);
        if (typeof d.refusal === "string" && d.refusal) this.messageDelta("refusal", d.refusal, null, out);
        const calls = d.tool_calls;
        if (calls) for (let t = 0; t < calls.length; t++) this.toolDelta(calls[t]!, out);
      }
      if (choice.finish_reason) this.finishReason = choice.finish_reason;
    }
    return out;
  }

  /**
   * A chunk whose only news is text for choice 0 (`textOnlyContent`): the events `push` makes of
   * it, for a caller that read the text without parsing the chunk (translate/frame-shape.ts).
   */
  pushText(text: string): StreamEvent[] {
    if (this.ended) return [];
    const out: StreamEvent[] = [];
    if (!this.started) this.startInto(out);
    if (text) this.messageDelta("output_text", text, null, out);
    return out;
  }

  /** End of the chat stream: closes open items, emits response.completed or response.incomplete. */
  finish(): StreamEvent[] {
    const terminal = terminalFromFinishReason(this.finishReason);
    return this.terminate([], terminal.status, null, terminal.incomplete_details);
  }

  /** The backend failed mid-stream: open items close as incomplete, then response.failed. */
  fail(error: { code: string; message: string }): StreamEvent[] {
    return this.terminate([], "failed", { code: error.code, message: error.message });
  }

  /**
   * The response was cancelled: open items close as incomplete and the snapshot becomes
   * `cancelled`. No terminal event: the Responses stream has no `response.cancelled`
   * and strict clients throw on unknown types; the stream simply ends.
   */
  cancel(): StreamEvent[] {
    return this.terminate([], "cancelled", null);
  }

  // ---- lifecycle ----------------------------------------------------------------

  private startInto(out: StreamEvent[]): void {
    this.started = true;
    openingEvents(this.live, this.compaction, this.output, () => this.seq++, out);
    this.live.status = "in_progress";
  }

  private terminate(
    out: StreamEvent[],
    status: "completed" | "incomplete" | "failed" | "cancelled",
    error: { code: string; message: string } | null,
    incomplete: { reason: string } | null = null,
  ): StreamEvent[] {
    if (this.ended) return out;
    if (!this.started) this.startInto(out);
    this.ended = true;
    const itemStatus: Status = status === "completed" ? "completed" : "incomplete";
    this.closeReasoning(out);
    this.closeMessage(out, itemStatus);
    for (const call of this.calls.values()) {
      if (call.item) continue; // a call that never got its name still becomes an item
      this.openCall(call, out);
      if (call.pending) this.argumentsDelta(call, call.pending, out);
    }
    this.closeCalls(out, itemStatus, false);
    const usage = this.usage || status === "completed" || status === "incomplete" ? chatUsageToResponses(this.usage) : null;
    const final: EmittedResponse = { ...this.live, status, completed_at: completedAt(status, this.clock), error: error as ResponseError | null, incomplete_details: incomplete as EmittedResponse["incomplete_details"], output: this.output, usage };
    this.live = final;
    if (status !== "cancelled") {
      out.push(emitted({ type: `response.${status}`, response: final, sequence_number: this.seq++ }));
    }
    return out;
  }

  // ---- message (text / refusal) -------------------------------------------------

  /** A text (`output_text`) or refusal fragment: into the open message's part of that kind. */
  private messageDelta(kind: Part["type"], delta: string, logprobs: ChatTokenLogprob[] | null | undefined, out: StreamEvent[]): void {
    const m = this.message ?? this.openMessage(out);
    const part = m.part !== null && m.part.type === kind ? m.part : this.openPart(m, kind, out);
    const at = { item_id: m.item.id, output_index: m.index, content_index: m.item.content.length - 1 };
    if (part.type === "refusal") {
      part.refusal += delta;
      out.push(emitted({ type: "response.refusal.delta", ...at, delta, sequence_number: this.seq++ }));
      return;
    }
    part.text += delta;
    const lp = mapLogprobs(logprobs);
    for (let i = 0; i < lp.length; i++) part.logprobs.push(lp[i]);
    out.push(emitted({ type: "response.output_text.delta", ...at, delta, logprobs: lp, sequence_number: this.seq++ }));
  }

  private openMessage(out: StreamEvent[]): MessageState {
    this.closeReasoning(out);
    this.closeCalls(out, "completed", false);
    const id = this.ids("msg");
    const index = this.output.length;
    const item: MessageState["item"] = { id, type: "message", status: "in_progress", role: "assistant", content: [] };
    this.output.push(item);
    const added: ResponseOutputItem = { id, type: "message", status: "in_progress", role: "assistant", content: [] };
    out.push(emitted({ type: "response.output_item.added", output_index: index, item: added, sequence_number: this.seq++ }));
    return (this.message = { index, item, part: null });
  }

  private openPart(m: MessageState, type: Part["type"], out: StreamEvent[]): Part {
    if (m.part) this.closePart(m, out);
    const part: Part = type === "output_text" ? { type, text: "", annotations: [], logprobs: [] } : { type, refusal: "" };
    const added = type === "output_text" ? { type, text: "", annotations: [], logprobs: [] } : { type, refusal: "" };
    m.item.content.push(part);
    m.part = part;
    const at = { item_id: m.item.id, output_index: m.index, content_index: m.item.content.length - 1 };
    out.push(emitted({ type: "response.content_part.added", ...at, part: added, sequence_number: this.seq++ }));
    return part;
  }

  private closePart(m: MessageState, out: StreamEvent[]): void {
    const part = m.part;
    if (!part) return;
    m.part = null;
    const base = { item_id: m.item.id, output_index: m.index, content_index: m.item.content.length - 1 };
    if (part.type === "output_text") {
      out.push(emitted({ type: "response.output_text.done", ...base, text: part.text, logprobs: part.logprobs, sequence_number: this.seq++ }));
    } else {
      out.push(emitted({ type: "response.refusal.done", ...base, refusal: part.refusal, sequence_number: this.seq++ }));
    }
    out.push(emitted({ type: "response.content_part.done", ...base, part, sequence_number: this.seq++ }));
  }

  private closeMessage(out: StreamEvent[], status: Status): void {
    const m = this.message;
    if (!m) return;
    this.closePart(m, out);
    this.message = null;
    m.item.status = status;
    out.push(emitted({ type: "response.output_item.done", output_index: m.index, item: m.item, sequence_number: this.seq++ }));
  }

  // ---- reasoning ----------------------------------------------------------------

  private reasoningDelta(delta: string, out: StreamEvent[]): void {
    let r = this.reasoning;
    if (!r) {
      this.closeMessage(out, "completed");
      this.closeCalls(out, "completed", false);
      const id = this.ids("rs");
      const index = this.output.length;
      out.push(emitted({ type: "response.output_item.added", output_index: index, item: { id, type: "reasoning", summary: [] }, sequence_number: this.seq++ }));
      if (this.reasoningSummary) {
        const part = { type: "summary_text" as const, text: "" };
        r = this.reasoning = { index, item: { id, type: "reasoning", summary: [part] }, part };
        const at = { item_id: id, output_index: index, summary_index: 0 };
        out.push(emitted({ type: "response.reasoning_summary_part.added", ...at, part: { type: "summary_text", text: "" }, sequence_number: this.seq++ }));
      } else {
        const part = { type: "reasoning_text" as const, text: "" };
        r = this.reasoning = { index, item: { id, type: "reasoning", summary: [], content: [part] }, part };
        const at = { item_id: id, output_index: index, content_index: 0 };
        out.push(emitted({ type: "response.content_part.added", ...at, part: { type: "reasoning_text", text: "" }, sequence_number: this.seq++ }));
      }
      this.output.push(r.item);
    }
    r.part.text += delta;
    if (r.part.type === "summary_text") {
      out.push(emitted({ type: "response.reasoning_summary_text.delta", item_id: r.item.id, output_index: r.index, summary_index: 0, delta, sequence_number: this.seq++ }));
    } else {
      out.push(emitted({ type: "response.reasoning_text.delta", item_id: r.item.id, output_index: r.index, content_index: 0, delta, sequence_number: this.seq++ }));
    }
  }

  private closeReasoning(out: StreamEvent[]): void {
    const r = this.reasoning;
    if (!r) return;
    this.reasoning = null;
    const part = r.part;
    if (part.type === "summary_text") {
      const at = { item_id: r.item.id, output_index: r.index, summary_index: 0 };
      out.push(emitted({ type: "response.reasoning_summary_text.done", ...at, text: part.text, sequence_number: this.seq++ }));
      out.push(emitted({ type: "response.reasoning_summary_part.done", ...at, part: { type: "summary_text", text: part.text }, sequence_number: this.seq++ }));
    } else {
      const at = { item_id: r.item.id, output_index: r.index, content_index: 0 };
      out.push(emitted({ type: "response.reasoning_text.done", ...at, text: part.text, sequence_number: this.seq++ }));
      out.push(emitted({ type: "response.content_part.done", ...at, part, sequence_number: this.seq++ }));
    }
    out.push(emitted({ type: "response.output_item.done", output_index: r.index, item: r.item, sequence_number: this.seq++ }));
  }

  // ---- tool calls -----------------------------------------------------------------

  private toolDelta(tc: ChatToolCallDelta, out: StreamEvent[]): void {
    const key = this.callKey(tc);
    let call = this.calls.get(key);
    if (!call) {
      this.closeReasoning(out);
      this.closeMessage(out, "completed");
      this.closeCalls(out, "completed", true);
      call = { index: -1, item: null, args: "", callId: null, chatName: "", pending: "", closed: false };
      this.calls.set(key, call);
    }
    this.lastCall = call;
    if (call.closed) return;
    if (!call.callId && tc.id) call.callId = tc.id;
    const fn = tc.function;
    if (!call.chatName && fn?.name) call.chatName = fn.name;
    const fragment = fn?.arguments;
    if (!call.item) {
      if (fragment) call.pending += fragment;
      if (!call.chatName) return;
      this.openCall(call, out);
      if (call.pending) this.argumentsDelta(call, call.pending, out);
      call.pending = "";
    } else if (fragment) {
      this.argumentsDelta(call, fragment, out);
    }
  }

  /** The chat `index` of a fragment; servers that omit it get one from the call id. */
  private callKey(tc: ChatToolCallDelta): number {
    if (typeof tc.index === "number") return tc.index;
    if (tc.id) {
      for (const [k, c] of this.calls) if (c.callId === tc.id) return k;
      return this.calls.size === 0 ? 0 : Math.max(...this.calls.keys()) + 1;
    }
    for (const [k, c] of this.calls) if (c === this.lastCall) return k;
    return 0;
  }

  private openCall(call: CallState, out: StreamEvent[]): void {
    let callId = call.callId;
    if (!callId || this.callIds.has(callId)) callId = this.ids("call");
    this.callIds.add(callId);
    call.index = this.output.length;
    const identity = identityFor(this.toolNames, call.chatName);
    const item = (identity.custom
      ? customCallItem(this.ids("ctc"), callId, identity, "", "in_progress")
      : functionCallItem(this.ids("fc"), callId, call.chatName, "", "in_progress", this.toolNames)) as unknown as NonNullable<CallState["item"]>;
    call.item = item;
    if (identity.custom) call.input = new CustomInputStream();
    this.output.push(item);
    this.openCalls.push(call);
    out.push(emitted({ type: "response.output_item.added", output_index: call.index, item: { ...item }, sequence_number: this.seq++ }));
  }

  /** A function call's arguments stream as they come; a custom call's input as it decodes from them. */
  private argumentsDelta(call: CallState, delta: string, out: StreamEvent[]): void {
    call.args += delta;
    const item = call.item!;
    if (item.type !== "function_call") {
      const text = call.input!.push(delta);
      if (text) this.inputDelta(call, text, out);
      return;
    }
    item.arguments += delta;
    out.push(emitted({ type: "response.function_call_arguments.delta", item_id: item.id, output_index: call.index, delta, sequence_number: this.seq++ }));
  }

  private inputDelta(call: CallState, delta: string, out: StreamEvent[]): void {
    const item = call.item!;
    if (item.type === "custom_tool_call") item.input += delta;
    out.push(emitted({ type: "response.custom_tool_call_input.delta", item_id: item.id!, output_index: call.index, delta, sequence_number: this.seq++ }));
  }

  /** Closes open calls in output order; with `onlyComplete`, only those whose arguments parse. */
  private closeCalls(out: StreamEvent[], status: Status, onlyComplete: boolean): void {
    const open = this.openCalls;
    if (open.length === 0) return;
    let kept = 0;
    for (let i = 0; i < open.length; i++) {
      const call = open[i]!;
      if (onlyComplete && !isCompleteJson(call.args)) {
        open[kept++] = call;
        continue;
      }
      const item = call.item!;
      call.closed = true;
      item.status = status;
      if (item.type === "function_call") {
        // OpenAI's done event also names the function (not in the package's type yet).
        const at = { item_id: item.id, output_index: call.index, name: item.name };
        out.push(emitted({ type: "response.function_call_arguments.done", ...at, arguments: item.arguments, sequence_number: this.seq++ }));
      } else {
        const { input, rest } = call.input!.finish();
        if (rest) this.inputDelta(call, rest, out);
        item.input = input;
        out.push(emitted({ type: "response.custom_tool_call_input.done", item_id: item.id, output_index: call.index, input, sequence_number: this.seq++ }));
      }
      out.push(emitted({ type: "response.output_item.done", output_index: call.index, item, sequence_number: this.seq++ }));
    }
    open.length = kept;
  }
}
