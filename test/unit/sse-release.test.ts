import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { readSseFrames } from "../../src/upstream/sse.js";

async function readUntilDone(body: Readable): Promise<string[]> {
  const seen: string[] = [];
  for await (const frame of readSseFrames(body)) {
    if (frame.data === "[DONE]") break;
    seen.push(frame.data);
  }
  return seen;
}

describe("readSseFrames stopped early", () => {
  it("drains a body whose end is already buffered instead of destroying it", async () => {
    const body = new Readable({ read() {} });
    body.push("data: a\n\ndata: [DONE]\n\n");
    body.push(null);
    expect(await readUntilDone(body)).toEqual(["a"]);
    await new Promise<void>((r) => body.once("end", () => r()));
    expect(body.readableEnded).toBe(true);
    expect(body.errored).toBeNull();
  });

  it("destroys a body that is still open", async () => {
    const body = new Readable({ read() {} });
    body.push("data: a\n\ndata: [DONE]\n\n");
    expect(await readUntilDone(body)).toEqual(["a"]);
    expect(body.destroyed).toBe(true);
  });

  it("reads a plain async iterable to the end as before", async () => {
    async function* chunks() {
      yield "data: a\n\n";
      yield "data: b";
    }
    const frames: string[] = [];
    for await (const f of readSseFrames(chunks())) frames.push(f.data);
    expect(frames).toEqual(["a", "b"]);
  });
});

describe("readSseFrames marks frames that have a successor in the same read", () => {
  it("sets `more` on every frame but the last complete one of each upstream chunk, skipping comments", async () => {
    async function* chunks() {
      yield "data: a\n\n: keep-alive\n\ndata: b\n\n";
      yield "data: c\n\ndata: d";
    }
    const frames: [string, boolean][] = [];
    for await (const f of readSseFrames(chunks())) frames.push([f.data, f.more === true]);
    expect(frames).toEqual([
      ["a", true],
      ["b", false],
      ["c", false],
      ["d", false],
    ]);
  });
});
