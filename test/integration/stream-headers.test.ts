import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chatTextChunks, nativeEvents, nativeResponse } from "../helpers/mock-upstream.js";
import { startTestRouter, type TestRouter } from "../helpers/router.js";

/**
 * A stream whose upstream answered its headers but not yet its first event: the client gets
 * the router's headers without waiting for that event (the upstream here sends nothing more
 * until the test has seen them, so a router holding its headers back would never answer).
 */
let upstream: Server;
let router: TestRouter;
let release: () => void = () => {};

beforeAll(async () => {
  upstream = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.flushHeaders();
      const frames = req.url!.endsWith("/chat/completions")
        ? [...chatTextChunks(["Hel", "lo"]), "data: [DONE]\n\n"].map((f) => (typeof f === "string" ? f : `data: ${JSON.stringify(f.data ?? f)}\n\n`))
        : nativeEvents(nativeResponse("Hello")).map((f) => `event: ${f.event}\ndata: ${JSON.stringify(f.data)}\n\n`);
      release = () => res.end(frames.join(""));
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;
  router = await startTestRouter({
    endpoints: [
      { name: "oai", url, kind: "openai" },
      { name: "box", url, kind: "chat" },
    ],
    models: { "gpt-4.1": { endpoints: ["oai"] }, local: { endpoints: ["box"] } },
  });
});

afterAll(async () => {
  await router?.close(1000);
  await new Promise((resolve) => upstream?.close(resolve));
});

const post = (path: string, body: unknown) => router.fetch(path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

describe("stream headers before the first event", () => {
  it("native Responses stream", async () => {
    const res = await post("/v1/responses", { model: "gpt-4.1", input: "hi", stream: true });
    expect(res.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    release();
    expect(await res.text()).toContain("event: response.completed");
  });

  it("chat-completions pass-through stream", async () => {
    const res = await post("/v1/chat/completions", { model: "local", messages: [{ role: "user", content: "hi" }], stream: true });
    expect(res.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    release();
    expect(await res.text()).toContain("data: [DONE]");
  });
});
