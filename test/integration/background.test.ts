import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { allEvents, backgroundConfig, callRouter, errorOf, expectContiguous, slowText, sseEvents, until } from "../helpers/background.js";
import { assertResponsesGrammar, runThroughOpenAISdk } from "../helpers/grammar.js";
import { startMockUpstream, upstreamError, type MockUpstream } from "../helpers/mock-upstream.js";
import { startTestRouter, type TestRouter } from "../helpers/router.js";

let chat: MockUpstream;
let oai: MockUpstream;
let router: TestRouter;
let call: ReturnType<typeof callRouter>;
let otherKey: OpenAI;


beforeAll(async () => {
  chat = await startMockUpstream();
  oai = await startMockUpstream();
  router = await startTestRouter(backgroundConfig(chat.url, oai.url), { apiKey: "key-a" });
  call = callRouter(router.url, "key-a");
  otherKey = new OpenAI({ baseURL: `${router.url}/v1`, apiKey: "key-b", maxRetries: 0 });
});
afterAll(async () => {
  await router.close(1000);
  await chat.close();
  await oai.close();
});
beforeEach(() => {
  chat.requests.length = 0;
  oai.requests.length = 0;
});

const settled = (id: string) => until(async () => {
  const r = await router.client.responses.retrieve(id);
  return r.status !== "queued" && r.status !== "in_progress" ? r : null;
}, `response ${id} to finish`);

