import { describe, expect, it } from "vitest";
import { UpstreamBody } from "../../src/upstream/body.js";
import { pipeSseFrames, readSseFrames, SseParser, type SseFrame } from "../../src/upstream/sse.js";
import { recordedChatStream, withLineEnds, type LineEnd } from "../helpers/sse-recording.js";

const encoder = new TextEncoder();

async function collect(chunks: (Uint8Array | string)[]): Promise<{ event: string | undefined; data: string }[]> {
  const out: { event: string | undefined; data: string }[] = [];
  async function* source() {
    for (const c of chunks) yield c;
  }
  for await (const f of readSseFrames(source()) as AsyncGenerator<SseFrame>) out.push({ event: f.event, data: f.data });
  return out;
}

/** The same reads through the push API: the parser fed by an UpstreamBody, each frame called back in its read's turn. */
function collectPushed(chunks: (Uint8Array | string)[]): { event: string | undefined; data: string }[] {
  const out: { event: string | undefined; data: string }[] = [];
  const body = new UpstreamBody({ resume() {}, abort() {}, finished() {} });
  let ended = false;
  pipeSseFrames(body, {
    onFrame: (f) => {
      out.push({ event: f.event, data: f.data });
    },
    onEnd: () => (ended = true),
    onError: (err) => {
      throw err;
    },
  });
  for (const c of chunks) body.push(Buffer.from(typeof c === "string" ? encoder.encode(c) : c));
  body.complete();
  if (!ended) throw new Error("no end");
  return out;
}

const expected = recordedChatStream().frames;

describe("readSseFrames line ends (CRLF, CR, LF) at every split point", () => {
  for (const eol of ["\n", "\r\n", "\r"] as LineEnd[]) {
    const label = JSON.stringify(eol);
    const bytes = encoder.encode(withLineEnds(recordedChatStream().text, eol));

    it(`${label}: whole stream in one read`, async () => {
      expect(await collect([bytes])).toEqual(expected);
    });

    it(`${label}: split in two at every byte offset`, async () => {
      for (let i = 1; i < bytes.length; i++) {
        const frames = await collect([bytes.subarray(0, i), bytes.subarray(i)]);
        if (JSON.stringify(frames) !== JSON.stringify(expected)) expect({ splitAt: i, frames }).toEqual({ splitAt: i, frames: expected });
      }
    });

    it(`${label}: one byte per read`, async () => {
      const chunks: Uint8Array[] = [];
      for (let i = 0; i < bytes.length; i++) chunks.push(bytes.subarray(i, i + 1));
      expect(await collect(chunks)).toEqual(expected);
      expect(collectPushed(chunks)).toEqual(expected);
    });

    it(`${label}: pushed, whole and split in two at every byte offset`, () => {
      expect(collectPushed([bytes])).toEqual(expected);
      for (let i = 1; i < bytes.length; i++) {
        const frames = collectPushed([bytes.subarray(0, i), bytes.subarray(i)]);
        if (JSON.stringify(frames) !== JSON.stringify(expected)) expect({ splitAt: i, frames }).toEqual({ splitAt: i, frames: expected });
      }
    });
  }

  it("a read that ends between \\r and \\n does not end a multi-line data field early", async () => {
    // The case: "data: a\r" | "\ndata: b\r\n\r\n" must be one frame "a\nb".
    expect(await collect(["data: a\r", "\ndata: b\r\n\r\n"])).toEqual([{ event: undefined, data: "a\nb" }]);
    // ... also when the \n arrives after an empty read (a partial UTF-8 character decodes to "").
    const euro = encoder.encode("€");
    expect(await collect([encoder.encode("data: a\r"), euro.subarray(0, 0), encoder.encode("\ndata: b"), euro, encoder.encode("\r\n\r\n")])).toEqual([
      { event: undefined, data: "a\nb€" },
    ]);
  });

  it("pushed: a read that ends between \\r and \\n does not end a multi-line data field early", () => {
    expect(collectPushed(["data: a\r", "\ndata: b\r\n\r\n"])).toEqual([{ event: undefined, data: "a\nb" }]);
    const euro = encoder.encode("€");
    // ... also when the \r comes after a multi-byte character split across reads, and an empty read sits between \r and \n.
    expect(collectPushed([encoder.encode("data: a"), euro.subarray(0, 1), Buffer.concat([euro.subarray(1), encoder.encode("\r")]), euro.subarray(0, 0), encoder.encode("\ndata: b\r\n\r\n")])).toEqual([
      { event: undefined, data: "a€\nb" },
    ]);
  });

  it("pushed: a lone CR at the end of a read ends the frame in that read's turn", () => {
    const seen: string[] = [];
    new SseParser().push("data: x\r\r", (f) => {
      seen.push(f.data);
    });
    expect(seen).toEqual(["x"]);
  });

  it("a lone CR at the end of a read ends the line at once (no wait for the next read)", async () => {
    async function* source() {
      yield "data: x\r\r";
      await new Promise(() => {}); // the upstream stays silent
    }
    const it = readSseFrames(source())[Symbol.asyncIterator]();
    expect((await it.next()).value).toMatchObject({ data: "x" });
  });
});

describe("frame shapes", () => {
  const parse = (text: string) => collectPushed([text]);
  it("reads `event:` + `data:` frames (Responses, Messages) and lone `data:` frames, and every other shape, as the SSE rules say", () => {
    expect(parse('event: response.created\ndata: {"a":1}\n\n')).toEqual([{ event: "response.created", data: '{"a":1}' }]);
    expect(parse("data: {}\n\n")).toEqual([{ event: undefined, data: "{}" }]);
    // No space after the colon, several data lines, a comment, an id, fields in another order.
    expect(parse("event:ping\ndata:x\n\n")).toEqual([{ event: "ping", data: "x" }]);
    expect(parse("event: e\ndata: a\ndata: b\n\n")).toEqual([{ event: "e", data: "a\nb" }]);
    expect(parse("event: e\n: note\ndata: a\n\n")).toEqual([{ event: "e", data: "a" }]);
    expect(parse("id: 7\nevent: e\ndata: a\n\n")).toEqual([{ event: "e", data: "a" }]);
    expect(parse("data: a\nevent: e\n\n")).toEqual([{ event: "e", data: "a" }]);
    expect(parse("event: e\nretry: 10\n\n")).toEqual([]);
    // Spaces beyond the first after the colon are the value's.
    expect(parse("event:  e\ndata:  a\n\n")).toEqual([{ event: " e", data: " a" }]);
  });
});
