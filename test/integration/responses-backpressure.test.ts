import { createServer, request, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Redis } from "ioredis";
import { WebSocket } from "ws";
import { nativeEvents, nativeResponse, sleep } from "../helpers/mock-upstream.js";
import { startRedis } from "../helpers/redis-server.js";
import { startTestRouter, type TestRouter } from "../helpers/router.js";
import { waitUntil } from "../helpers/wait.js";

/** 64 MiB of deltas: far more than the socket buffers between the upstream, the router and the client hold. */
const DELTAS = 4096;
const PAYLOAD = "x".repeat(16 * 1024);

interface FloodState {
  written: number;
  waiting: boolean;
  done: boolean;
  /** The upstream's connection closed before its last write (the router aborted the call). */
  cut: boolean;
}

const sse = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

/**
 * An upstream that streams DELTAS text deltas as fast as its socket takes them, and says how far
 * it got: OpenAI's Responses events on /v1/responses, chat chunks on /v1/chat/completions.
 */
function startFloodUpstream(deltas = DELTAS): Promise<{ server: Server; url: string; state: FloodState }> {
  const state: FloodState = { written: 0, waiting: false, done: false, cut: false };
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", async () => {
      res.on("close", () => {
        if (!state.done) state.cut = true;
      });
      const native = req.url!.endsWith("/responses");
      const events = nativeEvents(nativeResponse("ok"), []);
      // created, in_progress, output_item.added, content_part.added | the deltas | the four closing events
      const head = events.slice(0, 4);
      const tail = events.slice(4);
      res.writeHead(200, { "content-type": "text/event-stream" });
      if (native) res.write(head.map((f) => sse(f.event, f.data)).join(""));
      for (let i = 0; i < deltas; i++) {
        const frame = native
          ? sse("response.output_text.delta", { type: "response.output_text.delta", item_id: "msg_up1", output_index: 0, content_index: 0, delta: PAYLOAD, logprobs: [], sequence_number: head.length + i })
          : `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: { content: PAYLOAD }, finish_reason: null }] })}\n\n`;
        if (!res.write(frame)) {
          state.waiting = true;
          const closed = await new Promise<boolean>((resolve) => {
            res.once("drain", () => resolve(false));
            res.once("close", () => resolve(true));
          });
          state.waiting = false;
          if (closed) return;
        }
        state.written = i + 1;
      }
      if (native) res.end(tail.map((f) => sse(f.event, { ...(f.data as object), sequence_number: (f.data as { sequence_number: number }).sequence_number + deltas })).join(""));
      else res.end(`data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })}\n\ndata: [DONE]\n\n`);
      state.done = true;
    });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, state })));
}

/** A streamed create whose answer the client does not read yet. */
function openStream(router: TestRouter, model: string): Promise<IncomingMessage> {
  return new Promise<IncomingMessage>((resolve, reject) => {
    const req = request(`${router.url}/v1/responses`, { method: "POST", headers: { "content-type": "application/json" } }, resolve);
    req.on("error", reject);
    req.end(JSON.stringify({ model, stream: true, store: false, input: "hi" }));
  });
}

/** The events of an SSE body, in order. */
function sseEvents(text: string): { type: string; sequence_number: number; delta?: string; response?: { id: string } }[] {
  return text
    .split("\n\n")
    .filter((f) => f.length > 0)
    .map((f) => JSON.parse(f.slice(f.indexOf("data: ") + 6)) as { type: string; sequence_number: number; delta?: string; response?: { id: string } });
}

async function readAll(res: IncomingMessage): Promise<string> {
  let text = "";
  res.setEncoding("utf8");
  for await (const part of res) text += part as string;
  return text;
}

/** Waits until the upstream is done or has not moved for a second (its writes wait for good). */
async function untilStalled(state: FloodState): Promise<void> {
  for (;;) {
    const written = state.written;
    await sleep(1000);
    if (state.done || state.written === written) return;
  }
}

