import { APIError } from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { chatChunk, chatCompletion, chatTextChunks, chatToolCallChunks, sleep, startMockUpstream, upstreamError, type MockUpstream, type Script } from "../helpers/mock-upstream.js";
import { startTestRouter, type TestRouter } from "../helpers/router.js";

type ErrorBody = { error: { message: string; type: string; param: string | null; code: string | null } };

/** Routing, failover, stream life cycle, cache, metrics and auth of /v1/chat/completions and /v1/embeddings. */
let a: MockUpstream;
let b: MockUpstream;
let router: TestRouter;

beforeAll(async () => {
  a = await startMockUpstream();
  b = await startMockUpstream();
  router = await startTestRouter({
    server: { api_keys: [{ name: "team", key: "test-key" }] },
    endpoints: [
      { name: "a", url: a.url, kind: "chat", max_concurrency: 4 },
      { name: "b", url: b.url, kind: "chat", max_concurrency: 4 },
    ],
    models: {
      pool: { endpoints: ["a", "b"], upstream_model: "qwen3:4b" },
      // a first while both are idle: the higher weight wins a tie.
      primary: { endpoints: [{ name: "a", weight: 2 }, { name: "b", weight: 1 }] },
      solo: { endpoints: ["a"] },
      renamed: { endpoints: ["a"], upstream_model: "qwen3:4b" },
      cached: { endpoints: ["a"], upstream_model: "qwen3:4b", cache: { ttl: "1m" } },
      embed: { endpoints: ["a"], upstream_model: "nomic-embed-text" },
    },
    routing: { queue_timeout: "500ms", retry: { attempts: 2, max_time: "5s" }, health: { failure_threshold: 5, cooldown: "100ms" } },
  });
});
afterAll(async () => {
  await router.close(1000);
  await a.close();
  await b.close();
});
beforeEach(() => {
  a.requests.length = 0;
  b.requests.length = 0;
});

const json = { "content-type": "application/json", authorization: "Bearer test-key" };
const post = (path: string, body: unknown, signal?: AbortSignal) => router.fetch(path, { method: "POST", headers: json, body: JSON.stringify(body), signal });
const hi = [{ role: "user" as const, content: "hi" }];

async function waitFor(what: string, cond: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await cond()) return;
    await sleep(10);
  }
  throw new Error(`gave up waiting for ${what}`);
}

async function metric(line: string): Promise<number> {
  const text = await (await router.fetch("/metrics")).text();
  const found = text.split("\n").find((l) => l.startsWith(line + " "));
  return found ? Number(found.slice(line.length + 1)) : 0;
}

describe("routing and failover", () => {
  it("sends the next request to the endpoint with fewer requests in flight", async () => {
    // Streams are held open (whichever endpoint gets the first one); plain requests get the default answer.
    const held: Script = (req) => (req.body?.stream ? { kind: "sse", frames: [chatChunk({ role: "assistant", content: "held" })], holdOpenMs: 60_000 } : undefined);
    a.setDefault("/chat/completions", held);
    b.setDefault("/chat/completions", held);
    const ctrl = new AbortController();
    const first = await post("/v1/chat/completions", { model: "pool", messages: hi, stream: true }, ctrl.signal);
    const reader = first.body!.getReader();
    await reader.read(); // the first chunk is through: that endpoint now has one in flight
    const busy = a.requests.length === 1 ? "a" : "b";
    const r = await router.client.chat.completions.create({ model: "pool", messages: hi });
    expect(r.choices[0]!.message.content).toBe("Hello world");
    expect(r.model).toBe("pool");
    const idle = busy === "a" ? b : a;
    expect(idle.requests.map((q) => q.body.model)).toEqual(["qwen3:4b"]);
    ctrl.abort();
    await reader.cancel().catch(() => {});
    await waitFor("the held upstream to be released", () => a.open() + b.open() === 0);
    a.setDefault("/chat/completions", () => undefined);
    b.setDefault("/chat/completions", () => undefined);
  });

  it("fails over to another endpoint before the first byte (connection lost, then 503)", async () => {
    a.enqueue("/chat/completions", { kind: "destroy" });
    const r = await router.client.chat.completions.create({ model: "primary", messages: hi });
    expect(r.choices[0]!.message.content).toBe("Hello world");
    expect([a.requests.length, b.requests.length]).toEqual([1, 1]);

    a.enqueue("/chat/completions", upstreamError(503, "loading model", null, "server_error"));
    const stream = await router.client.chat.completions.create({ model: "primary", messages: hi, stream: true });
    let text = "";
    for await (const c of stream) text += c.choices[0]?.delta.content ?? "";
    expect(text).toBe("Hello world");
    expect([a.requests.length, b.requests.length]).toEqual([2, 2]);
  });

  it("401 without the router's key, before any upstream is called", async () => {
    const res = await router.fetch("/v1/chat/completions", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "solo", messages: hi }) });
    expect(res.status).toBe(401);
    expect(((await res.json()) as ErrorBody).error.code).toBe("missing_api_key");
    expect(a.requests.length + b.requests.length).toBe(0);
  });
});

