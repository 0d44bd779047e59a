/**
 * A Messages stream's text and thinking deltas, read without JSON.parse when shaped like the
 * last one (translate/frame-shape.ts): `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}`
 * differs from the delta before it only in its text.
 */
import type { RawContentBlockDeltaEvent } from "@anthropic-ai/sdk/resources/messages/messages";
import { FrameShape } from "../frame-shape.js";

type TextKind = "text_delta" | "thinking_delta";
const FIELD = { text_delta: "text", thinking_delta: "thinking" } as const;

export class DeltaShape {
  private readonly shapes = { text_delta: new FrameShape(FIELD.text_delta), thinking_delta: new FrameShape(FIELD.thinking_delta) };
  /** The delta last learned: which kind, at which block index. */
  private current: { kind: TextKind; index: number } | null = null;

  /** The event `data` is, when it is the last learned delta with only its text changed. */
  read(data: string): RawContentBlockDeltaEvent | undefined {
    const c = this.current;
    if (c === null) return undefined;
    const value = this.shapes[c.kind].read(data);
    if (value === undefined) return undefined;
    const delta: RawContentBlockDeltaEvent["delta"] = c.kind === "text_delta" ? { type: c.kind, text: value } : { type: c.kind, thinking: value };
    return { type: "content_block_delta", index: c.index, delta };
  }

  /**
   * Learns from a parsed event: a text or thinking delta with nothing else in it (no field
   * the fast read would leave out) becomes the shape `read` looks for.
   */
  learn(data: string, ev: { type?: unknown; index?: unknown; delta?: unknown }): void {
    if (ev.type !== "content_block_delta" || typeof ev.index !== "number" || !onlyKeys(ev, 3)) return;
    const d = ev.delta as Record<string, unknown> | null;
    if (!d || (d.type !== "text_delta" && d.type !== "thinking_delta") || !onlyKeys(d, 2)) return;
    const kind: TextKind = d.type;
    const value = d[FIELD[kind]];
    if (typeof value !== "string") return;
    this.current = this.shapes[kind].learn(data, value) ? { kind, index: ev.index } : null;
  }
}

function onlyKeys(o: object, n: number): boolean {
  let i = 0;
  for (const _ in o) i++;
  return i === n;
}
