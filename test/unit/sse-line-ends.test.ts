import { describe, expect, it } from "vitest";
import { readSseFrames, type SseFrame } from "../../src/upstream/sse.js";
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

  it("a lone CR at the end of a read ends the line at once (no wait for the next read)", async () => {
    async function* source() {
      yield "data: x\r\r";
      await new Promise(() => {}); // the upstream stays silent
    }
    const it = readSseFrames(source())[Symbol.asyncIterator]();
    expect((await it.next()).value).toMatchObject({ data: "x" });
  });
});