describe("stream life cycle", () => {
  it("a mid-stream upstream death ends the stream with an OpenAI error chunk, which the SDK raises", async () => {
    a.enqueue("/chat/completions", { kind: "sse", frames: [...chatTextChunks(["one", "two", "three"]), "data: [DONE]\n\n"], dieAfter: 2 });
    const res = await post("/v1/chat/completions", { model: "solo", messages: hi, stream: true });
    const frames = (await res.text()).split("\n\n").filter(Boolean);
    expect(frames).toHaveLength(3);
    expect(JSON.parse(frames[1]!.slice(6)).choices[0].delta.content).toBe("one");
    expect(JSON.parse(frames[2]!.slice(6))).toEqual({
      error: { message: "The upstream connection was lost mid-stream.", type: "server_error", param: null, code: "upstream_stream_error" },
    });

    a.enqueue("/chat/completions", { kind: "sse", frames: [...chatTextChunks(["one", "two"]), "data: [DONE]\n\n"], dieAfter: 2 });
    const stream = await router.client.chat.completions.create({ model: "solo", messages: hi, stream: true });
    let text = "";
    const err = await (async () => {
      for await (const c of stream) text += c.choices[0]?.delta.content ?? "";
    })().then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).message).toContain("lost mid-stream");
    expect(text).toBe("one");
    await waitFor("the slot to be freed", async () => (await metric('responses_router_endpoint_in_flight{upstream="a"}')) === 0);
  });

  it("chunks that arrive a read at a time: each renamed, the upstream's comments kept, usage counted, a frame split over reads whole", async () => {
    const data = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`;
    const chunk = (delta: Record<string, unknown>) => chatChunk(delta, null, "qwen3:4b").data;
    const usage = { id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model: "qwen3:4b", choices: [], usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 } };
    const split = data(chunk({ content: "!" }));
    a.enqueue("/chat/completions", {
      kind: "raw",
      contentType: "text/event-stream",
      gapMs: 15,
      chunks: [
        data(chunk({ role: "assistant", content: "" })),
        data(chunk({ content: "Hel" })),
        `: upstream ping\n\n${data(chunk({ content: "lo" }))}`,
        split.slice(0, 20),
        split.slice(20),
        data({ ...chunk({}), choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }),
        data(usage) + "data: [DONE]\n\n",
      ],
    });
    const before = await metric('responses_router_tokens_total{model="renamed",upstream="a",type="input",key="team"}');
    const res = await post("/v1/chat/completions", { model: "renamed", messages: hi, stream: true, stream_options: { include_usage: true } });
    const frames = (await res.text()).split("\n\n").filter(Boolean);
    // A read passed on as it came keeps the upstream's comment line (SSE clients skip it).
    expect(frames).toContain(": upstream ping");
    expect(frames.at(-1)).toBe("data: [DONE]");
    const chunks = frames.filter((f) => f.startsWith("data: {")).map((f) => JSON.parse(f.slice(6)));
    expect(chunks).toHaveLength(6);
    expect(chunks.every((c) => c.model === "renamed")).toBe(true);
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? "").join("")).toBe("Hello!");
    expect(chunks.at(-1).usage).toEqual(usage.usage);
    expect(await metric('responses_router_tokens_total{model="renamed",upstream="a",type="input",key="team"}')).toBe(before + 7);
  });

  it("a short stream in one read goes out whole: renamed, its usage counted once, ended at [DONE]; a [DONE] that is not the read's last frame is read frame by frame", async () => {
    const data = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`;
    const chunk = (delta: Record<string, unknown>) => chatChunk(delta, null, "qwen3:4b").data;
    const usage = { id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model: "qwen3:4b", choices: [], usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 } };
    const finish = data({ ...chunk({}), choices: [{ index: 0, delta: {}, finish_reason: "stop" }] });
    const read = async (body: string) => {
      a.enqueue("/chat/completions", { kind: "raw", contentType: "text/event-stream", chunks: [body] });
      const before = await metric('responses_router_tokens_total{model="renamed",upstream="a",type="input",key="team"}');
      const res = await post("/v1/chat/completions", { model: "renamed", messages: hi, stream: true, stream_options: { include_usage: true } });
      const frames = (await res.text()).split("\n\n").filter(Boolean);
      const chunks = frames.filter((f) => f.startsWith("data: {")).map((f) => JSON.parse(f.slice(6)));
      const counted = (await metric('responses_router_tokens_total{model="renamed",upstream="a",type="input",key="team"}')) - before;
      return { frames, chunks, counted, text: chunks.map((c) => c.choices[0]?.delta.content ?? "").join("") };
    };
    const whole = await read(data(chunk({ role: "assistant", content: "" })) + data(chunk({ content: "Hel" })) + data(chunk({ content: "lo" })) + finish + data(usage) + "data: [DONE]\n\n");
    expect(whole.frames.at(-1)).toBe("data: [DONE]");
    expect(whole.text).toBe("Hello");
    expect(whole.chunks.every((c) => c.model === "renamed")).toBe(true);
    expect(whole.chunks.at(-1).usage).toEqual(usage.usage);
    expect(whole.counted).toBe(7);
    // A chunk whose text names the end marker: the stream goes on to the real one.
    const named = await read(data(chunk({ content: "data: [DONE]" })) + data(chunk({ content: "!" })) + finish + data(usage) + "data: [DONE]\n\n");
    expect(named.text).toBe("data: [DONE]!");
    expect(named.frames.at(-1)).toBe("data: [DONE]");
    expect(named.counted).toBe(7);
    // Frames after [DONE] in the same read: the client's stream ends at [DONE].
    const after = await read(data(chunk({ content: "Hi" })) + data(usage) + "data: [DONE]\n\n" + data(chunk({ content: "late" })));
    expect(after.text).toBe("Hi");
    expect(after.frames.at(-1)).toBe("data: [DONE]");
    expect(after.counted).toBe(7);
  });

  it("a stream ends at data: [DONE] even when the upstream keeps its response open after it", async () => {
    a.enqueue("/chat/completions", { kind: "sse", frames: [...chatTextChunks(["one", "two"]), "data: [DONE]\n\n"], holdOpenMs: 60_000 });
    const res = await post("/v1/chat/completions", { model: "solo", messages: hi, stream: true });
    const frames = (await res.text()).split("\n\n").filter(Boolean);
    expect(frames.at(-1)).toBe("data: [DONE]");
    expect(frames.slice(0, -1).map((f) => JSON.parse(f.slice(6)).choices[0]?.delta.content ?? "").join("")).toBe("onetwo");
    // The upstream response is let go of (its connection closed), and the slot freed.
    await waitFor("the upstream to see the router hang up", () => a.open() === 0);
    await waitFor("the slot to be freed", async () => (await metric('responses_router_endpoint_in_flight{upstream="a"}')) === 0);
  });

  it("a client that disconnects mid-stream aborts the upstream call and frees the slot", async () => {
    const frames = Array.from({ length: 200 }, (_, i) => chatChunk({ content: `t${i} ` }));
    a.enqueue("/chat/completions", { kind: "sse", frames, delayMs: 20 });
    const ctrl = new AbortController();
    const res = await post("/v1/chat/completions", { model: "solo", messages: hi, stream: true }, ctrl.signal);
    const reader = res.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toContain("t0");
    const abortedBefore = a.aborted;
    ctrl.abort();
    await reader.cancel().catch(() => {});
    await waitFor("the upstream to see the router hang up", () => a.aborted > abortedBefore);
    await waitFor("the slot to be freed", async () => (await metric('responses_router_endpoint_in_flight{upstream="a"}')) === 0);
  });
});

