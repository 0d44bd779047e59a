/**
 * A native (OpenAI-hosted) Responses event stream, rewritten for the client: ONE explicit
 * state machine, like the chat translator (translate/chat/stream.ts), with the same methods:
 * push (one upstream frame), finish (the upstream ended), fail (it broke), cancel (the
 * router stopped it), each returning what the client must see.
 *
 * Lifecycle and error events are parsed to swap in the router's id and fields (of a lifecycle
 * event laid out as OpenAI writes it, only its response: the event around it stays text). Every other
 * event passes as the upstream's own text: the deltas with one substring check (and a
 * reference to the frame while an item is open), output_item.added/done (which carry no
 * router-owned field) with their output_index read from the text and the frame kept as the
 * item, parsed only if the item is needed (the stream stops without a terminal event) -
 * unless hidden encrypted reasoning or the scrub must change the text: then parsed. Runs of
 * deltas and the like in a whole upstream read are not even decoded (`passRun`): they go to the
 * client as their bytes, and the machine keeps their last sequence number and, while an item
 * is open, the bytes themselves. Only when the stream stops mid-item are the open items'
 * frames parsed, to close them (as `incomplete`, with the text they got) with the events a
 * complete stream would have had, so partial output survives cancel and failure.
 */
import type { ResponseError, ResponseOutputItem } from "openai/resources/responses/responses";
import { numbered, type EmittedFields } from "../../wire/emitted.js";
import type { EmittedResponse, Item, JsonObject, ResponseObject, StreamEvent } from "../../wire/types.js";
import { LIFECYCLE_EVENTS, TERMINAL_EVENTS } from "../../wire/protocol.js";
import { applyRouterFields, clientText, type RouterFields } from "./rewrite.js";
import { failedResponse } from "../skeleton.js";
import { SseParser } from "../../wire/sse-parser.js";

export interface NativeFrame {
  type: string;
  data: string;
  /** True for the upstream's terminal lifecycle event: the stream is over. */
  terminal: boolean;
  /** Parsed payload, only for the events the router parses (lifecycle, error; an output_item it must change). */
  parsed?: JsonObject;
}

export interface NativeStreamOptions {
  /** Applied to parsed events' text (lifecycle and error events may echo the endpoint's key). */
  scrub?: (text: string) => string;
}

type Failure = { code: string; message: string };

export class NativeStreamMachine {
  private upstreamId: string | null = null;
  /** `upstreamId` as bytes, to find it in frames passed on as their bytes (`passRun`). */
  private upstreamIdBytes: Buffer | null = null;
  private lastSequence = -1;
  private ended = false;
  /**
   * Items by output_index: finished ones, and open ones as announced by output_item.added;
   * a string is the raw output_item frame, parsed when the item is needed (`item`).
   */
  private readonly items: (Item | string)[] = [];
  private readonly open = new Set<number>();
  /**
   * Raw frames received while an item is open (parsed only if the stream stops mid-item): a
   * frame's data, or frames passed on as their bytes.
   */
  private openFrames: (string | PassedBytes)[] = [];
  private snapshot: ResponseObject;
  private final: ResponseObject | null = null;
  /**
   * The last non-terminal lifecycle event's response text, as the upstream wrote it and as the
   * client got it (the text of `snapshot`): an upstream's `response.in_progress` usually repeats
   * `response.created`'s snapshot, which is then not parsed and serialised again (`lifecycleFrame`).
   */
  private lastSnapshot: { upstream: string; client: string } | null = null;

  /** `fields.defaults` (the router's skeleton) is the snapshot until the upstream sends its own. */
  constructor(
    private readonly fields: RouterFields & { defaults: ResponseObject },
    private readonly opts: NativeStreamOptions = {},
  ) {
    this.snapshot = { ...fields.defaults };
  }

  /** The response as streamed so far; the upstream's own final object once it ended. */
  get response(): ResponseObject {
    return this.final ?? { ...this.snapshot, output: this.output() };
  }

  /** The sequence_number the next event the router adds will carry. */
  get sequence(): number {
    return this.lastSequence + 1;
  }

  push(eventName: string | undefined, data: string): NativeFrame {
    const type = eventName ?? sniffType(data);
    if (type !== undefined && (LIFECYCLE_EVENTS.has(type) || type === "error")) return this.lifecycleFrame(data) ?? this.parsedFrame(type, data);
    if (type !== undefined && type.startsWith("response.output_item.")) return this.itemFrame(type, data);
    this.trackRaw(data);
    if (this.open.size > 0) this.openFrames.push(data);
    if (this.upstreamId !== null && data.includes(this.upstreamId)) data = data.split(this.upstreamId).join(this.fields.id);
    return { type: type ?? "message", data, terminal: false };
  }

