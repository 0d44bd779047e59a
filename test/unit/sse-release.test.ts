import { describe, expect, it } from "vitest";
import { UpstreamBody } from "../../src/upstream/body.js";
import { pipeSseFrames, readSseFrames, type SseFrame } from "../../src/upstream/sse.js";

function fakeBody() {
  const calls = { aborted: 0, finished: 0 };
  const body = new UpstreamBody({ resume() {}, abort: () => calls.aborted++, finished: () => calls.finished++ });
  return { body, calls };
}

/** Reads frames by push until [DONE]; what the consumer saw. */
function readUntilDone(body: UpstreamBody): { frames: string[]; ends: string[] } {
  const out = { frames: [] as string[], ends: [] as string[] };
  pipeSseFrames(body, {
    onFrame: (f) => {
      if (f.data === "[DONE]") return true;
      out.frames.push(f.data);
      return false;
    },
    onEnd: () => out.ends.push("end"),
    onError: () => out.ends.push("error"),
  });
  return out;
}

describe("pipeSseFrames stopped early", () => {
  it("drops a body whose end is already here instead of aborting the call (no abort error per stream)", () => {
    const { body, calls } = fakeBody();
    body.push(Buffer.from("data: a\n\ndata: [DONE]\n\ndata: after\n\n"));
    body.complete();
    expect(readUntilDone(body)).toEqual({ frames: ["a"], ends: [] });
    expect(calls).toEqual({ aborted: 0, finished: 1 });
  });

  it("drops a body whose end undici reports right after the read that carried [DONE]", async () => {
    const { body, calls } = fakeBody();
    const seen = readUntilDone(body);
    body.push(Buffer.from("data: a\n\ndata: [DONE]\n\n"));
    body.complete();
    await Promise.resolve();
    expect(seen).toEqual({ frames: ["a"], ends: [] });
    expect(calls).toEqual({ aborted: 0, finished: 1 });
  });

  it("aborts the call of a body that is still open after that read, and the consumer hears nothing more", async () => {
    const { body, calls } = fakeBody();
    const seen = readUntilDone(body);
    body.push(Buffer.from("data: a\n\ndata: [DONE]\n\n"));
    await new Promise((resolve) => setImmediate(resolve)); // undici's next read comes in a later turn
    body.fail(new Error("aborted"));
    expect(seen).toEqual({ frames: ["a"], ends: [] });
    expect(calls).toEqual({ aborted: 1, finished: 1 });
  });

  it("reads a body to its end, its last frame without a blank line too", () => {
    const { body } = fakeBody();
    const seen = readUntilDone(body);
    body.push(Buffer.from("data: a\n\n"));
    body.push(Buffer.from("data: b"));
    body.complete();
    expect(seen).toEqual({ frames: ["a", "b"], ends: ["end"] });
  });

  it("hands on a broken body's error once, after its frames", () => {
    const { body } = fakeBody();
    const seen = readUntilDone(body);
    body.push(Buffer.from("data: a\n\n"));
    body.fail(new Error("body timeout"));
    expect(seen).toEqual({ frames: ["a"], ends: ["error"] });
  });

  it("readSseFrames over an UpstreamBody releases it when the reader stops early", async () => {
    const { body, calls } = fakeBody();
    body.push(Buffer.from("data: a\n\ndata: [DONE]\n\n"));
    const seen: string[] = [];
    for await (const f of readSseFrames(body)) {
      if (f.data === "[DONE]") break;
      seen.push(f.data);
    }
    expect(seen).toEqual(["a"]);
    expect(calls).toEqual({ aborted: 1, finished: 1 });
  });
});

describe("SSE frames that have a successor in the same read", () => {
  const reads = ["data: a\n\n: keep-alive\n\ndata: b\n\n", "data: c\n\ndata: d"];
  const expected = [
    ["a", true],
    ["b", false],
    ["c", false],
    ["d", false],
  ];

  it("pushed: `more` on every frame but the last complete one of each upstream read, skipping comments", async () => {
    const { body } = fakeBody();
    const frames: [string, boolean][] = [];
    pipeSseFrames(body, { onFrame: (f: SseFrame) => void frames.push([f.data, f.more === true]), onEnd() {}, onError() {} });
    for (const r of reads) {
      body.push(Buffer.from(r));
      await Promise.resolve(); // each read in its own turn, as undici's socket reads come
    }
    body.complete();
    expect(frames).toEqual(expected);
  });

  it("iterated: the same", async () => {
    async function* chunks() {
      yield* reads;
    }
    const frames: [string, boolean][] = [];
    for await (const f of readSseFrames(chunks())) frames.push([f.data, f.more === true]);
    expect(frames).toEqual(expected);
  });
});
