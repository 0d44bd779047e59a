import { describe, expect, it } from "vitest";
import { movedEvent, RoundSink } from "../../src/responses/tool-loop/round-sink.js";
import type { Toolbox } from "../../src/responses/tool-loop/toolbox.js";
import { EventJson } from "../../src/wire/event-json.js";
import type { StreamEvent } from "../../src/wire/types.js";

/** What the sink wrote for `data` as its `n`th event after `base` earlier items. */
function throughSink(type: string, data: string, base: number, next: number): string {
  const out: string[] = [];
  const sink = new RoundSink({ send: (_t, d) => out.push(d) }, { next }, base, { get: () => undefined } as unknown as Toolbox, (p) => p, null);
  sink.send(type, data);
  return out[0]!;
}

/** The parsed way, as the sink takes every other event: output_index moved, sequence_number set and last. */
function parsedWay(data: string, base: number, seq: number): string {
  const { type, sequence_number: _s, ...rest } = JSON.parse(data) as Record<string, unknown>;
  if (typeof rest.output_index === "number") rest.output_index += base;
  return JSON.stringify({ type, ...rest, sequence_number: seq });
}

const json = new EventJson();
const delta = (d: string, extra: Partial<StreamEvent> = {}) =>
  json.text({ type: "response.output_text.delta", item_id: "msg_0a1b", output_index: 3, content_index: 0, delta: d, logprobs: [], sequence_number: 41, ...extra } as StreamEvent);

describe("a round's deltas taken on their text", () => {
  const texts = ['plain', 'quotes "," and ,"output_index":9, inside', ',"sequence_number":7}', "back\\slash \\u00e9 é 🎉", "{[nested-looking]}", ""];

  it("writes the bytes the parsed way writes, for every base and sequence number", () => {
    for (const t of texts)
      for (const base of [0, 1, 12])
        for (const seq of [0, 9, 10, 12345]) {
          const data = delta(t);
          expect(movedEvent(data, base, seq)).toBe(parsedWay(data, base, seq));
          expect(throughSink("response.output_text.delta", data, base, seq)).toBe(parsedWay(data, base, seq));
        }
  });

  it("leaves to the parsed way what is not in that shape (an upstream's own key order, something nested first, no number)", () => {
    // OpenAI writes sequence_number second and an obfuscation last.
    const openai = '{"type":"response.output_text.delta","sequence_number":5,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"hi","logprobs":[],"obfuscation":"ab"}';
    expect(movedEvent(openai, 2, 9)).toBeNull();
    expect(throughSink("response.output_text.delta", openai, 2, 9)).toBe(parsedWay(openai, 2, 9));
    const nestedFirst = '{"type":"response.output_text.delta","meta":{"output_index":1},"item_id":"m","output_index":0,"delta":"x","sequence_number":5}';
    expect(movedEvent(nestedFirst, 2, 9)).toBeNull();
    expect(throughSink("response.output_text.delta", nestedFirst, 2, 9)).toBe(parsedWay(nestedFirst, 2, 9));
    expect(movedEvent('{"type":"x","output_index":0,"sequence_number":null}', 1, 2)).toBeNull();
    expect(movedEvent('{"type":"x","output_index":"0","delta":"","sequence_number":1}', 1, 2)).toBeNull();
    expect(movedEvent('{"type":"x","delta":"","sequence_number":1}', 1, 2)).toBeNull();
    // With nothing to move, only the number changes.
    expect(movedEvent('{"type":"x","delta":"","sequence_number":1}', 0, 2)).toBe('{"type":"x","delta":"","sequence_number":2}');
  });

  it("logprobs after the index are carried as they are", () => {
    const data = delta("hi", { logprobs: [{ token: "hi", logprob: -0.1, bytes: [104, 105], top_logprobs: [] }] } as Partial<StreamEvent>);
    expect(movedEvent(data, 4, 77)).toBe(parsedWay(data, 4, 77));
  });
});