describe("response cache (opt-in per model or per request)", () => {
  it("a hit never touches the backend, and a streamed request gets the cached answer as chat chunks", async () => {
    const messages = [{ role: "user" as const, content: "cache me" }];
    a.enqueue("/chat/completions", { kind: "json", body: chatCompletion("cached words", "qwen3:4b") });
    const miss = await router.client.chat.completions.create({ model: "cached", messages, temperature: 0 });
    expect(miss.model).toBe("cached");
    const hit = await router.client.chat.completions.create({ model: "cached", messages, temperature: 0 });
    expect(hit.choices).toEqual(miss.choices);
    expect(hit.id).not.toBe(miss.id);
    expect(hit.model).toBe("cached");
    expect(hit.usage).toEqual(miss.usage);

    const chunks: unknown[] = [];
    const stream = await router.client.chat.completions.create({ model: "cached", messages, temperature: 0, stream: true, stream_options: { include_usage: true } });
    for await (const c of stream) chunks.push(c);
    expect(chunks.map((c: any) => c.choices[0]?.delta.content ?? null)).toEqual(["cached words", null, null]);
    expect((chunks[2] as any).usage).toEqual(miss.usage);
    expect(a.requests).toHaveLength(1);

    // A different answer-shaping field is a different key; `router.cache: false` skips the cache and is never sent upstream.
    await router.client.chat.completions.create({ model: "cached", messages, temperature: 1 });
    await post("/v1/chat/completions", { model: "cached", messages, temperature: 0, router: { cache: false } });
    expect(a.requests).toHaveLength(3);
    expect(a.requests[2]!.body).toEqual({ model: "qwen3:4b", messages, temperature: 0 });
  });

  it("a streamed tool-call answer is cached whole and served again as JSON and through the SDK's stream helper", async () => {
    const messages = [{ role: "user" as const, content: "weather in Paris?" }];
    a.enqueue("/chat/completions", { kind: "sse", frames: [chatChunk({ role: "assistant", content: null }), ...chatToolCallChunks([{ id: "call_1", name: "get_weather", args: ['{"ci', 'ty":"Paris"}'] }])] });
    const first = await router.client.chat.completions.stream({ model: "cached", messages }).finalChatCompletion();
    await waitFor("the streamed answer to be cached", async () => (await metric('responses_router_tokens_total{model="cached",upstream="a",type="output",key="team"}')) >= 4);
    const again = await router.client.chat.completions.create({ model: "cached", messages });
    expect(again.choices[0]!.message.tool_calls).toEqual([{ id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }]);
    expect(again.choices[0]!.finish_reason).toBe("tool_calls");
    const replay = await router.client.chat.completions.stream({ model: "cached", messages }).finalChatCompletion();
    expect(replay.choices[0]!.message.tool_calls).toEqual(first.choices[0]!.message.tool_calls);
    expect(a.requests).toHaveLength(1);
  });

  it("an answer cut short (finish_reason length) is not cached", async () => {
    const messages = [{ role: "user" as const, content: "long story" }];
    a.enqueue("/chat/completions", { kind: "json", body: chatCompletion("Once upon", "qwen3:4b", { finish_reason: "length" }) });
    await router.client.chat.completions.create({ model: "cached", messages });
    await router.client.chat.completions.create({ model: "cached", messages });
    expect(a.requests).toHaveLength(2);
  });
});

