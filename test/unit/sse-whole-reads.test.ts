import { describe, expect, it } from "vitest";
import { UpstreamBody } from "../../src/upstream/body.js";
import { pipeSseFrames, type WholeBytes } from "../../src/upstream/sse.js";
import { firstFrameEnd, lastFrameEnd } from "../../src/wire/sse-parser.js";

function fakeBody() {
  return new UpstreamBody({ resume() {}, abort() {}, finished() {} });
}

/** Each read in its own turn, as undici's socket reads come. */
async function feed(body: UpstreamBody, reads: (string | Buffer)[], end = true): Promise<void> {
  for (const r of reads) {
    body.push(typeof r === "string" ? Buffer.from(r) : r);
    await Promise.resolve();
  }
  if (end) body.complete();
}

const frame = (type: string, data: string) => `event: ${type}\ndata: ${data}\n\n`;

/** A body read by a consumer that takes every read offered as bytes: what it took, and what was parsed. */
function takingBytes() {
  const body = fakeBody();
  const taken: string[] = [];
  const parsed: string[] = [];
  pipeSseFrames(body, {
    onWholeBytes: (chunk): WholeBytes => (taken.push(chunk.toString()), "taken"),
    onFrame: (f) => void parsed.push(f.data),
    onEnd: () => parsed.push("<end>"),
    onError: () => parsed.push("<error>"),
  });
  return { body, taken, parsed };
}

describe("reads of many frames offered whole (a fast upstream, a busy router)", () => {
  it("a read that ends inside a frame: its whole frames go as bytes, the rest starts the next read", async () => {
    const { body, taken, parsed } = takingBytes();
    const a = frame("response.output_text.delta", '{"delta":"a"}');
    const b = frame("response.output_text.delta", '{"delta":"b€"}');
    const c = frame("response.output_text.delta", '{"delta":"c"}');
    const bBytes = Buffer.from(b);
    const split = bBytes.indexOf(Buffer.from("€")) + 1; // inside the euro sign's bytes
    await feed(body, [Buffer.concat([Buffer.from(a), bBytes.subarray(0, split)]), Buffer.concat([bBytes.subarray(split), Buffer.from(c)])]);
    expect(taken).toEqual([a, b + c]);
    expect(parsed).toEqual(["<end>"]);
  });

  it("a body that ends with bytes kept from its last read: they are parsed as its last frame", async () => {
    const { body, taken, parsed } = takingBytes();
    await feed(body, [`${frame("x", "1")}event: y\ndata: 2`]);
    expect(taken).toEqual([frame("x", "1")]);
    expect(parsed).toEqual(["2", "<end>"]);
  });

  it("text offered whole (the chat pass-through): the same split, and a declined read is parsed once, its tail included", async () => {
    const body = fakeBody();
    const taken: string[] = [];
    const parsed: [string, boolean][] = [];
    let declines = 1;
    pipeSseFrames(body, {
      onWholeRead: (text) => (declines-- > 0 ? "parse" : (taken.push(text), "taken")),
      onFrame: (f) => void parsed.push([f.data, f.more === true]),
      onEnd: () => parsed.push(["<end>", false]),
      onError: () => parsed.push(["<error>", false]),
    });
    // Declined: its frames are parsed; the unfinished one waits in the parser.
    await feed(body, ["data: 1\n\ndata: 2\n\ndata: 3"], false);
    expect(parsed).toEqual([
      ["1", true],
      ["2", false],
    ]);
    // The parser holds the start of a frame: the next read is parsed up to its end only, and
    // the frames after it are offered again (else, with every read ending inside a frame, no
    // read would be offered again).
    await feed(body, ["\n\ndata: 4\n\ndata: 5", "\n\ndata: 6\n\ndata: 7", "\n\n"]);
    expect(parsed.map(([d]) => d)).toEqual(["1", "2", "3", "<end>"]);
    expect(taken).toEqual(["data: 4\n\n", "data: 5\n\ndata: 6\n\n", "data: 7\n\n"]);
  });

  it("a consumer that stops in a read's whole frames: what was kept after them is never read", async () => {
    const body = fakeBody();
    const parsed: string[] = [];
    pipeSseFrames(body, {
      onWholeBytes: () => "stop",
      onFrame: (f) => void parsed.push(f.data),
      onEnd: () => parsed.push("<end>"),
      onError: () => parsed.push("<error>"),
    });
    await feed(body, [`${frame("x", "1")}event: y\ndata: 2`, "\n\n"]);
    expect(parsed).toEqual([]);
  });

  it("firstFrameEnd: where a read's first blank line ends, when more follows it", () => {
    expect(firstFrameEnd(Buffer.from("a\n\ndata: b\n\ndata: c"))).toBe(3);
    expect(firstFrameEnd(Buffer.from("\n\ndata: b"))).toBe(2);
    expect(firstFrameEnd(Buffer.from("data: a\n\n"))).toBe(-1); // nothing follows it
    expect(firstFrameEnd(Buffer.from("data: a"))).toBe(-1);
    expect(firstFrameEnd(Buffer.from("a\r\n\r\ndata: b"))).toBe(-1);
  });

  it("lastFrameEnd: where a read's last whole frame ends, when more follows it", () => {
    expect(lastFrameEnd(Buffer.from("data: a\n\ndata: b"))).toBe(9);
    expect(lastFrameEnd(Buffer.from("data: a\n\n"))).toBe(-1); // whole already
    expect(lastFrameEnd(Buffer.from("data: a"))).toBe(-1); // no whole frame
    expect(lastFrameEnd(Buffer.from("data: a\r\n\r\ndata: b\n\ndata: c"))).toBe(-1); // CR line ends: the parser's
    expect(lastFrameEnd(Buffer.from("data: a\n\ndata: b").subarray(2))).toBe(7); // a view into a larger buffer
  });
});
