import { describe, expect, it } from "vitest";
import type { Message, RawMessageStreamEvent } from "@anthropic-ai/sdk/resources/messages/messages";
import { messageToResponse, anthropicUsageToResponses } from "../../src/translate/anthropic/response.js";
import { AnthropicStreamTranslator } from "../../src/translate/anthropic/stream.js";
import type { AnswerOptions } from "../../src/translate/anthropic/response.js";
import { decodeThinking, encodeThinking } from "../../src/translate/anthropic/types.js";
import { outputText, responseSkeleton } from "../../src/translate/skeleton.js";
import { sequentialIds } from "../../src/wire/ids.js";
import type { Item, StreamEvent } from "../../src/wire/types.js";
import { assertResponsesGrammar, runThroughOpenAISdk } from "../helpers/grammar.js";

/** The translators' clock: when a response completes (`completed_at`). */
const CLOCK = () => 1_700_000_100;

const skeleton = () => responseSkeleton({ model: "m" }, { id: "resp_1", createdAt: 1, model: "m", status: "in_progress" });
const usage = (o: Partial<Message["usage"]> = {}): Message["usage"] => ({
  input_tokens: 10,
  output_tokens: 5,
  cache_creation_input_tokens: null,
  cache_read_input_tokens: null,
  cache_creation: null,
  inference_geo: null,
  output_tokens_details: null,
  server_tool_use: null,
  service_tier: "standard",
  speed: null,
  ...o,
});
const message = (content: Message["content"], o: Partial<Message> = {}): Message => ({
  id: "msg_01",
  type: "message",
  role: "assistant",
  model: "claude-up",
  content,
  container: null,
  diagnostics: null,
  stop_details: null,
  stop_reason: "end_turn",
  stop_sequence: null,
  usage: usage(),
  ...o,
});

const SIG = "EqQBCkgIARABGAIiQL+/sig==";