describe("metrics", () => {
  it("labels requests with model and endpoint and counts the backend's tokens", async () => {
    const labels = 'model="solo",upstream="a"';
    const before = await metric(`responses_router_tokens_total{${labels},type="input",key="team"}`);
    const reqBefore = await metric(`responses_router_requests_total{route="/v1/chat/completions",${labels},status="200",key="team"}`);
    const overheadBefore = await metric('responses_router_overhead_seconds_count{route="/v1/chat/completions"}');
    a.enqueue("/chat/completions", { kind: "json", body: chatCompletion("x", "solo", { usage: { prompt_tokens: 11, completion_tokens: 3, total_tokens: 14 } }) });
    await router.client.chat.completions.create({ model: "solo", messages: hi });
    expect(await metric(`responses_router_tokens_total{${labels},type="input",key="team"}`)).toBe(before + 11);
    expect(await metric(`responses_router_requests_total{route="/v1/chat/completions",${labels},status="200",key="team"}`)).toBe(reqBefore + 1);
    expect(await metric('responses_router_overhead_seconds_count{route="/v1/chat/completions"}')).toBe(overheadBefore + 1);
    // An unknown model is a 404 counted without a model label: clients cannot mint metric series.
    expect((await post("/v1/chat/completions", { model: "made-up-model-123", messages: hi })).status).toBe(404);
    const text = await (await router.fetch("/metrics")).text();
    expect(text).not.toContain("made-up-model-123");
    expect(await metric('responses_router_requests_total{route="/v1/chat/completions",model="",upstream="",status="404",key="team"}')).toBeGreaterThanOrEqual(1);
  });
});