  /**
   * Frames of an upstream read, `chunk[start, end)`, that go to the client as they came: each one
   * passable by its type (passable.ts), and the run holding no upstream id to rewrite. The
   * stream's state advances as they say (their last sequence number; while an item is open, the
   * bytes themselves). False, changing nothing, when they must be read one by one (`push`): before
   * the first lifecycle event (the upstream's id is not known yet), after the end, or when the
   * run names the upstream's id.
   */
  passRun(chunk: Buffer, start: number, end: number): boolean {
    if (this.ended || this.upstreamIdBytes === null) return false;
    const id = chunk.indexOf(this.upstreamIdBytes, start);
    if (id !== -1 && id < end) return false;
    const at = chunk.lastIndexOf(SEQUENCE_KEY_BYTES, end - 1);
    if (at >= start) {
      const n = numberAt(chunk, at + SEQUENCE_KEY_BYTES.length, end);
      if (n >= 0) this.lastSequence = n;
    }
    // Kept as a latin1 string, byte for byte (decoded only if the item must be rebuilt): a view of
    // the read would keep the socket's whole read buffer (64 KB, shared with other reads) alive with the item.
    if (this.open.size > 0) this.openFrames.push(new PassedBytes(chunk.toString("latin1", start, end)));
    return true;
  }

  /**
   * The upstream closed without a terminal event: open items close as incomplete and
   * the stream ends in `response.failed` (the last event returned).
   */
  finish(): StreamEvent[] {
    return this.fail({ code: "server_error", message: "The upstream stream ended before the response was complete." });
  }

  /** The upstream broke mid-stream: open items close as incomplete, then `response.failed`. */
  fail(error: Failure): StreamEvent[] {
    if (this.ended) return [];
    const out = this.closeOpenItems();
    this.final = { ...failedResponse(this.snapshot, error), output: this.output() };
    const response = this.final as unknown as EmittedResponse;
    out.push(numbered({ type: "response.failed", response: { ...response, error: error as ResponseError } }, ++this.lastSequence));
    this.ended = true;
    return out;
  }

  /**
   * The router stopped the stream (cancel): open items close as incomplete and the
   * response becomes `cancelled`. No terminal event: the caller records one
   * (background-events.ts terminalEvent).
   */
  cancel(): StreamEvent[] {
    if (this.ended) return [];
    const out = this.closeOpenItems();
    this.final = { ...this.snapshot, status: "cancelled", completed_at: null, error: null, output: this.output() };
    this.ended = true;
    return out;
  }

  /** Serialises an event the router built, hiding encrypted reasoning the client did not ask for. */
  serialise(event: StreamEvent): string {
    return clientText(event, this.fields.hideEncryptedReasoning);
  }

  // ---- upstream frames ------------------------------------------------------------

  /** output_item.added/done as the upstream's text, when the router would change nothing in it. */
  private itemFrame(type: string, text: string): NativeFrame {
    // Hidden reasoning: a key may be spelt with escapes, so any escape takes the parsed way too.
    if (this.fields.hideEncryptedReasoning && (text.includes("encrypted_content") || text.includes("\\u"))) return this.parsedFrame(type, text);
    if (this.scrub(text) !== text) return this.parsedFrame(type, text);
    const index = rawOutputIndex(text);
    if (index === undefined) return this.parsedFrame(type, text);
    this.trackRaw(text);
    this.items[index] = text;
    if (type === "response.output_item.added") this.open.add(index);
    else if (type === "response.output_item.done") {
      this.open.delete(index);
      if (this.open.size === 0) this.openFrames = [];
    }
    return { type, data: text, terminal: false };
  }