describe("anthropic answer (JSON)", () => {
  it("maps thinking, text and tool_use in order; the signature rides in encrypted_content", () => {
    const r = messageToResponse(
      message(
        [
          { type: "thinking", thinking: "hmm", signature: SIG },
          { type: "text", text: "Let me check.", citations: null },
          { type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Paris" }, caller: { type: "direct" } },
        ],
        { stop_reason: "tool_use" },
      ),
      skeleton(),
      sequentialIds(), CLOCK,
    );
    expect(r.status).toBe("completed");
    expect(r.output.map((i) => i.type)).toEqual(["reasoning", "message", "function_call"]);
    expect(r.output[0]).toMatchObject({ type: "reasoning", summary: [], content: [{ type: "reasoning_text", text: "hmm" }] });
    expect(decodeThinking(r.output[0]!.encrypted_content)).toEqual({ type: "thinking", thinking: "hmm", signature: SIG });
    expect(r.output[2]).toMatchObject({ type: "function_call", call_id: "toolu_1", name: "get_weather", arguments: '{"city":"Paris"}', status: "completed" });
  });

  it("shows thinking as a summary when asked; redacted thinking is an opaque reasoning item", () => {
    const r = messageToResponse(message([{ type: "thinking", thinking: "t", signature: SIG }, { type: "redacted_thinking", data: "opaque" }, { type: "text", text: "ok", citations: null }]), skeleton(), sequentialIds(), CLOCK, { thinkingAsSummary: true });
    expect(r.output[0]).toMatchObject({ summary: [{ type: "summary_text", text: "t" }] });
    expect(r.output[0]!.content).toBeUndefined();
    expect(decodeThinking(r.output[1]!.encrypted_content)).toEqual({ type: "redacted_thinking", data: "opaque" });
  });

  it("an unsigned thinking block (no signature, or an empty one as streamed) is shown but never sent back", () => {
    const r = messageToResponse(message([{ type: "thinking", thinking: "t", signature: "" }, { type: "text", text: "ok", citations: null }]), skeleton(), sequentialIds(), CLOCK);
    expect(r.output[0]).toMatchObject({ type: "reasoning", content: [{ type: "reasoning_text", text: "t" }] });
    expect(decodeThinking(r.output[0]!.encrypted_content)).toBeNull();
    expect(decodeThinking(encodeThinking({ type: "thinking", thinking: "t", signature: SIG }))).toEqual({ type: "thinking", thinking: "t", signature: SIG });
  });

  it("max_tokens is incomplete; a refusal is a refusal part; the answer tool is output_text", () => {
    const cut = messageToResponse(message([{ type: "text", text: "par", citations: null }], { stop_reason: "max_tokens" }), skeleton(), sequentialIds(), CLOCK);
    expect(cut).toMatchObject({ status: "incomplete", completed_at: null, incomplete_details: { reason: "max_output_tokens" } });
    expect(cut.output[0]).toMatchObject({ status: "incomplete" });
    const refused = messageToResponse(message([], { stop_reason: "refusal", stop_details: { type: "refusal", category: null, explanation: "No." } }), skeleton(), sequentialIds(), CLOCK);
    expect(refused.output[0]).toMatchObject({ type: "message", content: [{ type: "refusal", refusal: "No." }] });
    const structured = messageToResponse(message([{ type: "tool_use", id: "t", name: "person", input: { name: "Ada" }, caller: { type: "direct" } }]), skeleton(), sequentialIds(), CLOCK, { answerTool: "person" });
    expect(outputText(structured)).toBe('{"name":"Ada"}');
    expect(structured).toMatchObject({ status: "completed", completed_at: 1_700_000_100 });
    expect(structured.output.map((i) => i.type)).toEqual(["message"]);
  });

  it("usage: input includes cache reads and writes, cached_tokens the reads", () => {
    expect(anthropicUsageToResponses(usage({ input_tokens: 10, cache_read_input_tokens: 100, cache_creation_input_tokens: 20, output_tokens: 7, output_tokens_details: { thinking_tokens: 3 } }))).toEqual({
      input_tokens: 130,
      input_tokens_details: { cached_tokens: 100, cache_write_tokens: 20 },
      output_tokens: 7,
      output_tokens_details: { reasoning_tokens: 3 },
      total_tokens: 137,
    });
  });
});

// A typed Messages event stream (the SDK's own event type: a fixture that drifts fails tsc).
const start = (u: Partial<Message["usage"]> = {}): RawMessageStreamEvent => ({ type: "message_start", message: message([], { stop_reason: null, usage: usage({ output_tokens: 1, ...u }) }) });
const delta = (stop: Message["stop_reason"], out: number, details: Message["stop_details"] = null): RawMessageStreamEvent => ({
  type: "message_delta",
  delta: { stop_reason: stop, stop_sequence: null, stop_details: details, container: null },
  usage: { output_tokens: out, input_tokens: null, cache_creation_input_tokens: null, cache_read_input_tokens: null, output_tokens_details: null, server_tool_use: null },
});
const blockStart = (index: number, content_block: Extract<RawMessageStreamEvent, { type: "content_block_start" }>["content_block"]): RawMessageStreamEvent => ({ type: "content_block_start", index, content_block });
const text = (index: number, t: string): RawMessageStreamEvent => ({ type: "content_block_delta", index, delta: { type: "text_delta", text: t } });
const stop = (index: number): RawMessageStreamEvent => ({ type: "content_block_stop", index });

function run(events: RawMessageStreamEvent[], opts: AnswerOptions = {}, end: (t: AnthropicStreamTranslator) => StreamEvent[] = (t) => t.finish()) {
  const t = new AnthropicStreamTranslator(skeleton(), sequentialIds(), CLOCK, opts);
  const out = [...t.start()];
  for (const e of events) out.push(...t.push(e));
  out.push(...end(t));
  const summary = assertResponsesGrammar(out);
  return { t, out, types: out.map((e) => e.type), summary, terminal: out.at(-1)! };
}

describe("anthropic stream", () => {
  it("text: the Responses text grammar, usage with the cache counted in", async () => {
    const { out, types, terminal } = run([start({ input_tokens: 5, cache_read_input_tokens: 40 }), blockStart(0, { type: "text", text: "", citations: null }), { type: "ping" } as never, text(0, "He"), text(0, "llo"), stop(0), delta("end_turn", 9)]);
    expect(types).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
    const resp = terminal.response as { usage: Record<string, unknown>; output: Item[] };
    expect(outputText(resp)).toBe("Hello");
    expect(terminal.response).toMatchObject({ status: "completed", completed_at: 1_700_000_100 });
    expect(out.slice(0, 2).map((e) => (e.response as { completed_at: unknown }).completed_at)).toEqual([null, null]);
    expect(resp.usage).toMatchObject({ input_tokens: 45, input_tokens_details: { cached_tokens: 40 }, output_tokens: 9, total_tokens: 54 });
    const sdk = await runThroughOpenAISdk(out);
    expect(sdk.final.output_text).toBe("Hello");
  });

  it("thinking then a tool call: reasoning item closed with the signature, arguments streamed", async () => {
    const { out, summary } = run([
      start(),
      blockStart(0, { type: "thinking", thinking: "", signature: "" }),
      { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "I should " } },
      { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "call it." } },
      { type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: SIG } },
      stop(0),
      blockStart(1, { type: "tool_use", id: "toolu_9", name: "get_weather", input: {}, caller: { type: "direct" } }),
      { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: '{"city":' } },
      { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: '"Paris"}' } },
      stop(1),
      delta("tool_use", 30),
    ]);
    const [reasoning, call] = summary.items;
    expect(reasoning).toMatchObject({ type: "reasoning", content: [{ type: "reasoning_text", text: "I should call it." }] });
    expect(decodeThinking(reasoning!.encrypted_content)).toEqual({ type: "thinking", thinking: "I should call it.", signature: SIG });
    expect(call).toMatchObject({ type: "function_call", call_id: "toolu_9", name: "get_weather", arguments: '{"city":"Paris"}', status: "completed" });
    expect(out.some((e) => e.type === "response.reasoning_text.delta")).toBe(true);
    const sdk = await runThroughOpenAISdk(out);
    expect(sdk.final.output.map((i: { type: string }) => i.type)).toEqual(["reasoning", "function_call"]);
  });

  it("a freeform custom tool's call streams its input as it decodes (escapes split across fragments), JSON and stream alike", async () => {
    const toolNames = { fromChat: { apply_patch: { name: "apply_patch", custom: true as const } }, toChat: {} };
    const input = 'line "one"\n\u00e9 end';
    const json = JSON.stringify({ input }).replace("é", "\\u00e9");
    const cut = json.indexOf("\\u") + 3; // inside the \u escape
    const { out, summary } = run(
      [
        start(),
        blockStart(0, { type: "tool_use", id: "toolu_p", name: "apply_patch", input: {}, caller: { type: "direct" } }),
        { type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: json.slice(0, cut) } },
        { type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: json.slice(cut) } },
        stop(0),
        delta("tool_use", 12),
      ],
      { toolNames },
    );
    expect(summary.items[0]).toMatchObject({ type: "custom_tool_call", call_id: "toolu_p", name: "apply_patch", input, status: "completed" });
    const deltas = out.filter((e) => e.type === "response.custom_tool_call_input.delta").map((e) => (e as unknown as { delta: string }).delta);
    expect(deltas.length).toBe(2);
    expect(deltas.join("")).toBe(input);
    expect(out.find((e) => e.type === "response.custom_tool_call_input.done")).toMatchObject({ input });
    expect(out.some((e) => e.type.startsWith("response.function_call_arguments"))).toBe(false);
    const sdk = await runThroughOpenAISdk(out);
    expect(sdk.final.output[0]).toMatchObject({ type: "custom_tool_call", input });
    const r = messageToResponse(message([{ type: "tool_use", id: "toolu_p", name: "apply_patch", input: { input }, caller: { type: "direct" } }], { stop_reason: "tool_use" }), skeleton(), sequentialIds(), CLOCK, { toolNames });
    expect(r.output[0]).toMatchObject({ type: "custom_tool_call", id: expect.stringMatching(/^ctc_/), call_id: "toolu_p", input });
  });

  it("summary mode, redacted thinking, a tool without input, and the answer tool as text", () => {
    const { summary, out } = run(
      [
        start(),
        blockStart(0, { type: "thinking", thinking: "", signature: "" }),
        { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "sum" } },
        stop(0),
        blockStart(1, { type: "redacted_thinking", data: "opaque" }),
        stop(1),
        blockStart(2, { type: "tool_use", id: "t1", name: "ping", input: {}, caller: { type: "direct" } }),
        stop(2),
        blockStart(3, { type: "tool_use", id: "t2", name: "answer", input: {}, caller: { type: "direct" } }),
        { type: "content_block_delta", index: 3, delta: { type: "input_json_delta", partial_json: '{"a":1}' } },
        stop(3),
        delta("tool_use", 3),
      ],
      { thinkingAsSummary: true, answerTool: "answer" },
    );
    expect(out.some((e) => e.type === "response.reasoning_summary_text.delta")).toBe(true);
    expect(summary.items.map((i) => i.type)).toEqual(["reasoning", "reasoning", "function_call", "message"]);
    expect(summary.items[0]).toMatchObject({ summary: [{ type: "summary_text", text: "sum" }] });
    expect(summary.items[2]).toMatchObject({ name: "ping", arguments: "{}" });
    expect(outputText({ output: summary.items })).toBe('{"a":1}');
    const empty = run([start(), blockStart(0, { type: "tool_use", id: "t3", name: "answer", input: {}, caller: { type: "direct" } }), stop(0), delta("tool_use", 1)], { answerTool: "answer" });
    expect(outputText({ output: empty.summary.items })).toBe("{}");
  });

  it("max_tokens ends incomplete; a refusal adds a refusal part", () => {
    const cut = run([start(), blockStart(0, { type: "text", text: "", citations: null }), text(0, "part"), stop(0), delta("max_tokens", 4)]);
    expect(cut.terminal).toMatchObject({ type: "response.incomplete", response: { completed_at: null, incomplete_details: { reason: "max_output_tokens" } } });
    const refused = run([start(), delta("refusal", 1, { type: "refusal", category: null, explanation: "Not this." })]);
    expect(refused.types).toContain("response.refusal.done");
    expect(refused.summary.items[0]).toMatchObject({ content: [{ type: "refusal", refusal: "Not this." }] });
  });

  it("a mid-stream failure closes open items and ends in response.failed; cancel ends with no terminal event", () => {
    const failed = run([start(), blockStart(0, { type: "text", text: "", citations: null }), text(0, "hal")], {}, (t) => t.fail({ code: "server_error", message: "Overloaded" }));
    expect(failed.terminal).toMatchObject({ type: "response.failed", response: { status: "failed", completed_at: null, error: { code: "server_error", message: "Overloaded" } } });
    expect(failed.summary.items[0]).toMatchObject({ status: "incomplete" });
    const t = new AnthropicStreamTranslator(skeleton(), sequentialIds(), CLOCK);
    t.start();
    t.push(start());
    t.push(blockStart(0, { type: "text", text: "", citations: null }));
    t.push(text(0, "x"));
    const tail = t.cancel();
    expect(tail.map((e) => e.type)).toEqual(["response.output_text.done", "response.content_part.done", "response.output_item.done"]);
    expect(t.response.status).toBe("cancelled");
  });
});