describe("embeddings pass-through", () => {
  it("routes to the model's pool with upstream_model, forwards the body and keeps usage", async () => {
    a.setDefault("/embeddings", (req) => {
      const vec = new Float32Array([0.5, -0.25, 1]);
      const embedding = req.body.encoding_format === "base64" ? Buffer.from(vec.buffer).toString("base64") : Array.from(vec);
      const data = (req.body.input as string[]).map((_, index) => ({ object: "embedding", index, embedding }));
      return { kind: "json", body: { object: "list", data, model: req.body.model, usage: { prompt_tokens: 4, total_tokens: 4 } } };
    });
    const before = await metric('responses_router_tokens_total{model="embed",upstream="a",type="input",key="team"}');
    const r = await router.client.embeddings.create({ model: "embed", input: ["first", "second"], dimensions: 3 });
    expect(r.data.map((d) => Array.from(d.embedding))).toEqual([
      [0.5, -0.25, 1],
      [0.5, -0.25, 1],
    ]);
    expect(r.model).toBe("embed");
    expect(r.usage).toEqual({ prompt_tokens: 4, total_tokens: 4 });
    expect(a.requests[0]!.body).toEqual({ model: "nomic-embed-text", input: ["first", "second"], dimensions: 3, encoding_format: "base64" });
    expect(await metric('responses_router_tokens_total{model="embed",upstream="a",type="input",key="team"}')).toBe(before + 4);
  });

  it("answers 404 for an unknown model, 400 without input, and keeps a backend's 400", async () => {
    expect((await post("/v1/embeddings", { model: "nope", input: "x" })).status).toBe(404);
    const missing = await post("/v1/embeddings", { model: "embed" });
    expect([missing.status, ((await missing.json()) as ErrorBody).error.param]).toEqual([400, "input"]);
    a.enqueue("/embeddings", upstreamError(400, "This model's maximum context length is 8192 tokens", "context_length_exceeded", "invalid_request_error", "input"));
    const err = await router.client.embeddings.create({ model: "embed", input: "x".repeat(10) }).then(() => null, (e: unknown) => e);
    expect((err as APIError).status).toBe(400);
    expect((err as APIError).code).toBe("context_length_exceeded");
  });
});