describe("a Responses stream and a client that does not read", () => {
  let up: Awaited<ReturnType<typeof startFloodUpstream>>;
  let router: TestRouter;
  beforeAll(async () => {
    up = await startFloodUpstream();
    router = await startTestRouter({
      endpoints: [
        { name: "native", url: up.url, kind: "openai", api_key: "sk-flood" },
        { name: "chat", url: up.url, kind: "chat" },
      ],
      models: { native: { endpoints: ["native"] }, translated: { endpoints: ["chat"] } },
    });
  });
  afterAll(async () => {
    await router.close(1000);
    up.server.closeAllConnections();
    await new Promise<void>((r) => up.server.close(() => r()));
  });
  const reset = () => Object.assign(up.state, { written: 0, waiting: false, done: false, cut: false });
  /** The upstream's writes wait for good: without backpressure the router would read all 64 MiB (the upstream would get done). */
  const expectStalled = async () => {
    await untilStalled(up.state);
    expect(up.state.done).toBe(false);
    expect(up.state.waiting).toBe(true);
  };
  /** A streamed create over HTTP whose client reads nothing until the upstream stalled. */
  const pausedStream = async (model: string) => {
    reset();
    const res = await openStream(router, model);
    expect(res.statusCode).toBe(200);
    res.pause();
    await expectStalled();
    return res;
  };

  it("native: pauses the upstream read until the client drains, then delivers every event in order", async () => {
    const res = await pausedStream("native");
    const events = sseEvents(await readAll(res));
    expect(events.filter((e) => e.type === "response.output_text.delta" && e.delta === PAYLOAD)).toHaveLength(DELTAS);
    events.forEach((e, i) => {
      if (e.sequence_number !== i) expect({ at: i, seq: e.sequence_number }).toEqual({ at: i, seq: i });
    });
    expect(events.at(-1)!.type).toBe("response.completed");
    expect(events.at(-1)!.response!.id).toBe(events[0]!.response!.id);
    expect(events[0]!.response!.id).not.toBe("resp_upstream123");
    expect(up.state.done).toBe(true);
  });

  it("over a WebSocket: a client that does not read pauses the upstream too, then gets every event", async () => {
    reset();
    const ws = new WebSocket(`${router.url.replace("http", "ws")}/v1/responses`);
    const events: { type: string; delta?: string; sequence_number: number }[] = [];
    const completed = new Promise<void>((resolve, reject) => {
      ws.on("message", (data) => {
        const ev = JSON.parse(String(data)) as (typeof events)[number];
        events.push(ev);
        if (ev.type === "response.completed") resolve();
        else if (ev.type === "error" || ev.type === "response.failed") reject(new Error(String(data)));
      });
      ws.on("error", reject);
    });
    await new Promise((resolve) => ws.once("open", resolve));
    ws.send(JSON.stringify({ type: "response.create", model: "native", store: false, input: "hi" }));
    ws.pause();
    await expectStalled();
    ws.resume();
    await completed;
    expect(events.filter((e) => e.type === "response.output_text.delta" && e.delta === PAYLOAD)).toHaveLength(DELTAS);
    events.forEach((e, i) => {
      if (e.sequence_number !== i) expect({ at: i, seq: e.sequence_number }).toEqual({ at: i, seq: i });
    });
    expect(up.state.done).toBe(true);
    ws.close();
  });

  it("translated: pauses the chat upstream's read while the client is full; a client that leaves then ends the call", async () => {
    const res = await pausedStream("translated");
    // What a paused read holds up is given up with the client: the upstream call is aborted.
    res.destroy();
    for (let i = 0; i < 50 && !up.state.cut; i++) await sleep(100);
    expect(up.state.cut).toBe(true);
    expect(up.state.done).toBe(false);
  });
});

describe("a background response's follower (GET ?stream=true) that does not read, Redis store", () => {
  /** 2,500 deltas of 16 KiB: three of the follower's reads of the log (1,000 events each), each far more than the sockets hold. */
  const LOGGED = 2500;
  let redis: Awaited<ReturnType<typeof startRedis>>;
  let up: Awaited<ReturnType<typeof startFloodUpstream>>;
  let router: TestRouter;
  let stats: Redis;
  beforeAll(async () => {
    redis = await startRedis();
    up = await startFloodUpstream(LOGGED);
    router = await startTestRouter({
      endpoints: [{ name: "native", url: up.url, kind: "openai", api_key: "sk-flood" }],
      models: { native: { endpoints: ["native"] } },
      storage: { redis_url: redis.url, prefix: `rrfollow:${process.pid}:` },
    });
    stats = new Redis(redis.url);
  });
  afterAll(async () => {
    stats?.disconnect();
    await router?.close(1000);
    up?.server.closeAllConnections();
    await new Promise<void>((r) => (up ? up.server.close(() => r()) : r()));
    await redis?.stop().catch(() => {});
  });
  const xreads = async () => Number(/cmdstat_xread:calls=(\d+)/.exec(await stats.info("commandstats"))?.[1] ?? 0);

  it("reads the log no further than the client takes it, then delivers every event in order", async () => {
    const job = await router.client.responses.create({ model: "native", input: "hi", background: true });
    await waitUntil("the background job", async () => (await router.client.responses.retrieve(job.id)).status === "completed", 30_000, 100);
    const before = await xreads();
    const res = await new Promise<IncomingMessage>((resolve, reject) => request(`${router.url}/v1/responses/${job.id}?stream=true`, resolve).on("error", reject).end());
    expect(res.statusCode).toBe(200);
    res.pause();
    // Without backpressure the follower read all three batches into the client's socket at once.
    let seen = -1;
    for (let now = await xreads(); now !== seen; now = await xreads()) {
      seen = now;
      await sleep(1000);
    }
    expect(seen - before).toBe(1);
    const events = sseEvents(await readAll(res));
    expect(events.filter((e) => e.type === "response.output_text.delta" && e.delta === PAYLOAD)).toHaveLength(LOGGED);
    events.forEach((e, i) => {
      if (e.sequence_number !== i) expect({ at: i, seq: e.sequence_number }).toEqual({ at: i, seq: i });
    });
    expect(events.at(-1)!.type).toBe("response.completed");
    expect(events.at(-1)!.response!.id).toBe(job.id);
    expect(await xreads()).toBeGreaterThanOrEqual(before + 3);
  });
});
