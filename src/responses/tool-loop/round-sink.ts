/**
 * The sink one upstream round streams into, so that several rounds read as ONE response:
 * the round's own lifecycle events are dropped (the loop sends `response.created` once and
 * one terminal event), `sequence_number`s continue the response's count and `output_index`es
 * follow the items of earlier rounds. A function call the model made to a hosted tool is
 * streamed as what it is (an `mcp_call` with its argument deltas, or an
 * `mcp_approval_request`); its `output_item.done` is held back: the loop sends it once the
 * call ran. When the response searched the web or the files, an answer's text gets its
 * `url_citation` / `file_citation` annotations (`cite`) as it closes: `response.output_text.annotation.added` events, and the
 * annotations on its done part and item. A translated round hands over its events as objects
 * (`event`): what the sink drops is never serialised, what it writes is serialised once; a native
 * round's upstream frames come as text (`send`).
 */
import type { IdGenerator } from "../../wire/ids.js";
import type { EventSink } from "../../wire/sse-writer.js";
import type { Item, StreamEvent } from "../../wire/types.js";
import type { ResponseOutputText } from "openai/resources/responses/responses";
import { emitted } from "../../wire/emitted.js";
import { approvalRequest, openCall, openFileSearch, openSearch, openedEvents } from "./items.js";
import type { HostedFunction, Toolbox } from "./toolbox.js";

export type Citation = ResponseOutputText.URLCitation | ResponseOutputText.FileCitation;

/** The url_citation and file_citation annotations of a text, from the response's search results so far. */
export type Cite = (text: string) => Citation[];

/** The stream's running count, shared by the loop and its rounds. */
export interface Sequence {
  next: number;
}

const LIFECYCLE = new Set(["response.created", "response.queued", "response.in_progress"]);
type Serialise = (ev: StreamEvent) => string;
const toJson: Serialise = (ev) => JSON.stringify(ev);

/** Deltas the sink only renumbers and moves: most of a round's events; as text, taken without parsing (`movedEvent`). */
const PLAIN_DELTAS = new Set(["response.output_text.delta", "response.reasoning_text.delta", "response.reasoning_summary_text.delta", "response.refusal.delta"]);

export class RoundSink implements EventSink {
  /** function_call item id (the round's) -> the hosted item streamed in its place. */
  readonly converted = new Map<string, { id: string; fn: HostedFunction; args: string; argsDone: boolean }>();
  /** Annotations given to each text part as it closed, by `item_id:content_index`. */
  private readonly cited = new Map<string, Citation[]>();
  private readonly seq = () => this.count.next++;

  constructor(
    private readonly out: EventSink,
    private readonly count: Sequence,
    /** Items of the response before this round. */
    private readonly base: number,
    private readonly toolbox: Toolbox,
    private readonly ids: IdGenerator,
    private readonly cite: Cite | null,
  ) {}

  /** The client's backlog: a round's upstream read waits for it as a plain stream's does. */
  backlog(): Promise<void> | null {
    return this.out.backlog?.() ?? null;
  }

  send(type: string, data: string): void {
    if (LIFECYCLE.has(type)) return;
    if (PLAIN_DELTAS.has(type)) {
      const moved = movedEvent(data, this.base, this.count.next);
      if (moved !== null) {
        this.count.next++;
        this.out.send(type, moved);
        return;
      }
    }
    this.take(type, JSON.parse(data) as StreamEvent, toJson);
  }

  /** An event the round's translator built: its lifecycle events are dropped before they are ever serialised. */
  event(ev: StreamEvent, serialise: Serialise): void {
    if (LIFECYCLE.has(ev.type)) return;
    this.take(ev.type, ev, serialise);
  }

  /** One event of the round, written as the response's; `ev` itself is not changed (the translator may keep its parts). */
  private take(type: string, ev: StreamEvent, serialise: Serialise): void {
    const index = typeof ev.output_index === "number" ? ev.output_index + this.base : undefined;
    switch (type) {
      case "response.output_item.added": {
        const item = ev.item as Item;
        const fn = item?.type === "function_call" ? this.toolbox.get(item.name) : undefined;
        if (!fn) break;
        const hosted = fn.kind === "web_search" ? openSearch(this.ids("ws")) : fn.kind === "file_search" ? openFileSearch(this.ids("fs")) : fn.approval ? approvalRequest(this.ids("mcpr"), fn, "") : openCall(this.ids("mcp"), fn, "");
        this.converted.set(item.id as string, { id: hosted.id as string, fn, args: "", argsDone: false });
        for (const e of openedEvents(hosted, index!, this.seq)) this.out.send(e.type, JSON.stringify(e));
        return;
      }
      case "response.function_call_arguments.delta":
      case "response.function_call_arguments.done": {
        const c = this.converted.get(ev.item_id as string);
        if (!c) break;
        // an approval request carries its arguments whole at its done event, a search its query
        if (c.fn.kind !== "mcp" || c.fn.approval) return;
        const done = type.endsWith(".done");
        if (done) this.argumentsDone(c, index!, String(ev.arguments ?? ""));
        else this.argumentsDelta(c, index!, String(ev.delta ?? ""));
        return;
      }
      case "response.output_item.done": {
        const c = this.converted.get((ev.item as Item)?.id as string);
        if (!c) {
          if (this.cite) return this.forward(type, { ...ev, item: this.annotated(ev.item as Item) }, index, serialise);
          break;
        }
        // An upstream that sent the call's arguments whole (no argument events): streamed here, so the mcp_call reads the same.
        if (c.fn.kind === "mcp" && !c.fn.approval && !c.argsDone) this.argumentsDone(c, index!, String((ev.item as Item).arguments ?? ""));
        return;
      }
      case "response.output_text.done":
        if (this.cite) {
          this.forward(type, ev, index, serialise);
          this.citations(ev, index!);
          return;
        }
        break;
      case "response.content_part.done":
        if (this.cite) {
          const part = ev.part as { type?: string; annotations?: unknown };
          const got = this.cited.get(`${String(ev.item_id)}:${String(ev.content_index)}`);
          if (part?.type === "output_text" && got) return this.forward(type, { ...ev, part: { ...part, annotations: got } }, index, serialise);
        }
        break;
    }
    this.forward(type, ev, index, serialise);
  }

