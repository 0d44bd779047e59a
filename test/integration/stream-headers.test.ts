import type { Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHeldSseUpstream } from "../helpers/mock-upstream.js";
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
  let url: string;
  ({ server: upstream, url } = await startHeldSseUpstream((send) => (release = send)));
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
