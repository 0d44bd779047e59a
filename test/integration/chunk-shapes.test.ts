import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMockUpstream, type MockUpstream } from "../helpers/mock-upstream.js";
import { startTestRouter, type TestRouter } from "../helpers/router.js";

/**
 * A translated stream reads a text chunk shaped like the one before it without parsing it
 * (translate/frame-shape.ts). A stream whose chunks change shape as real servers' do (a
 * `created` that ticks, Python's spaced JSON, escapes, logprobs, a chunk that adds a refusal;
 * thinking then text blocks of a Messages stream) must come out exactly as if every chunk had
 * been parsed.
 */
let up: MockUpstream;
let router: TestRouter;

beforeAll(async () => {
  up = await startMockUpstream();
  router = await startTestRouter({
    endpoints: [
      { name: "box", url: up.url, kind: "chat" },
      { name: "claude", url: up.url, kind: "anthropic", api_key: "sk-ant-test" },
    ],
    models: { m: { endpoints: ["box"] }, c: { endpoints: ["claude"] } },
  });
});
afterAll(async () => {
  await router?.close(1000);
  await up?.close();
});

const compact = (delta: object, created = 1, extra: object = {}) => JSON.stringify({ id: "c1", object: "chat.completion.chunk", created, model: "m", choices: [{ index: 0, delta, finish_reason: null, ...extra }] });
/** As Python's json.dumps writes it: spaces after separators, non-ASCII escaped. */
const spaced = (content: string) => `{"id": "c1", "object": "chat.completion.chunk", "created": 3, "model": "m", "choices": [{"index": 0, "delta": {"content": ${JSON.stringify(content).replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)}}, "finish_reason": null}]}`;

const frames = [
  compact({ role: "assistant", content: "" }),
  compact({ content: "Hel" }),
  compact({ content: "lo" }),
  compact({ content: ' say "hi"\n' }),
  compact({ content: " wor" }, 2),
  compact({ content: "ld" }, 2),
  spaced(" café"),
  spaced("!"),
  spaced("?"),
  spaced("é"),
  compact({ content: "L" }, 3, { logprobs: { content: [{ token: "L", logprob: -0.5, bytes: [76], top_logprobs: [] }] } }),
  spaced("x").replace('"x"', '"x", "refusal": "no"'),
  compact({}, 3).replace('"finish_reason":null', '"finish_reason":"stop"'),
  JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 3, model: "m", choices: [], usage: { prompt_tokens: 3, completion_tokens: 12, total_tokens: 15 } }),
  "[DONE]",
];
const texts = ["Hel", "lo", ' say "hi"\n', " wor", "ld", " café", "!", "?", "é", "L", "x"];

describe("chat chunks read by their shape", () => {
  it("stream exactly the events every chunk parsed would give", async () => {
    up.enqueue("/chat/completions", { kind: "raw", chunks: frames.map((f) => `data: ${f}\n\n`), gapMs: 1 });
    const stream = await router.client.responses.create({ model: "m", input: "hi", stream: true });
    const events: { type: string; sequence_number: number; delta?: string; logprobs?: unknown[] }[] = [];
    for await (const ev of stream) events.push(ev as (typeof events)[number]);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    const deltas = events.filter((e) => e.type === "response.output_text.delta");
    expect(deltas.map((e) => e.delta)).toEqual(texts);
    expect(deltas.map((e) => (e.logprobs ?? []).length)).toEqual(texts.map((t) => (t === "L" ? 1 : 0)));
    expect(events.filter((e) => e.type === "response.refusal.delta").map((e) => e.delta)).toEqual(["no"]);
    const done = events.at(-1) as unknown as { type: string; response: { output: { content: { type: string; text?: string; refusal?: string }[] }[]; usage: { output_tokens: number } } };
    expect(done.type).toBe("response.completed");
    expect(done.response.output[0]!.content).toMatchObject([
      { type: "output_text", text: texts.join("") },
      { type: "refusal", refusal: "no" },
    ]);
    expect(done.response.usage.output_tokens).toBe(12);
  });

  it("the same chunks arriving in one read come through the same", async () => {
    up.enqueue("/chat/completions", { kind: "raw", chunks: [frames.map((f) => `data: ${f}\n\n`).join("")] });
    const stream = await router.client.responses.create({ model: "m", input: "hi", stream: true });
    let text = "";
    for await (const ev of stream) if (ev.type === "response.output_text.delta") text += ev.delta;
    expect(text).toBe(texts.join(""));
  });
});

describe("Messages stream deltas read by their shape", () => {
  const ev = (type: string, payload: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...payload })}\n\n`;
  const delta = (index: number, d: object) => ev("content_block_delta", { index, delta: d });
  const thinking = ["Let", " me", ' think "hard"', "\n."];
  const texts = ["Hel", "lo", " wörld", ' "q"', "!"];

  it("stream the thinking and the text as every event parsed would give", async () => {
    const frames = [
      ev("message_start", { message: { id: "msg_1", type: "message", role: "assistant", model: "c", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 3, output_tokens: 1 } } }),
      ev("content_block_start", { index: 0, content_block: { type: "thinking", thinking: "", signature: "" } }),
      ...thinking.map((t) => delta(0, { type: "thinking_delta", thinking: t })),
      delta(0, { type: "signature_delta", signature: "c2ln" }),
      ev("content_block_stop", { index: 0 }),
      ev("content_block_start", { index: 1, content_block: { type: "text", text: "" } }),
      ...texts.slice(0, 3).map((t) => delta(1, { type: "text_delta", text: t })),
      ev("ping", {}),
      // A field a later API version might add: parsed, not read by its shape.
      ev("content_block_delta", { index: 1, delta: { type: "text_delta", text: texts[3] }, extra: true }),
      delta(1, { type: "text_delta", text: texts[4] }),
      ev("content_block_stop", { index: 1 }),
      ev("message_delta", { delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 9 } }),
      ev("message_stop", {}),
    ];
    up.enqueue("/messages", { kind: "raw", chunks: frames, gapMs: 1 });
    const stream = await router.client.responses.create({ model: "c", input: "hi", stream: true, reasoning: { effort: "low" } });
    const events: { type: string; sequence_number: number; delta?: string }[] = [];
    for await (const e of stream) events.push(e as (typeof events)[number]);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events.filter((e) => e.type === "response.reasoning_text.delta").map((e) => e.delta)).toEqual(thinking);
    expect(events.filter((e) => e.type === "response.output_text.delta").map((e) => e.delta)).toEqual(texts);
    const done = events.at(-1) as unknown as { type: string; response: { output: { type: string; content?: { text: string }[] }[] } };
    expect(done.type).toBe("response.completed");
    expect(done.response.output.map((o) => o.type)).toEqual(["reasoning", "message"]);
    expect(done.response.output[0]!.content![0]!.text).toBe(thinking.join(""));
    expect(done.response.output[1]!.content![0]!.text).toBe(texts.join(""));
  });
});