  private argumentsDelta(c: { id: string; args: string }, outputIndex: number, delta: string): void {
    c.args += delta;
    const t = "response.mcp_call_arguments.delta";
    this.out.send(t, JSON.stringify({ type: t, item_id: c.id, output_index: outputIndex, delta, sequence_number: this.seq() }));
  }

  /** The arguments' done event, after a delta with what the deltas had not carried yet. */
  private argumentsDone(c: { id: string; args: string; argsDone: boolean }, outputIndex: number, args: string): void {
    if (args.length > c.args.length && args.startsWith(c.args)) this.argumentsDelta(c, outputIndex, args.slice(c.args.length));
    c.argsDone = true;
    const t = "response.mcp_call_arguments.done";
    this.out.send(t, JSON.stringify({ type: t, item_id: c.id, output_index: outputIndex, arguments: args, sequence_number: this.seq() }));
  }

  /** The event renumbered as the response's next, at its item's place in the response (`index`). */
  private forward(type: string, ev: StreamEvent, index: number | undefined, serialise: Serialise): void {
    const { type: _t, sequence_number: _s, ...rest } = ev;
    const out: StreamEvent = { type, ...rest, sequence_number: this.seq() };
    if (index !== undefined) out.output_index = index;
    this.out.send(type, serialise(out));
  }

  /** A closed text's citations: one `annotation.added` each, kept for its done part and item. */
  private citations(ev: StreamEvent, outputIndex: number): void {
    const found = this.cite!(String(ev.text ?? ""));
    const key = `${String(ev.item_id)}:${String(ev.content_index)}`;
    this.cited.set(key, found);
    found.forEach((annotation, i) => {
      const e = emitted({ type: "response.output_text.annotation.added", item_id: ev.item_id as string, output_index: outputIndex, content_index: ev.content_index as number, annotation_index: i, annotation, sequence_number: this.seq() });
      this.out.send(e.type, JSON.stringify(e));
    });
  }

  /** The item with the annotations its texts got as they closed: a copy, or the item itself when none did. */
  private annotated(item: Item): Item {
    if (item?.type !== "message" || !Array.isArray(item.content)) return item;
    let changed = false;
    const content = (item.content as { type?: string; annotations?: unknown }[]).map((part, j) => {
      const got = this.cited.get(`${String(item.id)}:${j}`);
      if (part.type !== "output_text" || !got) return part;
      changed = true;
      return { ...part, annotations: got };
    });
    return changed ? { ...item, content } : item;
  }

  flush(): void {
    this.out.flush?.();
  }
}

const SEQUENCE_KEY = ',"sequence_number":';
const INDEX_KEY = ',"output_index":';

/**
 * An event's JSON with its `output_index` moved by `base` and its `sequence_number` set to `seq`,
 * without parsing it: the same bytes `forward` writes, for an event in the shape the translators
 * write deltas in (`output_index` before anything nested, `sequence_number` the last key); null
 * for any other. The keys are found by their text: inside a JSON string a `"` is escaped, so
 * `,"output_index":` can only be a key, and one before the first `{` or `[` is the event's own.
 */
export function movedEvent(data: string, base: number, seq: number): string | null {
  const last = data.length - 1;
  const tail = data.lastIndexOf(SEQUENCE_KEY);
  if (tail === -1 || data.charCodeAt(last) !== CLOSE_BRACE || !digits(data, tail + SEQUENCE_KEY.length, last)) return null;
  const head = tail + SEQUENCE_KEY.length;
  if (base === 0) return `${data.slice(0, head)}${seq}}`;
  const at = data.indexOf(INDEX_KEY);
  if (at === -1 || at > tail || opensBefore(data, at)) return null;
  const from = at + INDEX_KEY.length;
  let end = from;
  while (end < tail && isDigit(data.charCodeAt(end))) end++;
  if (end === from || data.charCodeAt(end) !== COMMA) return null;
  return `${data.slice(0, from)}${Number(data.slice(from, end)) + base}${data.slice(end, head)}${seq}}`;
}

const CLOSE_BRACE = 125;
const COMMA = 44;

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

/** `data[from, to)` is a non-empty run of digits. */
function digits(data: string, from: number, to: number): boolean {
  if (to <= from) return false;
  for (let i = from; i < to; i++) if (!isDigit(data.charCodeAt(i))) return false;
  return true;
}

/** Whether an object or array opens inside the event before `at` (past its own opening brace). */
function opensBefore(data: string, at: number): boolean {
  for (let i = 1; i < at; i++) {
    const c = data.charCodeAt(i);
    if (c === 123 || c === 91) return true;
  }
  return false;
}
