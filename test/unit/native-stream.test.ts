import type { Response as OpenAIResponse, ResponseFunctionToolCall, ResponseOutputMessage, ResponseReasoningItem } from "openai/resources/responses/responses";
import { describe, expect, it } from "vitest";
import { NativeStreamMachine } from "../../src/translate/openai/stream.js";
import { applyRouterFields } from "../../src/translate/openai/rewrite.js";
import { responseSkeleton } from "../../src/translate/skeleton.js";
import { responseToEvents } from "../../src/translate/replay.js";
import type { Item, ResponseObject, StreamEvent } from "../../src/wire/types.js";
import { assertResponsesGrammar, runThroughOpenAISdk } from "../helpers/grammar.js";
import { nativeEvents, nativeResponse } from "../helpers/mock-upstream.js";

const defaults = responseSkeleton({ model: "gpt-4.1" }, { id: "resp_router", createdAt: 5, model: "gpt-4.1", status: "in_progress" });
const fields = { id: "resp_router", previousResponseId: null, store: true, background: false, hideEncryptedReasoning: false, defaults, clock: () => 1_700_000_100 };
const machine = (scrub?: (s: string) => string) => new NativeStreamMachine(fields, { scrub });

/** An upstream Response with a reasoning item, a function call and a message (OpenAI's own grammar via replay). */
function upstreamResponse(): ResponseObject {
  const base = nativeResponse("Hello there, world", "gpt-4.1", "resp_up");
  const output: Item[] = [
    { id: "rs_1", type: "reasoning", summary: [{ type: "summary_text", text: "thinking hard" }] },
    { id: "fc_1", type: "function_call", status: "completed", call_id: "call_1", name: "weather", arguments: '{"city":"Paris"}' },
    ...(base.output as Item[]),
  ];
  return { ...(base as unknown as ResponseObject), output };
}

/** Pushes upstream frames (raw text, as they arrive) and collects what the client sees. */
function feed(m: NativeStreamMachine, upstream: StreamEvent[]): { events: StreamEvent[]; terminal: boolean } {
  const events: StreamEvent[] = [];
  for (const ev of upstream) {
    const out = m.push(ev.type, JSON.stringify(ev));
    events.push(JSON.parse(out.data) as StreamEvent);
    if (out.terminal) return { events, terminal: true };
  }
  return { events, terminal: false };
}

const upTo = (events: StreamEvent[], pred: (e: StreamEvent) => boolean) => events.slice(0, events.findIndex(pred) + 1);

