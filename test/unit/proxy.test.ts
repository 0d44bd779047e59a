import { describe, expect, it } from "vitest";
import { cacheable, ChatChunkAccumulator, chatCacheKey, completionToChunks } from "../../src/proxy/chat-cache.js";
import { modelRenamer } from "../../src/proxy/forward.js";
import { checkChatRequest } from "../../src/proxy/validate.js";

const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) => ({ id: "chatcmpl-9", object: "chat.completion.chunk", created: 5, model: "qwen", choices, ...extra });

describe("modelRenamer", () => {
  it("maps only the object's own model key, whatever the spacing", () => {
    const rename = modelRenamer("qwen3:4b", "local")!;
    expect(rename('{"id":"x","model":"qwen3:4b","choices":[]}')).toBe('{"id":"x","model":"local","choices":[]}');
    expect(rename('{"id":"x", "model" : "qwen3:4b"}')).toBe('{"id":"x", "model":"local"}');
    // Inside a string the quotes are escaped, so text that mentions the model stays as it is.
    const inText = JSON.stringify({ model: "other", choices: [{ delta: { content: '"model":"qwen3:4b"' } }] });
    expect(rename(inText)).toBe(inText);
    expect(modelRenamer("same", "same")).toBeNull();
  });

  it("treats regex characters in model names literally", () => {
    const rename = modelRenamer("llama3.1:8b", "m")!;
    expect(rename('{"model":"llama3x1:8b"}')).toBe('{"model":"llama3x1:8b"}');
    expect(rename('{"model":"llama3.1:8b"}')).toBe('{"model":"m"}');
    // `$` patterns mean nothing in either name.
    expect(modelRenamer("a$&b", "c$1$$d")!('{"model":"a$&b"}')).toBe('{"model":"c$1$$d"}');
  });

  it("maps every frame of a read (several chunks in one text)", () => {
    const rename = modelRenamer("qwen3:4b", "local")!;
    const frames = (model: string) => [1, 2, 3].map((i) => `data: {"id":"c","model":"${model}","choices":[{"delta":{"content":"${i}"}}]}\n\n`).join("");
    expect(rename(frames("qwen3:4b"))).toBe(frames("local"));
  });
});

