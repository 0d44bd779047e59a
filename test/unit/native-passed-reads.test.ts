import type { ResponseOutputMessage } from "openai/resources/responses/responses";
import { describe, expect, it } from "vitest";
import { deltaEvent, passableEvent } from "../../src/translate/openai/passable.js";
import { NativeStreamMachine } from "../../src/translate/openai/stream.js";
import { responseSkeleton } from "../../src/translate/skeleton.js";
import { SseParser, frameBounds } from "../../src/wire/sse-parser.js";
import type { StreamEvent } from "../../src/wire/types.js";
import { assertResponsesGrammar, runThroughOpenAISdk } from "../helpers/grammar.js";
import { nativeEvents, nativeResponse } from "../helpers/mock-upstream.js";

const defaults = responseSkeleton({ model: "gpt-4.1" }, { id: "resp_router", createdAt: 5, model: "gpt-4.1", status: "in_progress" });
const fields = { id: "resp_router", previousResponseId: null, store: true, background: false, hideEncryptedReasoning: false, defaults, clock: () => 1_700_000_100 };

const frame = (ev: { type: string }) => `event: ${ev.type}\ndata: ${JSON.stringify(ev)}\n\n`;
const bytes = (text: string) => Buffer.from(text);
const delta = (text: string, seq: number) => frame({ type: "response.output_text.delta", item_id: "msg_up", output_index: 0, content_index: 0, delta: text, logprobs: [], sequence_number: seq } as never);

/** Which frames of a read pass as bytes: "pass", "read" (on its own), per frame; null when the read is not laid out as the router writes frames. */
function classify(text: string): string[] | null {
  const b = bytes(text);
  const bounds: number[] = [];
  if (!frameBounds(b, bounds)) return null;
  const out: string[] = [];
  for (let i = 0; i < bounds.length; i += 3) out.push(passableEvent(b, bounds[i]!, bounds[i + 1]!) ? (deltaEvent(b, bounds[i + 1]!) ? "delta" : "pass") : "read");
  return out;
}

describe("passable frames: what of a read may reach the client as its bytes", () => {
  it("deltas and the other events the router changes nothing in pass; lifecycle, output_item and error events are read on their own", () => {
    const part = frame({ type: "response.content_part.added", item_id: "msg_up", output_index: 0, content_index: 0, part: { type: "output_text", text: "" }, sequence_number: 3 } as never);
    expect(classify(delta("a", 4) + delta("b", 5))).toEqual(["delta", "delta"]);
    expect(classify(part + frame({ type: "response.output_text.annotation.added" }) + frame({ type: "response.output_text.done" }))).toEqual(["pass", "pass", "pass"]);
    expect(classify(frame({ type: "response.created" }) + frame({ type: "response.in_progress" }) + delta("a", 2) + frame({ type: "response.output_item.added" }) + frame({ type: "error" }) + frame({ type: "response.completed" }))).toEqual(["read", "read", "delta", "read", "read", "read"]);
  });

  it("a read laid out other than the router writes frames is not taken apart at all", () => {
    const refused = [
      `data: ${JSON.stringify({ type: "response.output_text.delta" })}\n\n`, // no event line: the router writes one
      `event: response.output_text.delta\ndata: {"a":\ndata: 1}\n\n`, // data over two lines
      `: keep-alive\n\nevent: response.output_text.delta\ndata: {}\n\n`, // a comment
      `event: response.output_text.delta\nid: 4\ndata: {}\n\n`, // another field
      `event: response.output_text.delta\ndata: {}\n`, // not a whole frame
    ];
    for (const text of refused) expect(classify(delta("a", 1) + text), text).toBeNull();
    expect(classify("")).toBeNull();
  });
});

describe("SseParser.wholeBytes", () => {
  it("only with nothing held: no partial frame, no CR pending, no part of a character in the decoder", () => {
    const p = new SseParser();
    const ignore = () => {};
    expect(p.wholeBytes(bytes(delta("a", 1)))).toBe(true);
    expect(p.wholeBytes(bytes("event: x\ndata: {}\r\n\r\n"))).toBe(false);
    expect(p.wholeBytes(bytes("event: x\ndata: {}\n"))).toBe(false);
    p.push(bytes("event: x\ndata: {"), ignore); // a frame begun
    expect(p.wholeBytes(bytes(delta("a", 1)))).toBe(false);
    p.push(bytes("}\n\n"), ignore);
    expect(p.wholeBytes(bytes(delta("a", 1)))).toBe(true);
    const e = Buffer.from("é");
    p.push(Buffer.concat([bytes(delta("a", 2)), e.subarray(0, 1)]), ignore); // a character split across reads
    expect(p.wholeBytes(bytes(delta("b", 3)))).toBe(false);
    p.push(Buffer.concat([e.subarray(1), bytes("\n\n")]), ignore);
    expect(p.wholeBytes(bytes(delta("c", 4)))).toBe(true);
    p.push(bytes("event: x\ndata: {}\r"), ignore); // its LF may come first in the next read
    expect(p.wholeBytes(bytes("\n\r\n"))).toBe(false);
  });
});

