import { describe, expect, it } from "vitest";
import { sequentialIds } from "../../src/wire/ids.js";
import { responseToEvents } from "../../src/translate/replay.js";
import { chatCompletionToResponse } from "../../src/translate/chat/response.js";
import { outputText, responseSkeleton } from "../../src/translate/skeleton.js";
import { ChatStreamTranslator } from "../../src/translate/chat/stream.js";
import type { Item, ResponseObject, StreamEvent } from "../../src/wire/types.js";
import { assertResponsesGrammar, runThroughOpenAISdk } from "../helpers/grammar.js";

/** The translators' clock: when a response completes (`completed_at`). */
const CLOCK = () => 1_700_000_100;

const skeleton = () => responseSkeleton({ model: "m" }, { id: "resp_1", createdAt: 1, model: "m", status: "in_progress" });

function finished(message: Parameters<typeof chatCompletionToResponse>[0]["choices"][0]["message"], finish = "stop"): ResponseObject {
  return chatCompletionToResponse({ choices: [{ message, finish_reason: finish }], usage: { prompt_tokens: 2, completion_tokens: 3 } }, skeleton(), sequentialIds(), CLOCK);
}

describe("responseToEvents", () => {
  it("replays a cached text response with the live grammar", async () => {
    const response = finished({ content: "from-cache" });
    const events = responseToEvents(response);
    expect(events.map((e) => e.type)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
    const { terminal } = assertResponsesGrammar(events);
    expect(terminal!.response).toBe(response);
    expect(events.filter((e) => e.type === "response.output_text.delta").map((e) => e.delta).join("")).toBe("from-cache");
    expect(outputText((events[0]!.response as ResponseObject))).toBe("");
    const sdk = await runThroughOpenAISdk(events);
    expect(sdk.final.output_text).toBe("from-cache");
  });

  it("matches the live stream's type sequence for the same content", () => {
    const t = new ChatStreamTranslator(skeleton(), sequentialIds(), CLOCK);
    const live: StreamEvent[] = [
      ...t.start(),
      ...t.push({ choices: [{ index: 0, delta: { reasoning_content: "r" } }] }),
      ...t.push({ choices: [{ index: 0, delta: { content: "text" } }] }),
      ...t.push({ choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: "c1", function: { name: "f", arguments: "{}" } }] } }] }),
      ...t.push({ choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] }),
      ...t.finish(),
    ];
    const replay = responseToEvents(t.response);
    assertResponsesGrammar(replay);
    expect(replay.map((e) => e.type)).toEqual(live.map((e) => e.type));
    expect(replay.at(-1)!.response).toEqual(live.at(-1)!.response);
  });

  it("replays reasoning summaries, refusal, function calls and other item types", async () => {
    const response: ResponseObject = {
      ...skeleton(),
      status: "completed",
      usage: { input_tokens: 1, input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 }, output_tokens: 1, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 2 },
      output: [
        { id: "rs_1", type: "reasoning", summary: [{ type: "summary_text", text: "s1" }, { type: "summary_text", text: "s2" }], encrypted_content: "enc" },
        { id: "ws_1", type: "web_search_call", status: "completed", action: { type: "search", query: "q" } },
        { id: "msg_1", type: "message", role: "assistant", status: "completed", content: [{ type: "refusal", refusal: "no" }] },
        { id: "fc_1", type: "function_call", status: "completed", call_id: "c", name: "lookup", namespace: "crm", arguments: '{"a":1}' },
      ],
    };
    const events = responseToEvents(response, 10);
    const { items } = assertResponsesGrammar(events, { startSequence: 10 });
    expect(items).toEqual(response.output);
    expect(events.filter((e) => e.type === "response.reasoning_summary_text.delta").map((e) => e.delta)).toEqual(["s1", "s2"]);
    const sdk = await runThroughOpenAISdk(events);
    expect(sdk.final.output).toHaveLength(4);
  });

  it("incomplete and failed responses end with their own terminal event; cancelled with none", () => {
    const inc = finished({ content: "tru" }, "length");
    expect(responseToEvents(inc).at(-1)!.type).toBe("response.incomplete");
    const failed: ResponseObject = { ...skeleton(), status: "failed", error: { code: "server_error", message: "x" }, output: [] };
    const fe = responseToEvents(failed);
    expect(fe.map((e) => e.type)).toEqual(["response.created", "response.in_progress", "response.failed"]);
    assertResponsesGrammar(fe);
    const cancelled: ResponseObject = { ...finished({ content: "part" }), status: "cancelled" };
    const ce = responseToEvents(cancelled);
    expect(ce.at(-1)!.type).toBe("response.output_item.done");
    assertResponsesGrammar(ce);
  });

  it("an empty-text part emits no delta but still a done", () => {
    const response: ResponseObject = {
      ...finished({ content: "x" }),
      output: [{ id: "msg_1", type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: "", annotations: [], logprobs: [] }] } as Item],
    };
    const events = responseToEvents(response);
    expect(events.some((e) => e.type === "response.output_text.delta")).toBe(false);
    assertResponsesGrammar(events);
  });
});

describe("assertResponsesGrammar catches what strict clients reject", () => {
  const good = () => {
    const t = new ChatStreamTranslator(skeleton(), sequentialIds(), CLOCK);
    return [...t.start(), ...t.push({ choices: [{ index: 0, delta: { content: "hi" } }] }), ...t.finish()];
  };
  const mutate = (fn: (events: StreamEvent[]) => void) => {
    const events = good().map((e) => ({ ...e }));
    fn(events);
    return () => assertResponsesGrammar(events);
  };

  it("accepts the good stream", () => expect(() => assertResponsesGrammar(good())).not.toThrow());
  it("empty stream", () => expect(() => assertResponsesGrammar([])).toThrow(/no events/));
  it("first event not created", () => expect(mutate((e) => e.shift())).toThrow(/response.created/));
  it("gap in sequence numbers", () => expect(mutate((e) => (e[3]!.sequence_number = 9))).toThrow(/sequence_number/));
  it("wrong item_id", () => expect(mutate((e) => (e[3]!.item_id = "msg_x"))).toThrow(/item_id/));
  it("wrong output_index on add", () => expect(mutate((e) => (e[2]!.output_index = 1))).toThrow(/output_index/));
  it("wrong content_index", () => expect(mutate((e) => (e[3]!.content_index = 1))).toThrow(/content_index/));
  it("error event", () => expect(mutate((e) => e.splice(4, 0, { type: "error", code: "x", message: "m", sequence_number: 4 }))).toThrow());
  it("unknown event type", () => expect(mutate((e) => (e[4]!.type = "response.mystery"))).toThrow(/unknown event/));
  it("completed output differs from done items", () =>
    expect(mutate((e) => (e[e.length - 1] = { ...e[e.length - 1]!, response: { ...(e[e.length - 1]!.response as object), output: [] } }))).toThrow(/differs/));
  it("terminal not last", () => expect(mutate((e) => e.push({ ...e[4]!, sequence_number: e.length }))).toThrow(/after the terminal/));
});
