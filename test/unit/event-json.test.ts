import { describe, expect, it, vi } from "vitest";
import { sequentialIds } from "../../src/wire/ids.js";
import { EventJson } from "../../src/wire/event-json.js";
import type { ChatChunkLike } from "../../src/translate/chat/chat-types.js";
import { responseSkeleton } from "../../src/translate/skeleton.js";
import { ChatStreamTranslator } from "../../src/translate/chat/stream.js";
import { AnthropicStreamTranslator } from "../../src/translate/anthropic/stream.js";
import type { StreamEvent } from "../../src/wire/types.js";

const skeleton = (status: "in_progress" | "queued" = "in_progress") => responseSkeleton({ model: "m", input: "hi", metadata: { k: "v" } }, { id: "resp_1", createdAt: 1, model: "m", status });
const content = (c: string, logprobs?: unknown): ChatChunkLike => ({ choices: [{ index: 0, delta: { content: c }, ...(logprobs ? { logprobs: { content: logprobs as never } } : {}) }] });

/** Every event's text as the stream writes it, next to JSON.stringify's. */
function texts(events: StreamEvent[]): { fast: string[]; slow: string[] } {
  const json = new EventJson();
  return { fast: events.map((e) => json.text(e)), slow: events.map((e) => JSON.stringify(e)) };
}

function chatEvents(chunks: ChatChunkLike[], status: "in_progress" | "queued" = "in_progress", compaction = false): StreamEvent[] {
  const t = new ChatStreamTranslator(skeleton(status), sequentialIds(), () => 2, undefined, compaction ? { compaction: { id: "cmp_1", type: "compaction", encrypted_content: "x" } } : {});
  const events = [...t.start()];
  for (const c of chunks) events.push(...t.push(c));
  return [...events, ...t.finish()];
}

describe("EventJson: the same bytes as JSON.stringify", () => {
  it("a chat text stream: deltas with quotes, escapes, unicode and lone surrogates; created and in_progress", () => {
    const events = chatEvents([{ choices: [{ index: 0, delta: { role: "assistant", content: "" } }] }, content("He said \"hi\"\n"), content("\\ tab\t é 😀"), content("\ud800 lone"), content("</script>"), { choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }]);
    const { fast, slow } = texts(events);
    expect(fast).toEqual(slow);
    expect(events.filter((e) => e.type === "response.output_text.delta")).toHaveLength(4);
  });

  it("takes its ways: no delta event and no second snapshot is stringified whole", () => {
    const events = chatEvents([content("a"), content("b"), content("c")]);
    const spy = vi.spyOn(JSON, "stringify");
    try {
      const json = new EventJson();
      for (const e of events) json.text(e);
      const whole = spy.mock.calls.map((c) => c[0] as { type?: string; status?: string }).filter((v) => v !== null && typeof v === "object");
      expect(whole.filter((v) => v.type === "response.output_text.delta")).toEqual([]);
      // created and in_progress: one snapshot, stringified once; then the terminal event's own.
      expect(whole.filter((v) => v.type === undefined && v.status !== undefined).map((v) => v.status)).toEqual(["in_progress", "completed"]);
    } finally {
      spy.mockRestore();
    }
  });

  it("chat streams with reasoning, refusal, tool calls, logprobs, a queued start and a compaction item", () => {
    const logprobs = [{ token: "a", logprob: -0.5, bytes: [97], top_logprobs: [{ token: "a", logprob: -0.5, bytes: [97] }] }];
    const streams = [
      chatEvents([{ choices: [{ index: 0, delta: { reasoning_content: "think" } }] }, content("A"), content("B", logprobs), content("C"), { choices: [{ index: 0, delta: { refusal: "no" } }] }, content("D")]),
      chatEvents([content("x"), { choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: "call_1", function: { name: "f", arguments: '{"a":' } }] } }] }, { choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: "1}" } }] } }] }, content("after")], "queued"),
      chatEvents([content("one"), content("two")], "in_progress", true),
    ];
    for (const events of streams) {
      const { fast, slow } = texts(events);
      expect(fast).toEqual(slow);
    }
  });

  it("keeps the opening snapshot and its JSON only while lifecycle events follow each other", () => {
    const events = chatEvents([content("a"), content("b")]);
    const json = new EventJson();
    const held = () => (json as unknown as { response: unknown }).response;
    json.text(events[0]!);
    json.text(events[1]!);
    expect(held()).toBe(events[1]!.response); // response.created, then in_progress: one snapshot
    json.text(events[2]!); // the message's output_item.added
    expect(held()).toBeNull();
  });

  it("an Anthropic text stream", () => {
    const t = new AnthropicStreamTranslator(skeleton(), sequentialIds(), () => 2);
    const usage = { input_tokens: 5, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
    const raw = [
      { type: "message_start", message: { id: "msg_a", type: "message", role: "assistant", model: "m", content: [], stop_reason: null, stop_sequence: null, usage } },
      { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
      { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hel\"lo" } },
      { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: " there" } },
      { type: "content_block_stop", index: 0 },
      { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 3 } },
      { type: "message_stop" },
    ];
    const events = [...t.start()];
    for (const e of raw) events.push(...t.push(e as never));
    events.push(...t.finish());
    const { fast, slow } = texts(events);
    expect(fast).toEqual(slow);
    expect(events.filter((e) => e.type === "response.output_text.delta")).toHaveLength(2);
  });

  it("events laid out otherwise (keys reordered, a key more) are written as JSON.stringify writes them", () => {
    const json = new EventJson();
    const reordered = [
      { type: "response.output_text.delta", output_index: 0, item_id: "msg_1", content_index: 0, delta: "a", logprobs: [], sequence_number: 1 },
      { type: "response.output_text.delta", output_index: 0, item_id: "msg_1", content_index: 0, delta: "b", logprobs: [], sequence_number: 2 },
      { type: "response.output_text.delta", item_id: "msg_1", output_index: 0, content_index: 0, delta: "c", logprobs: [], obfuscation: "x", sequence_number: 3 },
    ] as StreamEvent[];
    for (const e of reordered) expect(json.text(e)).toBe(JSON.stringify(e));
    const response = { id: "resp_1", status: "in_progress" };
    const created = { type: "response.created", response, sequence_number: 0 } as StreamEvent;
    const backwards = { response, type: "response.in_progress", sequence_number: 1 } as StreamEvent;
    expect(json.text(created)).toBe(JSON.stringify(created));
    expect(json.text(backwards)).toBe(JSON.stringify(backwards));
  });
});