describe("background mode (memory store)", () => {
  it("answers queued at once, then runs the job: queued -> in_progress -> completed, polled with the SDK", async () => {
    chat.enqueue("/chat/completions", slowText(50));
    const created = await router.client.responses.create({ model: "local", input: "hi", background: true });
    expect(created.status).toBe("queued");
    expect(created.background).toBe(true);
    expect(created.output).toEqual([]);
    const seen = new Set<string | undefined>([created.status]);
    const done = await until(async () => {
      const r = await router.client.responses.retrieve(created.id);
      seen.add(r.status);
      return r.status === "completed" ? r : null;
    }, "completion");
    expect(seen).toContain("in_progress");
    expect(done.output_text).toBe("w0 w1 w2 w3 w4 w5 w6 w7 w8 w9 ");
    expect(done.usage?.output_tokens).toBe(10);
    // The job always streams from the upstream; background is the router's business, never sent upstream.
    const sent = chat.requests[0]!.body;
    expect(sent.stream).toBe(true);
    expect(sent).not.toHaveProperty("background");
    // A finished background response chains like any stored one.
    const next = await router.client.responses.create({ model: "local", input: "more", previous_response_id: created.id });
    expect(next.status).toBe("completed");
    expect(chat.requests[1]!.body.messages.at(-2)).toEqual({ role: "assistant", content: "w0 w1 w2 w3 w4 w5 w6 w7 w8 w9 " });
  });

  it.each([
    ["local", "Hello world"],
    ["gpt-4.1", "Hello from upstream"],
  ])("with stream: true streams the job's events live, starting with response.created (queued), numbered from 0 (%s)", async (model, text) => {
    const res = await call("/v1/responses", { body: { model, input: "hi", background: true, stream: true } });
    expect(res.headers.get("content-type")).toMatch(/text\/event-stream/);
    const events = await allEvents(res);
    expect(events[0]!.type).toBe("response.created");
    expect((events[0]!.response as { status: string }).status).toBe("queued");
    expect(events[1]!.type).toBe("response.in_progress");
    expectContiguous(events);
    const { terminal } = assertResponsesGrammar(events);
    expect(terminal!.type).toBe("response.completed");
    const { final } = await runThroughOpenAISdk(events);
    expect(final.output_text).toBe(text);
    const id = (events[0]!.response as { id: string }).id;
    for (const e of events) expect((e.response as { id?: string } | undefined)?.id ?? id).toBe(id);
    expect((await router.client.responses.retrieve(id)).status).toBe("completed");
  });

  it("the SDK's responses.stream() accepts a background stream, and re-streams it by response_id", async () => {
    const stream = router.client.responses.stream({ model: "gpt-4.1", input: "hi", background: true });
    const final = await stream.finalResponse();
    expect(final.status).toBe("completed");
    expect(final.output_text).toBe("Hello from upstream");
    const again = await router.client.responses.stream({ response_id: final.id }).finalResponse();
    expect(again.output_text).toBe("Hello from upstream");
    expect(again.id).toBe(final.id);
  });

  it("GET ?stream=true&starting_after=N resumes a running response and ends at its terminal event", async () => {
    chat.enqueue("/chat/completions", slowText(50));
    const created = await router.client.responses.create({ model: "local", input: "hi", background: true });
    const resumed: { type: string; sequence_number: number }[] = [];
    for await (const e of await router.client.responses.retrieve(created.id, { stream: true, starting_after: 3 })) resumed.push(e);
    expect(resumed[0]!.sequence_number).toBe(4);
    expectContiguous(resumed as never, 4);
    expect(resumed.at(-1)!.type).toBe("response.completed");
    // Once finished, the whole log reads back the same and ends.
    const full = await allEvents(await call(`/v1/responses/${created.id}?stream=true`));
    expect(full.slice(4)).toEqual(resumed);
    assertResponsesGrammar(full);
  });

  it("re-streaming is only for background responses; starting_after is validated", async () => {
    const fg = await router.client.responses.create({ model: "local", input: "hi" });
    const res = await call(`/v1/responses/${fg.id}?stream=true`);
    expect(res.status).toBe(404);
    expect((await errorOf(res))).toMatchObject({ type: "invalid_request_error", param: "stream" });
    const bg = await router.client.responses.create({ model: "local", input: "hi", background: true });
    const bad = await call(`/v1/responses/${bg.id}?stream=true&starting_after=-3`);
    expect(bad.status).toBe(400);
    expect((await errorOf(bad))).toMatchObject({ param: "starting_after", code: "invalid_value" });
    await settled(bg.id);
  });

  it("cancel stops the upstream call, keeps the partial output and ends followers", async () => {
    chat.enqueue("/chat/completions", slowText());
    const abortedBefore = chat.aborted;
    const res = await call("/v1/responses", { body: { model: "local", input: "hi", background: true, stream: true } });
    const events: { type: string; [k: string]: any }[] = [];
    let cancelled: OpenAI.Responses.Response | null = null;
    for await (const e of sseEvents(res)) {
      events.push(e);
      if (e.type === "response.output_text.delta" && e.delta === "w1 ") cancelled = await router.client.responses.cancel((events[0]!.response as { id: string }).id);
    }
    expect(cancelled!.status).toBe("cancelled");
    const text = (cancelled!.output[0] as OpenAI.Responses.ResponseOutputMessage).content.map((p) => (p.type === "output_text" ? p.text : "")).join("");
    expect(text.startsWith("w0 w1 ")).toBe(true);
    expect(text).not.toContain("w9");
    expect(cancelled!.output[0]).toMatchObject({ type: "message", status: "incomplete" });
    // The followers' stream ends with a terminal lifecycle event carrying the cancelled response.
    const last = events.at(-1)!;
    expect(last.type).toBe("response.incomplete");
    expect(last.response.status).toBe("cancelled");
    expect(last.response.output).toEqual(cancelled!.output);
    expectContiguous(events as never);
    const { final } = await runThroughOpenAISdk(events as never);
    expect(final.status).toBe("cancelled");
    await until(() => chat.aborted > abortedBefore, "the upstream call to be aborted");
    // Idempotent: a finished response comes back unchanged.
    expect(await router.client.responses.cancel(cancelled!.id)).toEqual(cancelled);
    expect(await router.client.responses.retrieve(cancelled!.id)).toMatchObject({ status: "cancelled", output: cancelled!.output });
  });

  it("cancel of a queued job: it never reaches an upstream", async () => {
    chat.enqueue("/chat/completions", slowText());
    const first = await router.client.responses.create({ model: "local", input: "first", background: true });
    const second = await router.client.responses.create({ model: "local", input: "second", background: true });
    const cancelled = await router.client.responses.cancel(second.id);
    expect(cancelled.status).toBe("cancelled");
    expect(cancelled.output).toEqual([]);
    await router.client.responses.cancel(first.id);
    await settled(first.id);
    expect(chat.requests.map((r) => r.body.messages.at(-1).content)).toEqual(["first"]);
    const events = await allEvents(await call(`/v1/responses/${second.id}?stream=true`));
    expect(events.map((e) => e.type)).toEqual(["response.created", "response.incomplete"]);
  });

  it("cancel is for background responses only, and only for their owner", async () => {
    const fg = await router.client.responses.create({ model: "local", input: "hi" });
    const err = await router.client.responses.cancel(fg.id).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.error).toMatchObject({ type: "invalid_request_error" });
    chat.enqueue("/chat/completions", slowText());
    const bg = await router.client.responses.create({ model: "local", input: "hi", background: true });
    expect(await otherKey.responses.cancel(bg.id).catch((e) => e.status)).toBe(404);
    expect(await otherKey.responses.retrieve(bg.id).catch((e) => e.status)).toBe(404);
    const missing = await router.client.responses.cancel("resp_doesnotexist").catch((e) => e.status);
    expect(missing).toBe(404);
    await router.client.responses.cancel(bg.id);
  });

  it("an upstream error becomes a failed response with the upstream's error", async () => {
    chat.enqueue("/chat/completions", upstreamError(400, "context too long", "context_length_exceeded"));
    const created = await router.client.responses.create({ model: "local", input: "hi", background: true });
    const done = await settled(created.id);
    expect(done.status).toBe("failed");
    expect(done.error).toEqual({ code: "context_length_exceeded", message: "context too long" });
    const events = await allEvents(await call(`/v1/responses/${created.id}?stream=true`));
    expect(events.at(-1)!.type).toBe("response.failed");
  });

  it("delete stops a running job; the response and its events are gone", async () => {
    chat.enqueue("/chat/completions", slowText());
    const created = await router.client.responses.create({ model: "local", input: "hi", background: true });
    await until(async () => (await router.client.responses.retrieve(created.id)).status === "in_progress", "job start");
    const abortedBefore = chat.aborted;
    expect(await router.client.responses.delete(created.id)).toEqual({ id: created.id, object: "response", deleted: true });
    await until(() => chat.aborted > abortedBefore, "the upstream call to be aborted");
    expect(await router.client.responses.retrieve(created.id).catch((e) => e.status)).toBe(404);
    expect((await call(`/v1/responses/${created.id}?stream=true`)).status).toBe(404);
  });

  it("background with store: false is accepted and still pollable until it finishes", async () => {
    const created = await router.client.responses.create({ model: "local", input: "hi", background: true, store: false });
    expect(created.status).toBe("queued");
    expect((created as { store?: boolean }).store).toBe(false);
    await until(async () => (await router.client.responses.retrieve(created.id)).status === "completed", "job end");
    expect((await router.client.responses.retrieve(created.id)).output_text).toBe("Hello world");
  });

  it("counts finished jobs by status and shows waiting jobs", async () => {
    const metrics = await (await fetch(`${router.url}/metrics`)).text();
    expect(metrics).toMatch(/responses_router_background_jobs_finished_total\{status="completed"\} [1-9]/);
    expect(metrics).toMatch(/responses_router_background_jobs_finished_total\{status="cancelled"\} [1-9]/);
    expect(metrics).toMatch(/responses_router_background_jobs_finished_total\{status="failed"\} [1-9]/);
    expect(metrics).toContain('responses_router_background_jobs{status="queued"} 0');
    expect(metrics).toContain('responses_router_background_jobs{status="in_progress"} 0');
  });
});