describe("NativeStreamMachine", () => {
  it("passes a complete stream through with the router's id in every event, snapshots filled from the skeleton", async () => {
    const m = machine();
    const upstream = nativeEvents(nativeResponse("Hello from upstream", "gpt-4.1", "resp_up")).map((f) => f.data as StreamEvent);
    const { events, terminal } = feed(m, upstream);
    expect(terminal).toBe(true);
    expect(JSON.stringify(events)).not.toContain("resp_up");
    assertResponsesGrammar(events);
    const { final } = await runThroughOpenAISdk(events);
    expect(final.output_text).toBe("Hello from upstream");
    for (const e of events.filter((e) => "response" in e)) {
      const r = e.response as OpenAIResponse;
      expect(r.id).toBe("resp_router");
      expect(r.text?.verbosity).toBe("medium");
      expect(r).toHaveProperty("service_tier");
    }
    expect(m.response.status).toBe("completed");
    // The upstream sent no completed_at: it completed when the router read it; the snapshots before carry null.
    expect(m.response.completed_at).toBe(1_700_000_100);
    expect(events.filter((e) => e.type === "response.created" || e.type === "response.in_progress").map((e) => (e.response as ResponseObject).completed_at)).toEqual([null, null]);
  });

  it("keeps the upstream's own completed_at and the penalties it echoes; OpenAI's `user: null` is left out", () => {
    const m = machine();
    const resp = { ...nativeResponse("hi", "gpt-4.1", "resp_up"), completed_at: 1_600_000_007, presence_penalty: 0.5, frequency_penalty: 0.25, user: null };
    const { events } = feed(m, nativeEvents(resp).map((f) => f.data as StreamEvent));
    expect(events.at(-1)!.response).toMatchObject({ status: "completed", completed_at: 1_600_000_007, presence_penalty: 0.5, frequency_penalty: 0.25 });
    for (const e of events.filter((e) => "response" in e)) expect(e.response).not.toHaveProperty("user");
    expect(m.response.completed_at).toBe(1_600_000_007);
  });

  it("cancel mid-message: the open text part and message close as incomplete with the text streamed so far", async () => {
    const m = machine();
    const upstream = responseToEvents(upstreamResponse());
    const cut = upTo(upstream, (e) => e.type === "response.output_text.delta");
    const { events } = feed(m, cut);
    const closing = m.cancel();
    expect(closing.map((e) => e.type)).toEqual(["response.output_text.done", "response.content_part.done", "response.output_item.done"]);
    expect(closing.map((e) => e.sequence_number)).toEqual([cut.length, cut.length + 1, cut.length + 2]);
    const response = m.response;
    expect(response.status).toBe("cancelled");
    expect(response.output.map((i) => i.type)).toEqual(["reasoning", "function_call", "message"]);
    const msg = response.output[2] as unknown as ResponseOutputMessage;
    expect(msg.status).toBe("incomplete");
    expect(msg.content).toEqual([{ type: "output_text", text: "Hello there, world", annotations: [], logprobs: [] }]);
    expect(closing.at(-1)!.item).toEqual(msg);
    // The client's stream plus a terminal event carrying the partial response is valid for the SDK.
    const all = [...events, ...closing, { type: "response.incomplete", response, sequence_number: closing.at(-1)!.sequence_number + 1 }];
    expect((await runThroughOpenAISdk(all)).final.output_text).toBe("Hello there, world");
    // As a failure instead, the same closing events make a stream the grammar checker accepts.
    assertResponsesGrammar([...events, ...closing, { type: "response.failed", response: { ...response, status: "failed", error: { code: "server_error", message: "x" } }, sequence_number: all.length - 1 }]);
  });

  it("a stream that dies mid function call closes it in response.failed with the arguments so far", async () => {
    const m = machine();
    const upstream = responseToEvents(upstreamResponse()).flatMap((e) =>
      // Arguments in two deltas, the stream dies after the first.
      e.type === "response.function_call_arguments.delta" ? [{ ...e, delta: '{"city":' }, { ...e, delta: '"Paris"}' }] : [e],
    );
    let seq = 0;
    for (const e of upstream) e.sequence_number = seq++;
    const cut = upTo(upstream, (e) => e.type === "response.function_call_arguments.delta");
    const { events } = feed(m, cut);
    const tail = m.fail({ code: "server_error", message: "The upstream connection was lost mid-stream." });
    expect(tail.map((e) => e.type)).toEqual(["response.function_call_arguments.done", "response.output_item.done", "response.failed"]);
    const failed = tail.at(-1)!.response as OpenAIResponse;
    expect(failed.status).toBe("failed");
    expect(failed.error).toEqual({ code: "server_error", message: "The upstream connection was lost mid-stream." });
    const call = failed.output[1] as ResponseFunctionToolCall;
    expect(call).toMatchObject({ type: "function_call", status: "incomplete", arguments: '{"city":', name: "weather" });
    expect((failed.output[0] as ResponseReasoningItem).summary).toEqual([{ type: "summary_text", text: "thinking hard" }]);
    const all = [...events, ...tail];
    assertResponsesGrammar(all);
    await runThroughOpenAISdk(all);
    expect(m.cancel()).toEqual([]);
  });

  it("cancel mid reasoning summary closes the summary part and the reasoning item", async () => {
    const m = machine();
    const cut = upTo(responseToEvents(upstreamResponse()), (e) => e.type === "response.reasoning_summary_text.delta");
    const { events } = feed(m, cut);
    const closing = m.cancel();
    expect(closing.map((e) => e.type)).toEqual(["response.reasoning_summary_text.done", "response.reasoning_summary_part.done", "response.output_item.done"]);
    expect(m.response.output).toEqual([{ id: "rs_1", type: "reasoning", summary: [{ type: "summary_text", text: "thinking hard" }], status: "incomplete" }]);
    await runThroughOpenAISdk([...events, ...closing, { type: "response.incomplete", response: m.response, sequence_number: closing.at(-1)!.sequence_number + 1 }]);
  });

  it("an upstream that closes without a terminal event ends in response.failed; finished items are kept", () => {
    const m = machine();
    const upstream = responseToEvents(upstreamResponse());
    feed(m, upTo(upstream, (e) => e.type === "response.output_item.done" && e.output_index === 1));
    const tail = m.finish();
    expect(tail.map((e) => e.type)).toEqual(["response.failed"]);
    expect((tail[0]!.response as ResponseObject).completed_at).toBeNull();
    expect((tail[0]!.response as ResponseObject).output.map((i) => i.status ?? "none")).toEqual(["none", "completed"]);
  });

  it("cancel before any output keeps the skeleton's fields and an empty output", () => {
    const m = machine();
    expect(m.cancel()).toEqual([]);
    expect(m.response).toMatchObject({ id: "resp_router", status: "cancelled", output: [], text: { verbosity: "medium" } });
  });

  it("forwards output_item events as the upstream's own text; the item is parsed only when the stream stops mid-way", () => {
    const m = machine();
    // Text the router would not write itself (spaces, an escaped character): it must come out as it went in.
    const added = '{"type":"response.output_item.added", "output_index":0,"item":{"id":"msg_1","type":"message","status":"in_progress","role":"assistant","content":[],"note":"caf\\u00e9"},"sequence_number":3}';
    const out = m.push("response.output_item.added", added);
    expect(out).toEqual({ type: "response.output_item.added", data: added, terminal: false });
    expect(m.sequence).toBe(4);
    const delta = '{"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":"Hi","sequence_number":4}';
    m.push("response.content_part.added", '{"type":"response.content_part.added","item_id":"msg_1","output_index":0,"content_index":0,"part":{"type":"output_text","text":"","annotations":[]},"sequence_number":4}');
    m.push("response.output_text.delta", delta.replace('"sequence_number":4', '"sequence_number":5'));
    const closing = m.cancel();
    expect(closing.map((e) => e.type)).toEqual(["response.output_text.done", "response.content_part.done", "response.output_item.done"]);
    expect(m.response.output).toEqual([{ id: "msg_1", type: "message", status: "incomplete", role: "assistant", content: [{ type: "output_text", text: "Hi", annotations: [] }], note: "café" }]);
  });

  it("a finished item passed as text is parsed for a response that ends without a terminal event", () => {
    const m = machine();
    const done = { type: "response.output_item.done", output_index: 1, item: { id: "fc_1", type: "function_call", status: "completed", call_id: "c1", name: "f", arguments: "{}" }, sequence_number: 7 };
    expect(m.push("response.output_item.done", JSON.stringify(done)).data).toBe(JSON.stringify(done));
    const [failed] = m.finish();
    expect((failed!.response as ResponseObject).output).toEqual([done.item]);
    expect(failed!.sequence_number).toBe(8);
  });

  it("parses an output_item the router must change: hidden encrypted reasoning, a scrubbed key, an ambiguous output_index", () => {
    const reasoning = { type: "response.output_item.done", output_index: 0, item: { id: "rs_1", type: "reasoning", summary: [], encrypted_content: "gAAAA" }, sequence_number: 2 };
    const hiding = new NativeStreamMachine({ ...fields, hideEncryptedReasoning: true });
    const hidden = hiding.push("response.output_item.done", JSON.stringify(reasoning));
    expect(JSON.parse(hidden.data)).toEqual({ ...reasoning, item: { id: "rs_1", type: "reasoning", summary: [] } });
    expect(hiding.cancel()).toEqual([]);
    expect(hiding.response.output).toEqual([reasoning.item]); // the stored copy keeps it

    const scrubbing = machine((s) => s.split("sk-secret").join("[redacted]"));
    const call = { type: "response.output_item.done", output_index: 0, item: { id: "fc_1", type: "function_call", status: "completed", call_id: "c1", name: "f", arguments: '{"k":"sk-secret"}' }, sequence_number: 2 };
    expect(scrubbing.push("response.output_item.done", JSON.stringify(call)).data).toBe(JSON.stringify(call).replace("sk-secret", "[redacted]"));

    // A key named output_index inside the item: the index is taken from the parsed event, not guessed from the text.
    const odd = machine();
    const item = { id: "x_1", type: "custom_thing", data: { output_index: 0 } };
    odd.push("response.output_item.done", JSON.stringify({ type: "response.output_item.done", item, output_index: 2, sequence_number: 9 }));
    odd.cancel();
    expect(odd.response.output).toEqual([item]);
  });

  it("scrubs parsed events (an echoed key) and keeps the final response in step", () => {
    const m = machine((s) => s.split("sk-secret").join("[redacted]"));
    const upstream = nativeEvents(nativeResponse("x", "gpt-4.1", "resp_up")).map((f) => f.data as StreamEvent);
    const last = upstream.at(-1)!;
    (last.response as Record<string, unknown>).instructions = "key sk-secret";
    const { events } = feed(m, upstream);
    expect(JSON.stringify(events)).not.toContain("sk-secret");
    expect(m.response.instructions).toBe("key [redacted]");
  });
});

