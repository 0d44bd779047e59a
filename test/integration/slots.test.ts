import { afterEach, describe, expect, it } from "vitest";
import { metricSample } from "../helpers/metrics-text.js";
import { chatTextChunks, nativeEvents, nativeResponse, startMockUpstream, type MockUpstream } from "../helpers/mock-upstream.js";
import { poolConfig } from "../helpers/pool-config.js";
import { startTestRouter, type TestRouter } from "../helpers/router.js";
import { postResponses, readUntil, waitUntil } from "../helpers/wait.js";

/** Endpoint slots: the wait queue, 429 when it times out, and slots freed the moment a client leaves. */

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function setup(opts: Parameters<typeof poolConfig>[1] = {}): Promise<{ up: MockUpstream; r: TestRouter }> {
  const up = await startMockUpstream();
  cleanups.push(() => up.close());
  const r = await startTestRouter(poolConfig([up.url], { endpoint: { max_concurrency: 1 }, ...opts }));
  cleanups.push(() => r.close(500));
  return { up, r };
}

const inFlight = (r: TestRouter) => r.runtime.pool.get("a")!.inFlight;
const slowStream = (parts: number) => ({ kind: "sse" as const, frames: [...chatTextChunks(Array.from({ length: parts }, (_, i) => `t${i} `)), "data: [DONE]\n\n"], delayMs: 50 });

describe("endpoint slots", () => {
  it("queues a request while every endpoint is full, then answers 429 with Retry-After after queue_timeout", async () => {
    const { up, r } = await setup({ routing: { queue_timeout: "300ms" } });
    up.enqueue("/chat/completions", { kind: "hang" });
    const holder = new AbortController();
    const first = postResponses(r.url, { model: "m", input: "hold" }, { signal: holder.signal }).catch((e: Error) => e);
    await waitUntil("the first request holds the only slot", () => inFlight(r) === 1);

    const res = await postResponses(r.url, { model: "m", input: "waits" });
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBe("1");
    expect(await res.json()).toEqual({
      error: { message: "All endpoints serving model 'm' are at their concurrency limit; retry shortly.", type: "rate_limit_error", param: null, code: "rate_limit_exceeded" },
    });
    // The queued request never reached the upstream.
    expect(up.requests.filter((q) => q.path === "/chat/completions")).toHaveLength(1);
    const metrics = await (await r.fetch("/metrics")).text();
    expect(metricSample(metrics, "responses_router_pool_rejections_total", { model: "m" })).toBe(1);

    holder.abort();
    await first;
    await waitUntil("slot released", () => inFlight(r) === 0);
  });

  it("serves a queued request as soon as the slot frees up", async () => {
    const { up, r } = await setup();
    up.enqueue("/chat/completions", slowStream(6));
    const first = r.client.responses.stream({ model: "m", input: "one" }).finalResponse();
    await waitUntil("the first request holds the only slot", () => inFlight(r) === 1);
    const second = r.client.responses.create({ model: "m", input: "two" });
    const [a, b] = await Promise.all([first, second]);
    expect(a.output_text).toBe("t0 t1 t2 t3 t4 t5 ");
    expect(b.output_text).toBe("Hello world");
    expect(inFlight(r)).toBe(0);
  });

  it("a client that disconnects mid-stream aborts the upstream call at once and frees its slot (chat)", async () => {
    const { up, r } = await setup();
    up.enqueue("/chat/completions", slowStream(400));
    const ctl = new AbortController();
    const res = await postResponses(r.url, { model: "m", input: "long", stream: true }, { signal: ctl.signal });
    await readUntil(res, (t) => t.includes("response.output_text.delta"));
    expect(inFlight(r)).toBe(1);
    ctl.abort();
    await waitUntil("the upstream saw the abort", () => up.aborted === 1);
    await waitUntil("slot released", () => inFlight(r) === 0);
    expect(up.open()).toBe(0);
    // The freed slot serves the next request.
    expect((await r.client.responses.create({ model: "m", input: "next" })).output_text).toBe("Hello world");
  });

  it("a client that disconnects mid-stream aborts the upstream call and frees its slot (native)", async () => {
    const { up, r } = await setup({ kind: "openai" });
    up.enqueue("/responses", { kind: "sse", frames: nativeEvents(nativeResponse("x".repeat(40))), delayMs: 400 });
    const ctl = new AbortController();
    const res = await postResponses(r.url, { model: "m", input: "long", stream: true }, { signal: ctl.signal });
    await readUntil(res, (t) => t.includes("response.created"));
    ctl.abort();
    await waitUntil("the upstream saw the abort", () => up.aborted === 1);
    await waitUntil("slot released", () => inFlight(r) === 0);
  });

  it("a client that disconnects while waiting for a JSON answer aborts the upstream call and frees its slot", async () => {
    const { up, r } = await setup();
    up.enqueue("/chat/completions", { kind: "hang" });
    const ctl = new AbortController();
    const pending = postResponses(r.url, { model: "m", input: "x" }, { signal: ctl.signal }).catch((e: Error) => e);
    await waitUntil("the upstream has the request", () => up.open() === 1);
    ctl.abort();
    expect(await pending).toBeInstanceOf(Error);
    await waitUntil("the upstream saw the abort", () => up.aborted === 1);
    await waitUntil("slot released", () => inFlight(r) === 0);
  });

  it("a client that disconnects while queued leaves the queue and never reaches the upstream", async () => {
    const { up, r } = await setup({ routing: { queue_timeout: "20s" } });
    up.enqueue("/chat/completions", { kind: "hang" });
    const holder = new AbortController();
    const first = postResponses(r.url, { model: "m", input: "hold" }, { signal: holder.signal }).catch((e: Error) => e);
    await waitUntil("the first request holds the only slot", () => inFlight(r) === 1 && up.open() === 1);

    const queued = new AbortController();
    const second = postResponses(r.url, { model: "m", input: "queued" }, { signal: queued.signal }).catch((e: Error) => e);
    await waitUntil("the second request is queued", () => r.runtime.pool.queued === 1);
    queued.abort();
    expect(await second).toBeInstanceOf(Error);
    await waitUntil("the aborted request left the queue", () => r.runtime.pool.queued === 0);

    holder.abort();
    await first;
    await waitUntil("slot released", () => inFlight(r) === 0);
    // The next request gets the slot at once (the aborted waiter did not take it) and is the second upstream call.
    expect((await r.client.responses.create({ model: "m", input: "third" })).output_text).toBe("Hello world");
    expect(up.requests.filter((q) => q.path === "/chat/completions").map((q) => q.body.messages.at(-1).content)).toEqual(["hold", "third"]);
    expect(inFlight(r)).toBe(0);
  });
});