  /**
   * A lifecycle event laid out as `lifecycleParts` reads it: only its response is parsed, takes the
   * router's fields and is serialised; the event around it stays the upstream's text. A
   * non-terminal one whose response is the text the previous one carried is that one's client
   * text with this event's type and number. Null for any other layout (`parsedFrame` reads it).
   */
  private lifecycleFrame(text: string): NativeFrame | null {
    const parts = lifecycleParts(text);
    if (parts === null || !LIFECYCLE_EVENTS.has(parts.type)) return null;
    const terminal = TERMINAL_EVENTS.has(parts.type);
    const last = this.lastSnapshot;
    if (!terminal && last !== null && parts.body === last.upstream) {
      this.lastSequence = parts.sequence;
      return { type: parts.type, data: parts.head + last.client + parts.tail, terminal: false };
    }
    let resp: JsonObject;
    try {
      resp = JSON.parse(parts.body) as JsonObject;
    } catch {
      return null; // more than the response between its head and tail: the whole event is read
    }
    this.lastSequence = parts.sequence;
    resp = this.adopt(resp);
    const client = clientText(resp, this.fields.hideEncryptedReasoning);
    const body = this.scrub(client);
    if (terminal) this.end((body === client ? resp : JSON.parse(body)) as ResponseObject);
    else {
      this.snapshot = resp as ResponseObject;
      this.lastSnapshot = { upstream: parts.body, client: body };
    }
    return { type: parts.type, data: parts.head + body + parts.tail, terminal };
  }

  private parsedFrame(type: string, text: string): NativeFrame {
    const parsed = JSON.parse(text) as JsonObject;
    if (typeof parsed.sequence_number === "number") this.lastSequence = parsed.sequence_number;
    const t = String(parsed.type ?? type);
    const terminal = TERMINAL_EVENTS.has(t);
    if (LIFECYCLE_EVENTS.has(t) && parsed.response && typeof parsed.response === "object") {
      const resp = this.adopt(parsed.response as JsonObject);
      parsed.response = resp;
      if (!terminal) this.snapshot = resp;
      this.lastSnapshot = null;
    }
    const index = parsed.output_index;
    if (typeof index === "number") {
      if (t === "response.output_item.added") {
        this.items[index] = parsed.item as Item;
        this.open.add(index);
      } else if (t === "response.output_item.done") {
        this.items[index] = parsed.item as Item;
        this.open.delete(index);
        if (this.open.size === 0) this.openFrames = [];
      }
    }
    const raw = this.serialise(parsed as StreamEvent);
    const data = this.scrub(raw);
    if (terminal) {
      if (data !== raw) parsed.response = (JSON.parse(data) as JsonObject).response;
      this.end(parsed.response as ResponseObject);
    }
    return { type: t, data, terminal, parsed };
  }

  /** An upstream response with the router's fields (applyRouterFields); the first one names the upstream's id (rewritten wherever else it appears). */
  private adopt(resp: JsonObject): ResponseObject {
    if (typeof resp.id === "string" && this.upstreamId === null) {
      this.upstreamId = resp.id;
      this.upstreamIdBytes = Buffer.from(resp.id);
    }
    return applyRouterFields(resp, this.fields);
  }

  /** `text` without the endpoint's key (the same string when it holds none). */
  private scrub(text: string): string {
    return this.opts.scrub ? this.opts.scrub(text) : text;
  }

  /** The upstream's terminal event came: `response` is the final one, and the stream is over. */
  private end(response: ResponseObject): void {
    this.final = response;
    this.ended = true;
  }

  /** Reads sequence_number from a raw frame without parsing all of it (it is near the end). */
  private trackRaw(data: string): void {
    const at = data.lastIndexOf(SEQUENCE_KEY);
    if (at !== -1) {
      const n = Number.parseInt(data.slice(at + SEQUENCE_KEY.length), 10);
      if (Number.isFinite(n)) this.lastSequence = n;
    }
  }

  private output(): Item[] {
    const out: Item[] = [];
    for (let i = 0; i < this.items.length; i++) {
      const item = this.items[i] ? this.item(i) : undefined;
      if (item) out.push(item);
    }
    return out;
  }

  /** The item at `index`, parsed from its raw frame the first time it is needed. */
  private item(index: number): Item {
    const item = this.items[index]!;
    if (typeof item !== "string") return item;
    const parsed = (JSON.parse(item) as JsonObject).item as Item;
    this.items[index] = parsed;
    return parsed;
  }

  // ---- closing open items -----------------------------------------------------------