describe("background mode: shutdown (memory store)", () => {
  it("jobs running or queued when the router stops end failed, and their streams say why", async () => {
    const up = await startMockUpstream();
    up.setDefault("/chat/completions", { kind: "hang" });
    const r = await startTestRouter(backgroundConfig(up.url, up.url), { apiKey: "key-a" });
    try {
      const follow = async (input: string) => {
        const res = await callRouter(r.url, "key-a")("/v1/responses", { body: { model: "local", input, background: true, stream: true } });
        const events: { type: string; [k: string]: any }[] = [];
        const done = (async () => {
          for await (const e of sseEvents(res)) events.push(e);
        })();
        return { events, done };
      };
      const running = await follow("runs");
      await until(() => up.open() === 1, "the upstream call");
      const queued = await follow("waits"); // concurrency 1: never starts
      await r.close(800);
      await Promise.all([running.done, queued.done]);
      expect(running.events.map((e) => e.type)).toEqual(["response.created", "response.failed"]);
      expect(running.events[1]!.response.error).toEqual({ code: "server_error", message: "The router shut down before this background response finished." });
      expect(queued.events.map((e) => e.type)).toEqual(["response.created", "response.failed"]);
      expect(queued.events[1]!.response.error.code).toBe("server_error");
      expect(up.requests).toHaveLength(1);
    } finally {
      await r.close(100);
      await up.close();
    }
  });
});
