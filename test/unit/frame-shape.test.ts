import { describe, expect, it } from "vitest";
import { FrameShape } from "../../src/translate/frame-shape.js";
import { textOnlyContent } from "../../src/translate/chat/stream.js";
import { DeltaShape } from "../../src/translate/anthropic/delta-shape.js";

const chunk = (delta: object, extra: object = {}) => JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta, finish_reason: null }], ...extra });

function learned(data: string, value: string): FrameShape {
  const s = new FrameShape("content");
  s.learn(data, value);
  return s;
}

describe("FrameShape", () => {
  it("reads the text of a frame shaped like the learned one, as JSON.parse would", () => {
    const s = learned(chunk({ content: "Hel" }), "Hel");
    for (const text of ["lo", " world", "", 'say "hi"', "back\\slash", "line\nbreak", "tab\t", "é ✓ 😀", "\u2028", "</script>"]) {
      expect(s.read(chunk({ content: text }))).toBe(text);
    }
    // Escapes another encoder writes (\u00e9, \/) decode as JSON.parse decodes them.
    expect(s.read(chunk({ content: "x" }).replace('"x"', '"caf\\u00e9 a\\/b"'))).toBe("café a/b");
  });

  it("reads nothing when anything but the text differs", () => {
    const s = learned(chunk({ content: "Hel" }), "Hel");
    expect(s.read(chunk({ content: "lo" }, { usage: { prompt_tokens: 1 } }))).toBeUndefined();
    expect(s.read(chunk({ content: "lo", refusal: "no" }))).toBeUndefined();
    expect(s.read(JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 2, model: "m", choices: [{ index: 0, delta: { content: "lo" }, finish_reason: null }] }))).toBeUndefined();
    expect(s.read(JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: { content: "lo" }, finish_reason: "stop" }] }))).toBeUndefined();
    // The same text before and after, but more than one string between them: not one value.
    expect(s.read(chunk({ content: "x" }).replace('"x"', '"x","refusal":"no"'))).toBeUndefined();
    expect(s.read(chunk({ content: "x" }).replace('"x"', '"x"+"y"'))).toBeUndefined();
    expect(s.read(chunk({ content: "x" }).replace('"x"', "1"))).toBeUndefined();
    expect(s.read("[DONE]")).toBeUndefined();
  });

  it("learns frames written with spaces (Python's json.dumps) and reads them", () => {
    const py = (text: string) => `{"id": "c1", "choices": [{"index": 0, "delta": {"content": ${JSON.stringify(text)}}, "finish_reason": null}]}`;
    const s = learned(py("a"), "a");
    expect(s.read(py("b c"))).toBe("b c");
    expect(s.read(chunk({ content: "b" }))).toBeUndefined();
  });

  it("does not learn a frame it cannot place the value in", () => {
    // The key twice: which one varies is not known.
    expect(learned(JSON.stringify({ choices: [{ delta: { content: "a" } }], x: { content: "a" } }), "a").read(JSON.stringify({ choices: [{ delta: { content: "b" } }], x: { content: "a" } }))).toBeUndefined();
    // The value written another way than JSON.stringify writes it (\u00e9 for é): not learned.
    const escaped = chunk({ content: "é" }).replace("é", "\\u00e9");
    expect(learned(escaped, "é").read(chunk({ content: "b" }))).toBeUndefined();
    // A value that is not the frame's.
    expect(learned(chunk({ content: "a" }), "b").read(chunk({ content: "c" }))).toBeUndefined();
  });

  it("follows the latest frame learned", () => {
    const s = learned(chunk({ content: "a" }), "a");
    const two = (text: string) => JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 2, model: "m", choices: [{ index: 0, delta: { content: text }, finish_reason: null }] });
    s.learn(two("b"), "b");
    expect(s.read(two("c"))).toBe("c");
    expect(s.read(chunk({ content: "c" }))).toBeUndefined();
  });
});

describe("textOnlyContent", () => {
  it("is the text of a chunk whose only news is text for choice 0", () => {
    expect(textOnlyContent(JSON.parse(chunk({ content: "hi" })))).toBe("hi");
    expect(textOnlyContent(JSON.parse(chunk({ role: "assistant", content: "hi" })))).toBe("hi");
    expect(textOnlyContent({ choices: [{ delta: { content: "hi", tool_calls: [] }, logprobs: null }], usage: null })).toBe("hi");
  });

  it("is undefined for any chunk with other news", () => {
    const cases = [
      { choices: [{ index: 0, delta: { content: "" } }] },
      { choices: [{ index: 0, delta: { content: "hi" }, finish_reason: "stop" }] },
      { choices: [{ index: 0, delta: { content: "hi" }, logprobs: { content: [] } }] },
      { choices: [{ index: 1, delta: { content: "hi" } }] },
      { choices: [{ index: 0, delta: { content: "hi" } }, { index: 1, delta: { content: "ho" } }] },
      { choices: [{ index: 0, delta: { content: "hi", reasoning_content: "r" } }] },
      { choices: [{ index: 0, delta: { content: "hi", reasoning: "r" } }] },
      { choices: [{ index: 0, delta: { content: "hi", refusal: "no" } }] },
      { choices: [{ index: 0, delta: { content: "hi", tool_calls: [{ index: 0, function: { arguments: "{" } }] } }] },
      { choices: [{ index: 0, delta: { content: "hi" } }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } },
      { choices: [{ index: 0, delta: { content: "hi" } }], error: { message: "boom" } },
      { choices: [] },
      {},
    ];
    for (const c of cases) expect(textOnlyContent(c as Parameters<typeof textOnlyContent>[0])).toBeUndefined();
  });
});

describe("DeltaShape (Messages stream deltas)", () => {
  const text = (t: string, index = 0) => JSON.stringify({ type: "content_block_delta", index, delta: { type: "text_delta", text: t } });
  const thinking = (t: string, index = 0) => JSON.stringify({ type: "content_block_delta", index, delta: { type: "thinking_delta", thinking: t } });
  const parsedLearn = (s: DeltaShape, data: string) => s.learn(data, JSON.parse(data) as Record<string, unknown>);

  it("reads text and thinking deltas shaped like the last one learned, at its block index", () => {
    const s = new DeltaShape();
    expect(s.read(text("a"))).toBeUndefined();
    parsedLearn(s, thinking("hm", 0));
    expect(s.read(thinking('so "x"'))).toEqual(JSON.parse(thinking('so "x"')));
    expect(s.read(text("a"))).toBeUndefined();
    parsedLearn(s, text("Hi", 1));
    expect(s.read(text(" there", 1))).toEqual(JSON.parse(text(" there", 1)));
    expect(s.read(text(" there", 2))).toBeUndefined();
    expect(s.read(thinking("hm", 0))).toBeUndefined();
  });

  it("learns nothing from an event with anything more than the delta's text", () => {
    const s = new DeltaShape();
    for (const data of [
      JSON.stringify({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "a", extra: 1 } }),
      JSON.stringify({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "a" }, extra: 1 }),
      JSON.stringify({ type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: "abc" } }),
      JSON.stringify({ type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: "{" } }),
      JSON.stringify({ index: 0, delta: { type: "text_delta", text: "a" } }),
    ]) {
      parsedLearn(s, data);
      expect(s.read(text("b"))).toBeUndefined();
    }
    parsedLearn(s, text("a"));
    parsedLearn(s, JSON.stringify({ type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: "abc" } }));
    // A signature (or any other event) leaves the last text shape learned: it still reads text.
    expect(s.read(text("b"))).toEqual(JSON.parse(text("b")));
  });
});