  /** Rebuilds the open items from their frames and emits the events that close them. */
  private closeOpenItems(): StreamEvent[] {
    const out: StreamEvent[] = [];
    if (this.open.size === 0) return out;
    for (const index of this.open) this.item(index);
    const parts = rebuild(this.items as Item[], this.open, this.openFrames);
    const emit: Emit = (fields) => out.push(numbered(fields, ++this.lastSequence));
    for (const index of [...this.open].sort((a, b) => a - b)) {
      const item = this.items[index] as Item;
      const at = { item_id: String(item.id ?? ""), output_index: index };
      for (const p of parts.filter((p) => p.index === index && !p.done)) closePart(p, at, emit);
      // OpenAI's arguments-done event also names the function (not in the package's type yet).
      if (item.type === "function_call") emit({ type: "response.function_call_arguments.done", ...at, ...{ name: item.name }, arguments: String(item.arguments ?? "") });
      if (item.type === "custom_tool_call") emit({ type: "response.custom_tool_call_input.done", ...at, input: String(item.input ?? "") });
      const closed: Item = { ...item, status: "incomplete" };
      this.items[index] = closed;
      emit({ type: "response.output_item.done", output_index: index, item: closed as unknown as ResponseOutputItem });
    }
    this.open.clear();
    this.openFrames = [];
    return out;
  }
}

/** A content, summary or reasoning-text part of an open item, as rebuilt from its frames. */
interface OpenPart {
  index: number;
  kind: "content" | "summary";
  at: number;
  part: JsonObject;
  done: boolean;
}

/**
 * Replays the raw frames of open items onto copies of those items: content parts and
 * their text, refusals, summaries, call arguments. Returns the parts, done or not.
 */
function rebuild(items: Item[], open: Set<number>, raw: (string | PassedBytes)[]): OpenPart[] {
  const frames: string[] = [];
  for (const f of raw) {
    if (typeof f === "string") frames.push(f);
    else new SseParser().push(Buffer.from(f.latin1, "latin1"), (frame) => void frames.push(frame.data));
  }
  for (const index of open) {
    const item = items[index]!;
    items[index] = { ...item, ...(Array.isArray(item.content) ? { content: [...(item.content as JsonObject[])] } : {}), ...(Array.isArray(item.summary) ? { summary: [...(item.summary as JsonObject[])] } : {}) };
  }
  const parts: OpenPart[] = [];
  const find = (index: number, kind: OpenPart["kind"], at: number) => parts.find((p) => p.index === index && p.kind === kind && p.at === at);
  for (const frame of frames) {
    const e = JSON.parse(frame) as JsonObject;
    const index = e.output_index;
    if (typeof index !== "number" || !open.has(index)) continue;
    const item = items[index]!;
    const ci = typeof e.content_index === "number" ? e.content_index : -1;
    const si = typeof e.summary_index === "number" ? e.summary_index : -1;
    const delta = typeof e.delta === "string" ? e.delta : "";
    switch (e.type) {
      case "response.content_part.added":
        parts.push({ index, kind: "content", at: ci, part: { ...(e.part as JsonObject) }, done: false });
        break;
      case "response.reasoning_summary_part.added":
        parts.push({ index, kind: "summary", at: si, part: { ...(e.part as JsonObject) }, done: false });
        break;
      case "response.output_text.delta":
      case "response.reasoning_text.delta":
      case "response.reasoning_summary_text.delta": {
        const p = find(index, e.type === "response.reasoning_summary_text.delta" ? "summary" : "content", e.type === "response.reasoning_summary_text.delta" ? si : ci);
        if (p) p.part.text = String(p.part.text ?? "") + delta;
        if (p && Array.isArray(e.logprobs) && e.logprobs.length > 0) p.part.logprobs = [...((p.part.logprobs as unknown[]) ?? []), ...e.logprobs];
        break;
      }
      case "response.refusal.delta": {
        const p = find(index, "content", ci);
        if (p) p.part.refusal = String(p.part.refusal ?? "") + delta;
        break;
      }
      case "response.function_call_arguments.delta":
        item.arguments = String(item.arguments ?? "") + delta;
        break;
      case "response.custom_tool_call_input.delta":
        item.input = String(item.input ?? "") + delta;
        break;
      case "response.content_part.done":
      case "response.reasoning_summary_part.done": {
        const p = find(index, e.type === "response.content_part.done" ? "content" : "summary", e.type === "response.content_part.done" ? ci : si);
        if (p) {
          p.part = { ...(e.part as JsonObject) };
          p.done = true;
        }
        break;
      }
    }
  }
  // The items carry their parts as far as they got.
  for (const p of parts) {
    const item = items[p.index]!;
    const list = ((p.kind === "summary" ? item.summary : item.content) as JsonObject[] | undefined) ?? [];
    list[p.at] = p.part;
    if (p.kind === "summary") item.summary = list;
    else item.content = list;
  }
  return parts;
}