describe("NativeStreamMachine: a snapshot repeated by the next lifecycle event", () => {
  const snapshot = { ...nativeResponse("", "gpt-4.1", "resp_up"), status: "in_progress", output: [], usage: null };
  /** OpenAI's layout (sequence_number before the response) or the response first. */
  const event = (type: string, seq: number, response: object, seqFirst: boolean) =>
    seqFirst ? JSON.stringify({ type, sequence_number: seq, response }) : JSON.stringify({ type, response, sequence_number: seq });

  for (const seqFirst of [true, false]) {
    it(`gives the client the same text as parsing it would (${seqFirst ? "sequence_number first" : "response first"})`, () => {
      const m = machine();
      m.push("response.created", event("response.created", 0, snapshot, seqFirst));
      const again = m.push("response.in_progress", event("response.in_progress", 1, snapshot, seqFirst));
      // What a machine that parses the same event makes of it.
      const parsed = machine().push("response.in_progress", event("response.in_progress", 1, snapshot, seqFirst));
      expect(again).toMatchObject({ type: "response.in_progress", terminal: false });
      expect(again.data).toBe(parsed.data);
      expect(again.data).not.toContain("resp_up");
      expect(m.sequence).toBe(2);
    });
  }

  it("parses an event whose snapshot changed, or whose layout is another", () => {
    const m = machine();
    m.push("response.created", event("response.created", 0, snapshot, true));
    const changed = m.push("response.in_progress", event("response.in_progress", 1, { ...snapshot, metadata: { k: "v" } }, true));
    expect((JSON.parse(changed.data) as { response: { metadata: object; id: string } }).response).toMatchObject({ metadata: { k: "v" }, id: "resp_router" });
    const spaced = JSON.stringify({ type: "response.in_progress", sequence_number: 2, response: snapshot }, null, 1);
    const out = m.push("response.in_progress", spaced);
    expect(JSON.parse(out.data)).toMatchObject({ type: "response.in_progress", sequence_number: 2, response: { id: "resp_router", metadata: {} } });
    expect(m.sequence).toBe(3);
  });
});

