import type { Response as OpenAIResponse, ResponseOutputMessage, ResponseStreamEvent } from "openai/resources/responses/responses";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { allEvents, backgroundConfig, callRouter, expectContiguous, sseEvents, until } from "../helpers/background.js";
import { assertResponsesGrammar, runThroughOpenAISdk } from "../helpers/grammar.js";
import { nativeEvents, nativeResponse, startMockUpstream, type MockUpstream, type Reply } from "../helpers/mock-upstream.js";
import { startTestRouter, type TestRouter } from "../helpers/router.js";

/** Partial output on the native path: a cancelled background job and a stream that dies mid-item keep what was produced. */
let chat: MockUpstream;
let oai: MockUpstream;
let router: TestRouter;
let call: ReturnType<typeof callRouter>;

beforeAll(async () => {
  chat = await startMockUpstream();
  oai = await startMockUpstream();
  router = await startTestRouter(backgroundConfig(chat.url, oai.url), { apiKey: "key-a" });
  call = callRouter(router.url, "key-a");
});
afterAll(async () => {
  await router.close(1000);
  await chat.close();
  await oai.close();
});

const words = Array.from({ length: 10 }, (_, i) => `w${i} `);
/** A native stream of ten text deltas "w0 " .. "w9 ", one every delayMs. */
const slowNative = (delayMs = 150): Reply => ({ kind: "sse", frames: nativeEvents(nativeResponse(words.join("")), words), delayMs });
const textOf = (item: unknown) => (item as ResponseOutputMessage).content.map((p) => (p.type === "output_text" ? p.text : "")).join("");

describe("native partial output", () => {
  it("cancel of a background job keeps the streamed text: cancelled Response, its GET and the final response.incomplete", async () => {
    oai.enqueue("/responses", slowNative());
    const res = await call("/v1/responses", { body: { model: "gpt-4.1", input: "hi", background: true, stream: true } });
    const events: ResponseStreamEvent[] = [];
    let cancelled: OpenAIResponse | null = null;
    for await (const e of sseEvents(res)) {
      const ev = e as unknown as ResponseStreamEvent;
      events.push(ev);
      if (ev.type === "response.output_text.delta" && ev.delta === "w3 ") cancelled = await router.client.responses.cancel((events[0] as { response: { id: string } }).response.id);
    }
    expect(cancelled!.status).toBe("cancelled");
    expect(cancelled!.output).toHaveLength(1);
    expect(textOf(cancelled!.output[0])).toMatch(/^w0 w1 w2 w3 /);
    expect(textOf(cancelled!.output[0])).not.toContain("w9");
    expect(cancelled!.output[0]).toMatchObject({ type: "message", status: "incomplete" });
    const last = events.at(-1)!;
    expect(last.type).toBe("response.incomplete");
    if (last.type !== "response.incomplete") return;
    expect(last.response.status).toBe("cancelled");
    expect(last.response.output).toEqual(cancelled!.output);
    expectContiguous(events as never);
    const { final } = await runThroughOpenAISdk(events as never);
    expect(final.status).toBe("cancelled");
    expect(textOf(final.output[0])).toBe(textOf(cancelled!.output[0]));
    expect(await router.client.responses.retrieve(cancelled!.id)).toMatchObject({ status: "cancelled", output: cancelled!.output });
    // A follower from the start sees the same closing events.
    const again = await allEvents(await call(`/v1/responses/${cancelled!.id}?stream=true`));
    expect(again.map((e) => e.type)).toEqual(events.map((e) => e.type));
  });

  it("a native stream that dies mid-message closes the message in response.failed with its text", async () => {
    const frames = nativeEvents(nativeResponse(words.join("")), words);
    const upTo = frames.findIndex((f) => (f.data as { delta?: string }).delta === "w4 ") + 1;
    oai.enqueue("/responses", { kind: "sse", frames: frames.slice(0, upTo), dieAfter: upTo });
    const events = await allEvents(await call("/v1/responses", { body: { model: "gpt-4.1", input: "hi", stream: true } }));
    assertResponsesGrammar(events);
    expect(events.slice(-4).map((e) => e.type)).toEqual(["response.output_text.done", "response.content_part.done", "response.output_item.done", "response.failed"]);
    const failed = (events.at(-1) as unknown as { response: OpenAIResponse }).response;
    expect(failed.status).toBe("failed");
    expect(failed.output[0]).toMatchObject({ type: "message", status: "incomplete" });
    expect(textOf(failed.output[0])).toBe("w0 w1 w2 w3 w4 ");
    expect((await runThroughOpenAISdk(events)).final.output_text).toBe("w0 w1 w2 w3 w4 ");
    expect((await router.client.responses.retrieve(failed.id)).output).toEqual(failed.output);
  });
});
