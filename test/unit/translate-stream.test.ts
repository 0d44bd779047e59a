import { describe, expect, it } from "vitest";
import { sequentialIds } from "../../src/wire/ids.js";
import type { ChatChunkLike, ChatToolCallDelta, ToolNameMap } from "../../src/translate/chat/chat-types.js";
import { responsesToChatRequest } from "../../src/translate/chat/request.js";
import { outputText, responseSkeleton } from "../../src/translate/skeleton.js";
import { ChatStreamTranslator } from "../../src/translate/chat/stream.js";
import type { Item, StreamEvent } from "../../src/wire/types.js";
import { assertResponsesGrammar, runThroughOpenAISdk } from "../helpers/grammar.js";

/** The translators' clock: when a response completes (`completed_at`). */
const CLOCK = () => 1_700_000_100;

const skeleton = () => responseSkeleton({ model: "m" }, { id: "resp_1", createdAt: 1, model: "m", status: "in_progress" });
const text = (content: string, logprobs?: unknown): ChatChunkLike => ({
  choices: [{ index: 0, delta: { content }, ...(logprobs ? { logprobs: { content: logprobs as never } } : {}) }],
});
const tool = (...calls: ChatToolCallDelta[]): ChatChunkLike => ({ choices: [{ index: 0, delta: { tool_calls: calls } }] });
const finish = (reason: string): ChatChunkLike => ({ choices: [{ index: 0, delta: {}, finish_reason: reason }] });
const usage = (p: number, c: number, extra: object = {}): ChatChunkLike => ({ choices: [], usage: { prompt_tokens: p, completion_tokens: c, total_tokens: p + c, ...extra } });

function run(chunks: ChatChunkLike[], toolNames?: ToolNameMap, end: (t: ChatStreamTranslator) => StreamEvent[] = (t) => t.finish()) {
  const t = new ChatStreamTranslator(skeleton(), sequentialIds(), CLOCK, toolNames);
  const events = [...t.start()];
  for (const c of chunks) events.push(...t.push(c));
  events.push(...end(t));
  const summary = assertResponsesGrammar(events);
  return { t, events, types: events.map((e) => e.type), summary, terminal: events[events.length - 1]! };
}

const outputOf = (e: StreamEvent) => (e.response as { output: Item[] }).output;

