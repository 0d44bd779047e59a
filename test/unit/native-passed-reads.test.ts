import type { ResponseOutputMessage } from "openai/resources/responses/responses";
import { describe, expect, it } from "vitest";
import { passableFrames, passedFrameData } from "../../src/translate/openai/passable.js";
import { NativeStreamMachine } from "../../src/translate/openai/stream.js";
import { responseSkeleton } from "../../src/translate/skeleton.js";
import { SseParser } from "../../src/wire/sse-parser.js";
import type { StreamEvent } from "../../src/wire/types.js";
import { assertResponsesGrammar, runThroughOpenAISdk } from "../helpers/grammar.js";
import { nativeEvents, nativeResponse } from "../helpers/mock-upstream.js";

const defaults = responseSkeleton({ model: "gpt-4.1" }, { id: "resp_router", createdAt: 5, model: "gpt-4.1", status: "in_progress" });
const fields = { id: "resp_router", previousResponseId: null, store: true, background: false, hideEncryptedReasoning: false, defaults, clock: () => 1_700_000_100 };

const frame = (ev: { type: string }) => `event: ${ev.type}\ndata: ${JSON.stringify(ev)}\n\n`;
const bytes = (text: string) => Buffer.from(text);
const delta = (text: string, seq: number) => frame({ type: "response.output_text.delta", item_id: "msg_up", output_index: 0, content_index: 0, delta: text, logprobs: [], sequence_number: seq } as never);

describe("passableFrames: a read that may reach the client as its bytes", () => {
  it("takes deltas and the other events the router changes nothing in, counting frames and telling deltas apart", () => {
    expect(passableFrames(bytes(delta("a", 4) + delta("b", 5)))).toEqual({ frames: 2, delta: true });
    const part = frame({ type: "response.content_part.added", item_id: "msg_up", output_index: 0, content_index: 0, part: { type: "output_text", text: "" }, sequence_number: 3 } as never);
    expect(passableFrames(bytes(part))).toEqual({ frames: 1, delta: false });
    expect(passableFrames(bytes(frame({ type: "response.output_text.annotation.added" })))).toEqual({ frames: 1, delta: false });
  });

  it("refuses any read with a frame the router rewrites, or laid out other than it writes frames", () => {
    const refused = [
      frame({ type: "response.created" }), // lifecycle: the router's id and fields go in
      frame({ type: "response.completed" }),
      frame({ type: "response.output_item.added" }), // items are kept (and may be rewritten)
      frame({ type: "error" }),
      `data: ${JSON.stringify({ type: "response.output_text.delta" })}\n\n`, // no event line: the router writes one
      `event: response.output_text.delta\ndata: {"a":\ndata: 1}\n\n`, // data over two lines
      `: keep-alive\n\nevent: response.output_text.delta\ndata: {}\n\n`, // a comment
      `event: response.output_text.delta\nid: 4\ndata: {}\n\n`, // another field
      `event: response.output_text.delta\ndata: {}\n`, // not a whole frame
    ];
    for (const text of refused) expect(passableFrames(bytes(delta("a", 1) + text)), text).toBeNull();
    expect(passableFrames(bytes(""))).toBeNull();
  });

  it("gives back each frame's data as text (what the frame-by-frame way keeps of an open item)", () => {
    expect(passedFrameData(bytes(delta("é", 4) + delta("b", 5)))).toEqual([JSON.stringify({ type: "response.output_text.delta", item_id: "msg_up", output_index: 0, content_index: 0, delta: "é", logprobs: [], sequence_number: 4 }), JSON.stringify({ type: "response.output_text.delta", item_id: "msg_up", output_index: 0, content_index: 0, delta: "b", logprobs: [], sequence_number: 5 })]);
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

describe("NativeStreamMachine.passRead", () => {
  const upstream = nativeEvents(nativeResponse("w0 w1 w2 w3 ", "gpt-4.1", "resp_up"), ["w0 ", "w1 ", "w2 ", "w3 "]).map((f) => ({ type: f.event, ...(f.data as object) }) as StreamEvent);
  const firstDelta = upstream.findIndex((e) => e.type === "response.output_text.delta");

  it("passes nothing before the upstream's id is known, nor a read that carries it, nor after the end", () => {
    const m = new NativeStreamMachine(fields);
    expect(m.passRead(bytes(frame(upstream[firstDelta]!)))).toBeNull();
    for (const ev of upstream.slice(0, firstDelta)) m.push(ev.type, JSON.stringify(ev));
    expect(m.passRead(bytes(frame({ type: "response.output_text.delta", delta: "see resp_up", sequence_number: 9 } as never)))).toBeNull();
    expect(m.passRead(bytes(frame(upstream[firstDelta]!)))).toEqual({ frames: 1, delta: true });
    m.fail({ code: "server_error", message: "gone" });
    expect(m.passRead(bytes(frame(upstream[firstDelta + 1]!)))).toBeNull();
  });

  it("a stream that dies after reads passed as bytes closes its open message with all of its text, numbered on", async () => {
    const m = new NativeStreamMachine(fields);
    const seen: StreamEvent[] = [];
    for (const ev of upstream.slice(0, firstDelta + 1)) seen.push(JSON.parse(m.push(ev.type, JSON.stringify(ev)).data) as StreamEvent);
    // Two deltas in one read passed as bytes, then one read frame by frame.
    const passed = upstream.slice(firstDelta + 1, firstDelta + 3);
    expect(m.passRead(bytes(passed.map(frame).join("")))).toEqual({ frames: 2, delta: true });
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