describe("NativeStreamMachine: a lifecycle event's response rewritten on its own", () => {
  const created = { ...nativeResponse("", "gpt-4.1", "resp_up"), status: "in_progress", output: [], usage: null, user: null };
  const completed = nativeResponse("Hello there", "gpt-4.1", "resp_up");
  /** The event as a machine that parses all of it, puts in the router's fields and serialises it again writes it. */
  const reference = (event: Record<string, unknown>) => JSON.stringify({ ...event, response: applyRouterFields(structuredClone(event.response) as Record<string, unknown>, fields) });

  for (const seqFirst of [true, false]) {
    it(`writes what parsing the whole event would (${seqFirst ? "sequence_number first" : "response first"})`, () => {
      const m = machine();
      const events = [
        ["response.created", 0, created],
        ["response.completed", 1, completed],
      ] as const;
      for (const [type, seq, response] of events) {
        const event = seqFirst ? { type, sequence_number: seq, response } : { type, response, sequence_number: seq };
        const out = m.push(type, JSON.stringify(event));
        expect(out.data).toBe(reference(event));
        expect(out.terminal).toBe(type === "response.completed");
      }
      expect(m.response).toEqual(JSON.parse(reference({ response: completed })).response);
      expect(m.response.id).toBe("resp_router");
      expect(m.response).not.toHaveProperty("user");
      expect(m.sequence).toBe(2);
    });
  }

  it("an event with members beside type, sequence_number and response is read whole, and keeps them", () => {
    const m = machine();
    const extra = JSON.stringify({ type: "response.created", sequence_number: 0, response: created, obfuscation: "x1" });
    expect(JSON.parse(m.push("response.created", extra).data)).toMatchObject({ obfuscation: "x1", response: { id: "resp_router" } });
    const between = `{"type":"response.in_progress","response":${JSON.stringify(created)},"note":{"a":1},"sequence_number":1}`;
    expect(JSON.parse(m.push("response.in_progress", between).data)).toMatchObject({ note: { a: 1 }, sequence_number: 1, response: { id: "resp_router" } });
    expect(m.sequence).toBe(2);
  });

  it("a snapshot repeated after one read another way is the machine's snapshot again", () => {
    const m = machine();
    const event = (type: string, seq: number, response: object) => JSON.stringify({ type, sequence_number: seq, response });
    m.push("response.created", event("response.created", 0, created));
    m.push("response.in_progress", JSON.stringify({ type: "response.in_progress", sequence_number: 1, response: { ...created, metadata: { k: "v" } } }, null, 1));
    const again = m.push("response.in_progress", event("response.in_progress", 2, created));
    expect(JSON.parse(again.data)).toMatchObject({ sequence_number: 2, response: { id: "resp_router", metadata: {} } });
    m.cancel();
    expect(m.response.metadata).toEqual({});
  });
});