describe("ChatStreamTranslator: text", () => {
  // The protocol note's 9-step plain-text grammar; with step 5 twice (two deltas) that is
  // 10 events, sequence numbers 0..9 (created AND in_progress, as OpenAI sends them).
  it("emits the protocol's 9-step text sequence for two deltas, contiguous sequence numbers", async () => {
    const { events, types, terminal } = run([{ choices: [{ index: 0, delta: { role: "assistant", content: "" } }] }, text("He"), text("llo"), finish("stop"), usage(7, 5, { prompt_tokens_details: { cached_tokens: 2 }, completion_tokens_details: { reasoning_tokens: 3 } })]);
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
    expect(events.map((e) => e.sequence_number)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(events[4]).toEqual({ type: "response.output_text.delta", item_id: "msg_1", output_index: 0, content_index: 0, delta: "He", logprobs: [], sequence_number: 4 });
    const resp = terminal.response as { output: Item[]; usage: unknown; status: string };
    expect(resp.status).toBe("completed");
    expect(outputText(resp)).toBe("Hello");
    expect(resp.output[0]).toEqual({
      id: "msg_1", type: "message", status: "completed", role: "assistant",
      content: [{ type: "output_text", text: "Hello", annotations: [], logprobs: [] }],
    });
    expect(resp.usage).toEqual({ input_tokens: 7, input_tokens_details: { cached_tokens: 2, cache_write_tokens: 0 }, output_tokens: 5, output_tokens_details: { reasoning_tokens: 3 }, total_tokens: 12 });
    const sdk = await runThroughOpenAISdk(events);
    expect(sdk.final.output_text).toBe("Hello");
    expect(sdk.final.usage?.total_tokens).toBe(12);
  });

  it("created/in_progress carry an empty in_progress snapshot; the event objects never change later", () => {
    const { events } = run([text("a"), text("b")]);
    for (const e of events.slice(0, 2)) {
      expect((e.response as { status: string }).status).toBe("in_progress");
      expect(outputOf(e)).toEqual([]);
      expect((e.response as { usage: unknown }).usage).toBeNull();
    }
    expect((events[2]!.item as Item).content).toEqual([]);
    expect((events[3]!.part as Item).text).toBe("");
  });

  it("maps logprobs onto each delta and onto the final part", async () => {
    const lp = (token: string, logprob: number, b: number) => [{ token, logprob, bytes: [b], top_logprobs: [{ token, logprob, bytes: [b] }] }];
    const { events, terminal } = run([text("Hi", lp("Hi", -0.5, 1)), text(" there", lp(" there", -0.25, 2))]);
    const deltas = events.filter((e) => e.type === "response.output_text.delta");
    expect(deltas.map((d) => (d.logprobs as { token: string }[]).map((l) => l.token))).toEqual([["Hi"], [" there"]]);
    expect(deltas[0]!.logprobs).toEqual([{ token: "Hi", logprob: -0.5, bytes: [1], top_logprobs: [{ token: "Hi", logprob: -0.5, bytes: [1] }] }]);
    const done = events.find((e) => e.type === "response.output_text.done")!;
    expect((done.logprobs as { token: string }[]).map((l) => l.token)).toEqual(["Hi", " there"]);
    const part = (outputOf(terminal)[0]!.content as Item[])[0]!;
    expect(part.text).toBe("Hi there");
    expect((part.logprobs as { token: string }[]).map((l) => l.token)).toEqual(["Hi", " there"]);
    await runThroughOpenAISdk(events);
  });

  it("streams a refusal as a refusal part", async () => {
    const { types, terminal, events } = run([{ choices: [{ index: 0, delta: { refusal: "No" } }] }, { choices: [{ index: 0, delta: { refusal: "Thanks" } }] }]);
    expect(types.slice(2)).toEqual([
      "response.output_item.added",
      "response.content_part.added",
      "response.refusal.delta",
      "response.refusal.delta",
      "response.refusal.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expect((events[3]!.part as Item)).toEqual({ type: "refusal", refusal: "" });
    expect(outputOf(terminal)[0]!.content).toEqual([{ type: "refusal", refusal: "NoThanks" }]);
    await runThroughOpenAISdk(events);
  });

  it("text then refusal become two parts of one message", () => {
    const { terminal } = run([text("I "), { choices: [{ index: 0, delta: { refusal: "can't" } }] }]);
    expect(outputOf(terminal)).toHaveLength(1);
    expect((outputOf(terminal)[0]!.content as Item[]).map((p) => p.type)).toEqual(["output_text", "refusal"]);
  });
});

describe("ChatStreamTranslator: reasoning", () => {
  it("closes the reasoning item before the text message opens (reasoning_content and reasoning)", async () => {
    const { types, terminal, events } = run([
      { choices: [{ index: 0, delta: { reasoning_content: "think " } }] },
      { choices: [{ index: 0, delta: { reasoning: "more" } }] },
      text("answer"),
    ]);
    expect(types.slice(2, 11)).toEqual([
      "response.output_item.added",
      "response.content_part.added",
      "response.reasoning_text.delta",
      "response.reasoning_text.delta",
      "response.reasoning_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.output_item.added",
      "response.content_part.added",
    ]);
    expect(events[2]!.item).toEqual({ id: "rs_1", type: "reasoning", summary: [] });
    const out = outputOf(terminal);
    expect(out[0]).toEqual({ id: "rs_1", type: "reasoning", summary: [], content: [{ type: "reasoning_text", text: "think more" }] });
    expect(out[1]!.type).toBe("message");
    expect(events.filter((e) => e.type === "response.output_item.added").map((e) => e.output_index)).toEqual([0, 1]);
    await runThroughOpenAISdk(events);
  });

  it("takes one of reasoning/reasoning_content when a server sends both", () => {
    const { terminal } = run([{ choices: [{ index: 0, delta: { reasoning_content: "x", reasoning: "x" } }] }]);
    expect(outputOf(terminal)[0]!.content).toEqual([{ type: "reasoning_text", text: "x" }]);
  });
});

describe("ChatStreamTranslator: tool calls", () => {
  it("streams three real-time argument deltas after an empty first fragment", async () => {
    const { events, terminal } = run([
      tool({ index: 0, id: "tool-call-123", type: "function", function: { name: "write_file", arguments: "" } }),
      tool({ index: 0, type: "function", function: { arguments: '{"filename": "' } }),
      tool({ index: 0, type: "function", function: { arguments: 'test.py", "content": "' } }),
      tool({ index: 0, type: "function", function: { arguments: 'print(hello)"}' } }),
      finish("tool_calls"),
    ]);
    const added = events.filter((e) => e.type === "response.output_item.added");
    expect(added).toHaveLength(1);
    expect(added[0]!.item).toEqual({ id: "fc_1", type: "function_call", status: "in_progress", call_id: "tool-call-123", name: "write_file", arguments: "" });
    const deltas = events.filter((e) => e.type === "response.function_call_arguments.delta");
    expect(deltas.map((d) => d.delta)).toEqual(['{"filename": "', 'test.py", "content": "', 'print(hello)"}']);
    expect(new Set(deltas.map((d) => d.item_id))).toEqual(new Set(["fc_1"]));
    expect(deltas.every((d) => d.output_index === 0)).toBe(true);
    const argsDone = events.find((e) => e.type === "response.function_call_arguments.done")!;
    expect(argsDone).toMatchObject({ item_id: "fc_1", output_index: 0, name: "write_file", arguments: '{"filename": "test.py", "content": "print(hello)"}' });
    expect(outputOf(terminal)).toEqual([
      { id: "fc_1", type: "function_call", status: "completed", call_id: "tool-call-123", name: "write_file", arguments: '{"filename": "test.py", "content": "print(hello)"}' },
    ]);
    const sdk = await runThroughOpenAISdk(events);
    expect(sdk.final.output[0]).toMatchObject({ type: "function_call", call_id: "tool-call-123" });
  });

  it("accepts type: null and a call without id (generates call_...)", () => {
    const { terminal } = run([tool({ index: 0, type: null, function: { name: "get_weather", arguments: "{}" } })]);
    const call = outputOf(terminal)[0]!;
    expect(call).toMatchObject({ type: "function_call", name: "get_weather", arguments: "{}", status: "completed" });
    expect(String(call.call_id)).toMatch(/^call_/);
  });

  it("closes text before several tool calls; output indexes 0,1,2 with unique ids", async () => {
    const { events, terminal, types } = run([
      text("Let me check."),
      tool({ index: 0, id: "c1", type: "function", function: { name: "a", arguments: '{"x":' } }),
      tool({ index: 0, function: { arguments: "1}" } }),
      tool({ index: 1, id: "c2", type: "function", function: { name: "b", arguments: "{}" } }),
      finish("tool_calls"),
      usage(3, 4),
    ]);
    const added = events.filter((e) => e.type === "response.output_item.added");
    expect(added.map((e) => e.output_index)).toEqual([0, 1, 2]);
    expect(added.map((e) => (e.item as Item).id)).toEqual(["msg_1", "fc_2", "fc_3"]);
    // message fully closed before the first call opens; call 1 closed before call 2 opens
    expect(types.indexOf("response.output_item.done")).toBeLessThan(types.indexOf("response.output_item.added", 3));
    const order = events.filter((e) => e.type.startsWith("response.output_item")).map((e) => `${e.type.slice(21)}:${e.output_index}`);
    expect(order).toEqual(["added:0", "done:0", "added:1", "done:1", "added:2", "done:2"]);
    expect(outputOf(terminal).map((i) => [i.type, i.call_id ?? null])).toEqual([["message", null], ["function_call", "c1"], ["function_call", "c2"]]);
    await runThroughOpenAISdk(events);
  });

  it("supports interleaved argument fragments for two indexes", async () => {
    const { events, terminal } = run([
      tool({ index: 0, id: "c1", function: { name: "a", arguments: '{"p":' } }),
      tool({ index: 1, id: "c2", function: { name: "b", arguments: '{"q":' } }),
      tool({ index: 0, function: { arguments: "1}" } }),
      tool({ index: 1, function: { arguments: "2}" } }),
    ]);
    expect(outputOf(terminal).map((i) => i.arguments)).toEqual(['{"p":1}', '{"q":2}']);
    const deltas = events.filter((e) => e.type === "response.function_call_arguments.delta");
    expect(deltas.map((d) => `${d.item_id}:${d.delta}`)).toEqual(['fc_1:{"p":', 'fc_2:{"q":', "fc_1:1}", "fc_2:2}"]);
    const sdk = await runThroughOpenAISdk(events);
    expect(sdk.final.output.map((i) => (i as { arguments: string }).arguments)).toEqual(['{"p":1}', '{"q":2}']);
  });

  it("text after tool calls closes them and opens a new message item", async () => {
    const { events, terminal } = run([
      tool({ index: 0, id: "c1", function: { name: "a", arguments: '{"x":' } }),
      text("then text"),
      { choices: [{ index: 0, delta: { reasoning_content: "late thought" } }] },
    ]);
    expect(outputOf(terminal).map((i) => `${i.type}:${i.status ?? "-"}`)).toEqual(["function_call:completed", "message:completed", "reasoning:-"]);
    await runThroughOpenAISdk(events);
  });

  it("gives duplicate backend call ids fresh call_ids", () => {
    const { terminal } = run([
      tool({ index: 0, id: "same", function: { name: "a", arguments: "{}" } }),
      tool({ index: 1, id: "same", function: { name: "b", arguments: "{}" } }),
    ]);
    const ids = outputOf(terminal).map((i) => i.call_id);
    expect(new Set(ids).size).toBe(2);
  });

  it("handles a backend that omits index and repeats id/name in each chunk", () => {
    const { terminal } = run([
      tool({ id: "t1", function: { name: "f", arguments: '{"a":' } }),
      tool({ id: "t1", function: { name: "f", arguments: "1}" } }),
      tool({ id: "t2", function: { name: "g", arguments: "{}" } }),
    ]);
    expect(outputOf(terminal).map((i) => [i.call_id, i.name, i.arguments])).toEqual([["t1", "f", '{"a":1}'], ["t2", "g", "{}"]]);
  });

  it("waits for the name before opening a call", () => {
    const { events, terminal } = run([
      tool({ index: 0, id: "c1", function: { arguments: "" } }),
      tool({ index: 0, function: { name: "late", arguments: "{}" } }),
    ]);
    expect((events.find((e) => e.type === "response.output_item.added")!.item as Item).name).toBe("late");
    expect(outputOf(terminal)[0]).toMatchObject({ name: "late", arguments: "{}", call_id: "c1" });
  });

  it("maps a flattened namespaced name back to {name, namespace}", () => {
    const { toolNames } = responsesToChatRequest(
      { model: "m", tools: [{ type: "namespace", name: "crm", description: "", tools: [{ type: "function", name: "lookup" }] }] },
      [],
      { upstreamModel: "u", stream: true, developerRole: "system", hostedTools: "drop" },
    );
    const { events, terminal } = run([tool({ index: 0, id: "c", function: { name: "crm__lookup", arguments: "{}" } })], toolNames);
    expect(events.find((e) => e.type === "response.output_item.added")!.item).toMatchObject({ name: "lookup", namespace: "crm" });
    expect(events.find((e) => e.type === "response.function_call_arguments.done")!.name).toBe("lookup");
    expect(outputOf(terminal)[0]).toMatchObject({ name: "lookup", namespace: "crm", call_id: "c" });
  });
});

describe("ChatStreamTranslator: terminal states", () => {
  it("finish_reason length -> response.incomplete with max_output_tokens", async () => {
    const { terminal, events } = run([text("trunc"), finish("length")]);
    expect(terminal.type).toBe("response.incomplete");
    expect(terminal.response).toMatchObject({ status: "incomplete", completed_at: null, incomplete_details: { reason: "max_output_tokens" } });
    expect(outputOf(terminal)[0]!.status).toBe("incomplete");
    const sdk = await runThroughOpenAISdk(events);
    expect(sdk.final.status).toBe("incomplete");
  });

  it("content_filter -> incomplete with reason content_filter", () => {
    const { terminal } = run([text("x"), finish("content_filter")]);
    expect(terminal.response).toMatchObject({ status: "incomplete", incomplete_details: { reason: "content_filter" } });
  });

  it("fail() mid-stream closes open items as incomplete and emits response.failed", () => {
    const { terminal, t } = run([text("par"), tool({ index: 0, id: "c", function: { name: "f", arguments: '{"a' } })], undefined, (tr) =>
      tr.fail({ code: "server_error", message: "upstream died" }),
    );
    expect(terminal.type).toBe("response.failed");
    expect(terminal.response).toMatchObject({ status: "failed", completed_at: null, error: { code: "server_error", message: "upstream died" } });
    expect(outputOf(terminal).map((i) => i.status)).toEqual(["completed", "incomplete"]);
    expect(t.response.status).toBe("failed");
    expect(t.push(text("late"))).toEqual([]);
    expect(t.finish()).toEqual([]);
  });

  it("a chunk carrying `error` fails the response", () => {
    const t = new ChatStreamTranslator(skeleton(), sequentialIds(), CLOCK);
    const events = [...t.start(), ...t.push(text("a")), ...t.push({ error: { message: "boom", code: "rate_limit_exceeded" } })];
    assertResponsesGrammar(events);
    expect(events.at(-1)!.response).toMatchObject({ status: "failed", error: { code: "rate_limit_exceeded", message: "boom" } });
  });

  it("cancel() closes open items and returns no terminal event; the snapshot is cancelled", () => {
    const t = new ChatStreamTranslator(skeleton(), sequentialIds(), CLOCK);
    const events = [...t.start(), ...t.push(text("partial"))];
    const closing = t.cancel();
    expect(closing.map((e) => e.type)).toEqual(["response.output_text.done", "response.content_part.done", "response.output_item.done"]);
    expect(t.response.status).toBe("cancelled");
    expect(t.response.completed_at).toBeNull();
    expect(outputText(t.response)).toBe("partial");
    assertResponsesGrammar([...events, ...closing]);
  });

  it("an empty stream still completes, with empty output and zero usage", async () => {
    const { terminal, events } = run([]);
    expect(terminal.type).toBe("response.completed");
    expect(terminal.response).toMatchObject({ status: "completed", completed_at: 1_700_000_100 });
    expect(outputOf(terminal)).toEqual([]);
    expect((terminal.response as { usage: { total_tokens: number } }).usage.total_tokens).toBe(0);
    await runThroughOpenAISdk(events);
  });

  it("push() before start() starts the stream; startSequence offsets every number", () => {
    const t = new ChatStreamTranslator(skeleton(), sequentialIds(), CLOCK, undefined, { startSequence: 5 });
    const events = [...t.push(text("a")), ...t.finish()];
    expect(events[0]!.type).toBe("response.created");
    assertResponsesGrammar(events, { startSequence: 5 });
    expect(t.sequence).toBe(5 + events.length);
  });

  it("a queued skeleton is announced as queued, then in_progress", () => {
    const sk = responseSkeleton({ model: "m", background: true }, { id: "resp_q", createdAt: 1, model: "m", status: "queued" });
    const t = new ChatStreamTranslator(sk, sequentialIds(), CLOCK);
    const events = t.start();
    expect(events.map((e) => (e.response as { status: string }).status)).toEqual(["queued", "in_progress"]);
    expect(events.map((e) => (e.response as { completed_at: unknown }).completed_at)).toEqual([null, null]);
  });

  it("the live snapshot shows text as it streams", () => {
    const t = new ChatStreamTranslator(skeleton(), sequentialIds(), CLOCK);
    t.start();
    t.push(text("Hel"));
    expect(outputText(t.response)).toBe("Hel");
    t.push(text("lo"));
    expect(outputText(t.response)).toBe("Hello");
    expect(t.response.status).toBe("in_progress");
  });
});
