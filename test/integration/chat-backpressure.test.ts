import { createServer, request, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sleep } from "../helpers/mock-upstream.js";
import { startTestRouter, type TestRouter } from "../helpers/router.js";

/** 64 MiB of chunks: far more than the socket buffers between the upstream, the router and the client hold. */
const FRAMES = 4096;
const PAYLOAD = "x".repeat(16 * 1024);

/** An upstream that streams FRAMES chunks as fast as its socket takes them, and says how far it got. */
function startFloodUpstream(): Promise<{ server: Server; url: string; state: { written: number; waiting: boolean; done: boolean } }> {
  const state = { written: 0, waiting: false, done: false };
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", async () => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      for (let i = 0; i < FRAMES; i++) {
        const chunk = { id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: { content: PAYLOAD }, finish_reason: null }], n: i };
        if (!res.write(`data: ${JSON.stringify(chunk)}\n\n`)) {
          state.waiting = true;
          await new Promise((r) => res.once("drain", r));
          state.waiting = false;
        }
        state.written = i + 1;
      }
      res.end("data: [DONE]\n\n");
      state.done = true;
    });
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, state })),
  );
}

describe("chat pass-through stream and a client that does not read", () => {
  let up: Awaited<ReturnType<typeof startFloodUpstream>>;
  let router: TestRouter;
  beforeAll(async () => {
    up = await startFloodUpstream();
    router = await startTestRouter({ endpoints: [{ name: "flood", url: up.url, kind: "chat" }], models: { m: { endpoints: ["flood"] } } });
  });
  afterAll(async () => {
    await router.close(1000);
    up.server.closeAllConnections();
    await new Promise<void>((r) => up.server.close(() => r()));
  });

  it("pauses the upstream read until the client drains, then delivers every chunk in order", async () => {
    const res = await new Promise<IncomingMessage>((resolve, reject) => {
      const req = request(`${router.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" } }, resolve);
      req.on("error", reject);
      req.end(JSON.stringify({ model: "m", stream: true, messages: [{ role: "user", content: "hi" }] }));
    });
    res.pause();
    // The client reads nothing: the router stops reading the upstream, whose writes then wait for
    // good. Without backpressure the router would take all of the upstream's 64 MiB (the upstream
    // would get done); so wait until the upstream is done or has not moved for a second.
    for (;;) {
      const written = up.state.written;
      await sleep(1000);
      if (up.state.done || up.state.written === written) break;
    }
    expect(up.state.done).toBe(false);
    expect(up.state.waiting).toBe(true);

    let text = "";
    res.setEncoding("utf8");
    for await (const part of res) text += part as string;
    const frames = text.split("\n\n").filter((f) => f.length > 0);
    expect(frames).toHaveLength(FRAMES + 1);
    expect(frames.at(-1)).toBe("data: [DONE]");
    frames.slice(0, -1).forEach((f, i) => {
      const chunk = JSON.parse(f.slice("data: ".length)) as { n: number; choices: { delta: { content: string } }[] };
      if (chunk.n !== i || chunk.choices[0]!.delta.content !== PAYLOAD) expect({ at: i, n: chunk.n }).toEqual({ at: i, n: i });
    });
    expect(up.state.done).toBe(true);
  });
});