describe("NativeStreamMachine.passRun", () => {
  const upstream = nativeEvents(nativeResponse("w0 w1 w2 w3 ", "gpt-4.1", "resp_up"), ["w0 ", "w1 ", "w2 ", "w3 "]).map((f) => ({ type: f.event, ...(f.data as object) }) as StreamEvent);
  const firstDelta = upstream.findIndex((e) => e.type === "response.output_text.delta");
  const run = (m: NativeStreamMachine, text: string, prefix = "") => m.passRun(bytes(prefix + text), prefix.length, prefix.length + Buffer.byteLength(text));

  it("passes nothing before the upstream's id is known, nor a run that names it, nor after the end", () => {
    const m = new NativeStreamMachine(fields);
    expect(run(m, frame(upstream[firstDelta]!))).toBe(false);
    for (const ev of upstream.slice(0, firstDelta)) m.push(ev.type, JSON.stringify(ev));
    expect(run(m, frame({ type: "response.output_text.delta", delta: "see resp_up", sequence_number: 9 } as never))).toBe(false);
    // The id after the run (a later lifecycle event of the same read) does not matter.
    const after = bytes(frame(upstream[firstDelta]!) + frame({ type: "response.completed", response: { id: "resp_up" } } as never));
    expect(m.passRun(after, 0, Buffer.byteLength(frame(upstream[firstDelta]!)))).toBe(true);
    expect(m.sequence).toBe((upstream[firstDelta] as { sequence_number: number }).sequence_number + 1);
    m.fail({ code: "server_error", message: "gone" });
    expect(run(m, frame(upstream[firstDelta + 1]!))).toBe(false);
  });

  it("keeps a copy of an open item's passed bytes, not a view of the read (which would keep the socket's read buffer alive)", () => {
    const m = new NativeStreamMachine(fields);
    for (const ev of upstream.slice(0, firstDelta)) m.push(ev.type, JSON.stringify(ev));
    const read = bytes(frame(upstream[firstDelta]!));
    expect(m.passRun(read, 0, read.length)).toBe(true);
    read.fill(32); // the socket's buffer is reused for later reads
    m.fail({ code: "server_error", message: "gone" });
    expect(((m.response.output as unknown[])[0] as ResponseOutputMessage).content).toEqual([expect.objectContaining({ text: "w0 " })]);
  });

  it("an open item rebuilt from passed bytes gets each frame's text, multi-byte characters whole", () => {
    const m = new NativeStreamMachine(fields);
    for (const ev of upstream.slice(0, firstDelta)) m.push(ev.type, JSON.stringify(ev));
    const read = bytes(delta("é", 10) + delta("🎉b", 11));
    expect(m.passRun(read, 0, read.length)).toBe(true);
    m.fail({ code: "server_error", message: "gone" });
    expect(((m.response.output as unknown[])[0] as ResponseOutputMessage).content).toEqual([expect.objectContaining({ text: "é🎉b" })]);
  });

  it("a stream that dies after runs passed as bytes closes its open message with all of its text, numbered on", async () => {
    const m = new NativeStreamMachine(fields);
    const seen: StreamEvent[] = [];
    for (const ev of upstream.slice(0, firstDelta + 1)) seen.push(JSON.parse(m.push(ev.type, JSON.stringify(ev)).data) as StreamEvent);
    // Two deltas in one run, in the middle of a read, passed as bytes; then one frame by frame.
    const passed = upstream.slice(firstDelta + 1, firstDelta + 3);
    expect(run(m, passed.map(frame).join(""), frame({ type: "response.in_progress" }))).toBe(true);
    seen.push(...passed);
    expect(m.sequence).toBe((passed[1] as { sequence_number: number }).sequence_number + 1);
    const last = upstream[firstDelta + 3]!;
    seen.push(JSON.parse(m.push(last.type, JSON.stringify(last)).data) as StreamEvent);
    const closing = m.fail({ code: "server_error", message: "upstream went away" });
    const events = [...seen, ...closing];
    assertResponsesGrammar(events as never);
    expect(closing.map((e) => e.sequence_number)).toEqual(closing.map((_, i) => (last as { sequence_number: number }).sequence_number + 1 + i));
    const failed = m.response;
    expect(((failed.output as unknown[])[0] as ResponseOutputMessage).content).toEqual([expect.objectContaining({ type: "output_text", text: "w0 w1 w2 w3 " })]);
    expect((await runThroughOpenAISdk(events as never)).final.output_text).toBe("w0 w1 w2 w3 ");
  });
});