type Emit = (fields: EmittedFields) => void;
type Done<T extends EmittedFields["type"]> = Extract<EmittedFields, { type: T }>;

/** The events that close one open part: its `*.done` text event, then its part `*.done` (parts are rebuilt loose from upstream frames). */
function closePart(p: OpenPart, at: { item_id: string; output_index: number }, emit: Emit): void {
  const part = p.part;
  const text = String(part.text ?? "");
  if (p.kind === "summary") {
    const s = { ...at, summary_index: p.at };
    emit({ type: "response.reasoning_summary_text.done", ...s, text });
    emit({ type: "response.reasoning_summary_part.done", ...s, part: { type: "summary_text", text } });
    return;
  }
  const c = { ...at, content_index: p.at };
  if (part.type === "output_text") emit({ type: "response.output_text.done", ...c, text, logprobs: (part.logprobs ?? []) as Done<"response.output_text.done">["logprobs"] });
  else if (part.type === "refusal") emit({ type: "response.refusal.done", ...c, refusal: String(part.refusal ?? "") });
  else if (part.type === "reasoning_text") emit({ type: "response.reasoning_text.done", ...c, text });
  emit({ type: "response.content_part.done", ...c, part: part as unknown as Done<"response.content_part.done">["part"] });
}

/**
 * The top-level output_index of an output_item frame, read from its text: only when the key
 * occurs once (a key inside the item would make it ambiguous: undefined, and the frame is parsed).
 */
function rawOutputIndex(data: string): number | undefined {
  const key = '"output_index":';
  const at = data.indexOf(key);
  if (at <= 0 || data.charCodeAt(at - 1) === 92 /* \\ */ || data.indexOf(key, at + key.length) !== -1) return undefined;
  const n = Number.parseInt(data.slice(at + key.length, at + key.length + 12), 10);
  return Number.isInteger(n) && n >= 0 ? n : undefined;
}

/** Frames passed on as their bytes, kept as a latin1 string of those bytes. */
class PassedBytes {
  constructor(readonly latin1: string) {}
}

const SEQUENCE_KEY = '"sequence_number":';
const SEQUENCE_KEY_BYTES = Buffer.from(SEQUENCE_KEY);

/** The non-negative integer written at `b[at]` (after any spaces), read from the bytes; -1 when there is none. */
function numberAt(b: Uint8Array, at: number, end: number): number {
  while (at < end && b[at] === 32) at++;
  let n = -1;
  for (; at < end; at++) {
    const digit = b[at]! - 48;
    if (digit < 0 || digit > 9) break;
    n = (n < 0 ? 0 : n * 10) + digit;
  }
  return n;
}

const LIFECYCLE_HEAD = /^\{"type":"(response\.[a-z_]+)",(?:"sequence_number":(\d+),)?"response":\{/;
const SEQUENCE_TAIL = /^,"sequence_number":(\d+)\}$/;

/**
 * A lifecycle event's text taken apart, when it is exactly `{"type":...,"sequence_number":N,"response":{...}}`
 * or `{"type":...,"response":{...},"sequence_number":N}` with no space: then `body` is the
 * response's text, and `head` + a response's text + `tail` is the same event carrying that response.
 * Null for any other layout.
 */
function lifecycleParts(text: string): { type: string; sequence: number; head: string; body: string; tail: string } | null {
  const m = LIFECYCLE_HEAD.exec(text);
  if (m === null) return null;
  const bodyStart = m[0].length - 1;
  if (m[2] !== undefined) {
    if (!text.endsWith("}}")) return null;
    return { type: m[1]!, sequence: Number(m[2]), head: m[0].slice(0, -1), body: text.slice(bodyStart, -1), tail: "}" };
  }
  const at = text.lastIndexOf(',"sequence_number":');
  if (at <= bodyStart) return null;
  const tail = text.slice(at);
  const n = SEQUENCE_TAIL.exec(tail);
  if (n === null || text.charCodeAt(at - 1) !== 125 /* } */) return null;
  return { type: m[1]!, sequence: Number(n[1]), head: m[0].slice(0, -1), body: text.slice(bodyStart, at), tail };
}

function sniffType(data: string): string | undefined {
  const m = /"type"\s*:\s*"([^"]+)"/.exec(data.length > 200 ? data.slice(0, 200) : data);
  return m?.[1];
}
