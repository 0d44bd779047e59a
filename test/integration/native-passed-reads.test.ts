import type { ResponseStreamEvent } from "openai/resources/responses/responses";
import { describe, expect, it } from "vitest";
import { assertResponsesGrammar, runThroughOpenAISdk } from "../helpers/grammar.js";
import { metricSample } from "../helpers/metrics-text.js";
import { nativeEvents, nativeResponse } from "../helpers/mock-upstream.js";
import { parseSse, useTwoKindRouter } from "../helpers/router.js";

/**
 * A native stream whose deltas arrive one upstream read at a time (as tokens do): such reads
 * reach the client as the upstream's bytes, never parsed. Whatever the router does with them,
 * the client must get what it would have got frame by frame: the same bytes, the router's own
 * id where one is due, the stream's state kept (sequence numbers, a message's text when the
 * stream dies mid-item), the chunks counted.
 */
const env = useTwoKindRouter();

// Multi-byte text (é, an emoji) and JSON escapes in the deltas: the bytes must pass unchanged.
const words = ["Bonjour ", "à ", "tous ", "🎉 ", '"quoted" ', "and\\n ", "the ", "end."];
const upstreamFrames = (up = nativeEvents(nativeResponse(words.join(""), "gpt-4.1", "resp_upstream_1"), words)) => up;
const wire = (f: { event: string; data: unknown }) => `event: ${f.event}\ndata: ${JSON.stringify(f.data)}\n\n`;

async function post(body: Record<string, unknown>): Promise<string> {
  const res = await fetch(`${env.router.url}/v1/responses`, { method: "POST", headers: { "content-type": "application/json", authorization: "Bearer test-key" }, body: JSON.stringify(body) });
  expect(res.status).toBe(200);
  return res.text();
}

describe("native deltas passed as the upstream's bytes", () => {
  it("every delta reaches the client byte for byte; lifecycle events carry the router's id; the SDK reads the whole text", async () => {
    const frames = upstreamFrames();
    env.oai.enqueue("/responses", { kind: "sse", frames, delayMs: 5 });
    const chunksBefore = metricSample(await (await fetch(`${env.router.url}/metrics`)).text(), "responses_router_stream_chunks_total", { kind: "native" }) ?? 0;
    const text = await post({ model: "gpt-4.1", input: "hi", stream: true });
    for (const f of frames.filter((f) => f.event === "response.output_text.delta")) expect(text).toContain(wire(f));
    const events = parseSse(text).map((f) => f.data as ResponseStreamEvent);
    assertResponsesGrammar(events as never);
    expect(events.map((e) => e.type)).toEqual(frames.map((f) => f.event));
    events.forEach((e, i) => expect(e.sequence_number).toBe(i));
    const created = events[0] as { response: { id: string } };
    expect(created.response.id).toMatch(/^resp_/);
    expect(text).not.toContain("resp_upstream_1");
    const { final } = await runThroughOpenAISdk(events as never);
    expect(final.output_text).toBe(words.join(""));
    expect(final.id).toBe(created.response.id);
    // Each upstream event is one chunk, however it was passed on.
    const chunksAfter = metricSample(await (await fetch(`${env.router.url}/metrics`)).text(), "responses_router_stream_chunks_total", { kind: "native" });
    expect(chunksAfter! - chunksBefore).toBe(frames.length);
  });

  it("a whole stream in one read: lifecycle and item events read on their own between runs of passed bytes, in order", async () => {
    const frames = upstreamFrames();
    env.oai.enqueue("/responses", { kind: "sse", frames: [frames.map(wire).join("")] });
    const text = await post({ model: "gpt-4.1", input: "hi", stream: true });
    const passed = frames.filter((f) => !/^response\.[a-z_]+$/.test(f.event) && !f.event.startsWith("response.output_item."));
    for (const f of passed) expect(text).toContain(wire(f));
    const events = parseSse(text).map((f) => f.data as ResponseStreamEvent);
    assertResponsesGrammar(events as never);
    expect(events.map((e) => e.type)).toEqual(frames.map((f) => f.event));
    events.forEach((e, i) => expect(e.sequence_number).toBe(i));
    expect(text).not.toContain("resp_upstream_1");
    const { final } = await runThroughOpenAISdk(events as never);
    expect(final.output_text).toBe(words.join(""));
    // The terminal event left after the response was stored.
    expect((await env.router.client.responses.retrieve(final.id)).output_text).toBe(words.join(""));
  });

  it("a delta that names the upstream's response id is read on its own and gets the router's, as frame by frame", async () => {
    const frames = upstreamFrames(nativeEvents(nativeResponse("see resp_upstream_1 here", "gpt-4.1", "resp_upstream_1"), ["see ", "resp_upstream_1", " here"]));
    env.oai.enqueue("/responses", { kind: "sse", frames, delayMs: 5 });
    const events = parseSse(await post({ model: "gpt-4.1", input: "hi", stream: true })).map((f) => f.data as ResponseStreamEvent);
    const id = (events[0] as { response: { id: string } }).response.id;
    expect(events.filter((e) => e.type === "response.output_text.delta").map((e) => (e as { delta: string }).delta)).toEqual(["see ", id, " here"]);
  });

  it("a stream that dies after deltas passed as bytes closes its message with all of their text", async () => {
    const frames = upstreamFrames();
    const upTo = frames.findIndex((f) => (f.data as { delta?: string }).delta === "the ") + 1;
    env.oai.enqueue("/responses", { kind: "sse", frames: frames.slice(0, upTo), delayMs: 5, dieAfter: upTo });
    const events = parseSse(await post({ model: "gpt-4.1", input: "hi", stream: true })).map((f) => f.data as ResponseStreamEvent);
    assertResponsesGrammar(events as never);
    events.forEach((e, i) => expect(e.sequence_number).toBe(i));
    expect(events.slice(-4).map((e) => e.type)).toEqual(["response.output_text.done", "response.content_part.done", "response.output_item.done", "response.failed"]);
    const partial = words.slice(0, words.indexOf("the ") + 1).join("");
    expect((events.at(-4) as { text: string }).text).toBe(partial);
    const failed = (events.at(-1) as { response: { id: string } }).response;
    expect((await runThroughOpenAISdk(events as never)).final.output_text).toBe(partial);
    // Stored as the client saw it.
    expect((await env.router.client.responses.retrieve(failed.id)).output_text).toBe(partial);
  });
});
