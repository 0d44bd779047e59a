import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { allEvents, until } from "../helpers/background.js";
import { nativeEvents, nativeResponse, startMockUpstream, type MockUpstream, type Reply } from "../helpers/mock-upstream.js";
import { startTestRouter, type TestRouter } from "../helpers/router.js";
import { recordedChatStream, withLineEnds } from "../helpers/sse-recording.js";

/**
 * An upstream that frames its stream with CRLF (sse-starlette) or CR, written one byte per
 * write with a pause between, so the router's reads end at every byte offset of the stream,
 * including between "\r" and "\n". Every frame must come through intact: streamed, in a
 * background job, and through the chat-completions pass-through.
 */
let up: MockUpstream;
let router: TestRouter;
const recording = recordedChatStream();
const bytes = new TextEncoder().encode(withLineEnds(recording.text, "\r\n"));

/** The recording, one write per byte (or per `size` bytes starting at `offset`). */
function byteWise(eol: "\r\n" | "\r" = "\r\n", size = 1, offset = 0): Reply {
  const b = eol === "\r\n" ? bytes : new TextEncoder().encode(withLineEnds(recording.text, eol));
  const chunks: Uint8Array[] = offset > 0 ? [b.subarray(0, offset)] : [];
  for (let i = offset; i < b.length; i += size) chunks.push(b.subarray(i, i + size));
  return { kind: "raw", chunks, gapMs: 1 };
}

beforeAll(async () => {
  up = await startMockUpstream();
  router = await startTestRouter({
    endpoints: [{ name: "py", url: up.url, kind: "chat" }],
    models: { m: { endpoints: ["py"] } },
  });
});
afterAll(async () => {
  await router?.close(1000);
  await up?.close();
});

const text = (events: { type: string; delta?: string }[]) =>
  events
    .filter((e) => e.type === "response.output_text.delta")
    .map((e) => e.delta)
    .join("");

describe("CRLF / CR framed upstream streams split at every byte", () => {
  it("streamed Responses: every frame arrives, the response completes", async () => {
    up.enqueue("/chat/completions", byteWise());
    const res = await router.fetch("/v1/responses", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "m", input: "hi", stream: true }) });
    expect(res.status).toBe(200);
    const events = (await allEvents(res)) as unknown as { type: string; delta?: string }[];
    expect(events.at(-1)!.type).toBe("response.completed");
    expect(text(events)).toBe(recording.content);
  });

  it("CR-only framing, and CRLF in reads of 2..5 bytes at every alignment", async () => {
    const replies: Reply[] = [byteWise("\r")];
    for (let size = 2; size <= 5; size++) for (let offset = 1; offset < size; offset++) replies.push(byteWise("\r\n", size, offset));
    for (const reply of replies) {
      up.enqueue("/chat/completions", reply);
      const r = await router.client.responses.create({ model: "m", input: "hi", stream: true });
      const types: string[] = [];
      let out = "";
      for await (const e of r) {
        types.push(e.type);
        if (e.type === "response.output_text.delta") out += e.delta;
      }
      expect(types.at(-1)).toBe("response.completed");
      expect(out).toBe(recording.content);
    }
  });

  it("background job: the stored response completes with the whole text", async () => {
    up.enqueue("/chat/completions", byteWise());
    const queued = await router.client.responses.create({ model: "m", input: "hi", background: true });
    const done = await until(async () => {
      const r = await router.client.responses.retrieve(queued.id);
      return r.status === "queued" || r.status === "in_progress" ? null : r;
    }, "the background response to finish");
    expect(done.status).toBe("completed");
    expect(done.output_text).toBe(recording.content);
    // ... and its recorded events replay intact.
    const replay = await router.fetch(`/v1/responses/${queued.id}?stream=true`);
    const events = (await allEvents(replay)) as unknown as { type: string; delta?: string }[];
    expect(events.at(-1)!.type).toBe("response.completed");
    expect(text(events)).toBe(recording.content);
  });

  it("background job streamed live: every frame arrives", async () => {
    up.enqueue("/chat/completions", byteWise());
    const res = await router.fetch("/v1/responses", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "m", input: "hi", background: true, stream: true }) });
    const events = (await allEvents(res)) as unknown as { type: string; delta?: string }[];
    expect(events.at(-1)!.type).toBe("response.completed");
    expect(text(events)).toBe(recording.content);
  });

  it("chat-completions pass-through: every chunk arrives, re-framed with LF", async () => {
    up.enqueue("/chat/completions", byteWise());
    const stream = await router.client.chat.completions.create({ model: "m", messages: [{ role: "user", content: "hi" }], stream: true });
    let out = "";
    for await (const c of stream) out += c.choices[0]?.delta?.content ?? "";
    expect(out).toBe(recording.content);
  });
});

/**
 * SSE lets a data field span several `data:` lines (joined with "\n"). The native
 * pass-through re-emits the upstream's delta frames as they came: a "\n" in one must go
 * out as several `data:` lines again, never raw inside one line (the client would read a
 * truncated JSON and the SDK throws "malformed server-sent event JSON").
 */
describe("native upstream sending multi-line data fields", () => {
  let nup: MockUpstream;
  let nrouter: TestRouter;
  beforeAll(async () => {
    nup = await startMockUpstream();
    nrouter = await startTestRouter({
      endpoints: [{ name: "oai", url: nup.url, kind: "openai" }],
      models: { n: { endpoints: ["oai"] } },
    });
  });
  afterAll(async () => {
    await nrouter?.close(1000);
    await nup?.close();
  });

  /** Every frame of a native stream with its JSON broken over two data lines (after a comma). */
  function twoLineFrames(eol: string): Reply {
    const frames = nativeEvents(nativeResponse("Hello there"), ["Hello", " there"]).map((f) => {
      const { event, data } = f as { event?: string; data: unknown };
      const json = JSON.stringify(data);
      const cut = json.indexOf(',"') + 1;
      return `${event ? `event: ${event}${eol}` : ""}data: ${json.slice(0, cut)}${eol}data: ${json.slice(cut)}${eol}${eol}`;
    });
    return { kind: "raw", chunks: frames, contentType: "text/event-stream" };
  }

  for (const eol of ["\n", "\r\n"]) {
    it(`streamed through the openai SDK intact (${JSON.stringify(eol)})`, async () => {
      nup.enqueue("/responses", twoLineFrames(eol));
      const r = await nrouter.client.responses.create({ model: "n", input: "hi", stream: true });
      const types: string[] = [];
      let out = "";
      for await (const e of r) {
        types.push(e.type);
        if (e.type === "response.output_text.delta") out += e.delta;
      }
      expect(types.at(-1)).toBe("response.completed");
      expect(out).toBe("Hello there");
    });
  }
});
