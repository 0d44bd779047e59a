/**
 * The sink one upstream round streams into, so that several rounds read as ONE response:
 * the round's own lifecycle events are dropped (the loop sends `response.created` once and
 * one terminal event), `sequence_number`s continue the response's count and `output_index`es
 * follow the items of earlier rounds. A function call the model made to a hosted tool is
 * streamed as what it is (an `mcp_call` with its argument deltas, or an
 * `mcp_approval_request`); its `output_item.done` is held back: the loop sends it once the
 * call ran.
 */
import type { IdGenerator } from "../../wire/ids.js";
import type { EventSink } from "../../wire/sse-writer.js";
import type { Item } from "../../wire/types.js";
import { approvalRequest, openCall, openedEvents } from "./items.js";
import type { HostedFunction, Toolbox } from "./toolbox.js";

/** The stream's running count, shared by the loop and its rounds. */
export interface Sequence {
  next: number;
}

const LIFECYCLE = new Set(["response.created", "response.queued", "response.in_progress"]);

export class RoundSink implements EventSink {
  /** function_call item id (the round's) -> the hosted item streamed in its place. */
  readonly converted = new Map<string, { id: string; fn: HostedFunction }>();
  private readonly seq = () => this.count.next++;

  constructor(
    private readonly out: EventSink,
    private readonly count: Sequence,
    /** Items of the response before this round. */
    private readonly base: number,
    private readonly toolbox: Toolbox,
    private readonly ids: IdGenerator,
  ) {}

  send(type: string, data: string): void {
    if (LIFECYCLE.has(type)) return;
    const ev = JSON.parse(data) as Record<string, unknown>;
    const index = typeof ev.output_index === "number" ? ev.output_index + this.base : undefined;
    if (index !== undefined) ev.output_index = index;
    switch (type) {
      case "response.output_item.added": {
        const item = ev.item as Item;
        const fn = item?.type === "function_call" ? this.toolbox.get(item.name) : undefined;
        if (!fn) break;
        const hosted = fn.approval ? approvalRequest(this.ids("mcpr"), fn, "") : openCall(this.ids("mcp"), fn, "");
        this.converted.set(item.id as string, { id: hosted.id as string, fn });
        for (const e of openedEvents(hosted, index!, this.seq)) this.out.send(e.type, JSON.stringify(e));
        return;
      }
      case "response.function_call_arguments.delta":
      case "response.function_call_arguments.done": {
        const c = this.converted.get(ev.item_id as string);
        if (!c) break;
        if (c.fn.approval) return; // an approval request carries its arguments whole, at its done event
        const done = type.endsWith(".done");
        const t = done ? "response.mcp_call_arguments.done" : "response.mcp_call_arguments.delta";
        const payload = done ? { type: t, item_id: c.id, output_index: index, arguments: ev.arguments, sequence_number: this.seq() } : { type: t, item_id: c.id, output_index: index, delta: ev.delta, sequence_number: this.seq() };
        this.out.send(t, JSON.stringify(payload));
        return;
      }
      case "response.output_item.done":
        if (this.converted.has((ev.item as Item)?.id as string)) return;
        break;
    }
    const { type: _t, sequence_number: _s, ...rest } = ev;
    this.out.send(type, JSON.stringify({ type, ...rest, sequence_number: this.seq() }));
  }

  flush(): void {
    this.out.flush?.();
  }
}