describe("ChatChunkAccumulator", () => {
  it("folds a multi-choice stream with tool calls, refusal, reasoning and logprobs into one completion", () => {
    const acc = new ChatChunkAccumulator();
    acc.push(chunk([{ index: 0, delta: { role: "assistant", content: "" } }, { index: 1, delta: { role: "assistant", content: null } }]));
    acc.push(chunk([{ index: 0, delta: { reasoning_content: "think " }, logprobs: { content: [{ token: "a", logprob: -1 }] } }]));
    acc.push(chunk([{ index: 0, delta: { reasoning: "more", content: "Hel" }, logprobs: { content: [{ token: "b", logprob: -2 }] } }]));
    acc.push(chunk([{ index: 0, delta: { content: "lo" } }]));
    acc.push(chunk([{ index: 1, delta: { tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "get_", arguments: "" } }] } }]));
    acc.push(chunk([{ index: 1, delta: { tool_calls: [{ index: 0, id: null, type: null, function: { name: "weather", arguments: '{"a":' } }] } }]));
    acc.push(chunk([{ index: 1, delta: { tool_calls: [{ index: 1, id: "call_2", function: { name: "noop", arguments: "{}" } }] } }]));
    acc.push(chunk([{ index: 1, delta: { tool_calls: [{ index: 0, function: { arguments: "1}" } }] } }]));
    acc.push(chunk([{ index: 0, delta: {}, finish_reason: "stop" }, { index: 1, delta: {}, finish_reason: "tool_calls" }]));
    acc.push(chunk([], { usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } }));
    const c = acc.result();
    expect(c).toMatchObject({ id: "chatcmpl-9", object: "chat.completion", created: 5, model: "qwen", usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } });
    expect(c.choices[0]).toEqual({
      index: 0,
      message: { role: "assistant", content: "Hello", reasoning_content: "think more" },
      finish_reason: "stop",
      logprobs: { content: [{ token: "a", logprob: -1 }, { token: "b", logprob: -2 }] },
    });
    expect(c.choices[1]!.message.tool_calls).toEqual([
      { id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"a":1}' } },
      { id: "call_2", type: "function", function: { name: "noop", arguments: "{}" } },
    ]);
    expect(cacheable(c)).toBe(true);
  });

  it("round-trips: replayed chunks fold back into the same completion", () => {
    const acc = new ChatChunkAccumulator();
    for (const ch of [
      chunk([{ index: 0, delta: { role: "assistant", content: "A" } }]),
      chunk([{ index: 0, delta: { tool_calls: [{ index: 0, id: "c1", type: "function", function: { name: "f", arguments: "{}" } }] } }]),
      chunk([{ index: 0, delta: {}, finish_reason: "tool_calls" }]),
    ])
      acc.push(ch);
    const original = acc.result();
    const again = new ChatChunkAccumulator();
    const replay = completionToChunks(original, true);
    expect(replay.at(-1)).toMatchObject({ choices: [], usage: null });
    for (const ch of replay) again.push(ch);
    expect(again.result()).toEqual(original);
    expect(completionToChunks(original, false).every((c) => !("usage" in c))).toBe(true);
  });

  it("an answer cut short or without a finish is not cacheable", () => {
    const acc = new ChatChunkAccumulator();
    acc.push(chunk([{ index: 0, delta: { content: "x" } }]));
    expect(cacheable(acc.result())).toBe(false);
    acc.push(chunk([{ index: 0, delta: {}, finish_reason: "length" }]));
    expect(cacheable(acc.result())).toBe(false);
  });
});

describe("chatCacheKey", () => {
  const body = (extra: Record<string, unknown>) => checkChatRequest({ model: "m", messages: [{ role: "user", content: "hi" }], ...extra }).body;

  it("ignores fields that do not change the answer and key order, not those that do", () => {
    const k = chatCacheKey("m", body({ temperature: 0, tools: [{ type: "function", function: { name: "f", parameters: { a: 1, b: 2 } } }] }));
    expect(chatCacheKey("m", body({ tools: [{ function: { parameters: { b: 2, a: 1 }, name: "f" }, type: "function" }], temperature: 0, stream: true, stream_options: { include_usage: true }, user: "u", metadata: { x: "1" } }))).toBe(k);
    expect(chatCacheKey("m", body({ temperature: 1, tools: [{ type: "function", function: { name: "f", parameters: { a: 1, b: 2 } } }] }))).not.toBe(k);
    // Everything not on the short unkeyed list is keyed, including fields the API gains later.
    const base = body({ temperature: 0, tools: [{ type: "function", function: { name: "f", parameters: { a: 1, b: 2 } } }] });
    for (const extra of [{ service_tier: "flex" }, { reasoning_effort: "high" }, { verbosity: "low" }, { prediction: { type: "content", content: "x" } }, { some_future_field: 1 }]) {
      expect(chatCacheKey("m", { ...base, ...extra }), JSON.stringify(extra)).not.toBe(k);
    }
    expect(chatCacheKey("other", body({ temperature: 0, tools: [{ type: "function", function: { name: "f", parameters: { a: 1, b: 2 } } }] }))).not.toBe(k);
    expect(k).toMatch(/^chat:[0-9a-f]{64}$/);
  });

  it("the router extension is taken off the body before anything else sees it", () => {
    const checked = checkChatRequest({ model: "m", messages: [{ role: "user", content: "hi" }], router: { cache: true } });
    expect(checked.cache).toBe(true);
    expect(checked.body).not.toHaveProperty("router");
    expect(() => checkChatRequest({ model: "m", messages: [{ role: "user", content: "hi" }], router: { cache: "yes" } })).toThrow(/router.cache/);
  });
});
