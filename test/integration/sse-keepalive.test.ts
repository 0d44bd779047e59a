import type { Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHeldSseUpstream } from "../helpers/mock-upstream.js";
import { parseSse, startTestRouter, type TestRouter } from "../helpers/router.js";

/**
 * An upstream that thinks before it answers (SILENCE_MS after its headers, nothing): the
 * router's stream to the client gets `: keepalive` comment lines meanwhile, between events,
 * and the SDK reads the same events as without them.
 */
const SILENCE_MS = 700;
let upstream: Server;
let router: TestRouter;
let quiet: TestRouter;

beforeAll(async () => {
  let url: string;
  ({ server: upstream, url } = await startHeldSseUpstream((send, res) => {
    const timer = setTimeout(send, SILENCE_MS);
    res.on("close", () => clearTimeout(timer));
  }));
  const config = (keepalive: string) => ({
    server: { sse_keepalive: keepalive },
    endpoints: [
      { name: "oai", url, kind: "openai" },
      { name: "box", url, kind: "chat" },
    ],
    models: { "gpt-4.1": { endpoints: ["oai"] }, local: { endpoints: ["box"] } },
  });
  router = await startTestRouter(config("200ms"));
  quiet = await startTestRouter(config("0"));
});

afterAll(async () => {
  await router?.close(1000);
  await quiet?.close(1000);
  await new Promise((resolve) => upstream?.close(resolve));
});

const post = (r: TestRouter, path: string, body: unknown) => r.fetch(path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

/** The body's frames in order, a comment frame as `:`. */
const frames = (text: string) => text.split("\n\n").filter((f) => f.length > 0).map((f) => (f.startsWith(":") ? ":" : (/^event: (.+)$/m.exec(f)?.[1] ?? "data")));

describe("SSE keepalive comments on a silent stream", () => {
  it("translated Responses stream: comments after response.in_progress while the upstream is silent, then the same events", async () => {
    const text = await (await post(router, "/v1/responses", { model: "local", input: "hi", stream: true })).text();
    const seen = frames(text);
    expect(seen.slice(0, 2)).toEqual(["response.created", "response.in_progress"]);
    const comments = seen.filter((f) => f === ":").length;
    expect(comments).toBeGreaterThanOrEqual(2);
    expect(comments).toBeLessThanOrEqual(Math.ceil(SILENCE_MS / 200) + 1);
    expect(seen.at(-1)).toBe("response.completed");
    // Each comment is a frame of its own: the events around it parse whole.
    expect(text).toMatch(/\n\n: keepalive\n\n/);
    const events = parseSse(text.replaceAll(": keepalive\n\n", ""));
    expect(events.map((e) => e.data.sequence_number)).toEqual(events.map((_, i) => i));
  });

  it("the openai SDK reads the stream as if there were none", async () => {
    const stream = await router.client.responses.create({ model: "local", input: "hi", stream: true });
    const types: string[] = [];
    let text = "";
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === "response.output_text.delta") text += event.delta;
    }
    expect(types[0]).toBe("response.created");
    expect(types.at(-1)).toBe("response.completed");
    expect(text).toBe("Hello");
  });

  it("native Responses stream and chat-completions pass-through get them too", async () => {
    const native = frames(await (await post(router, "/v1/responses", { model: "gpt-4.1", input: "hi", stream: true })).text());
    expect(native).toContain(":");
    expect(native.at(-1)).toBe("response.completed");
    const chat = await (await post(router, "/v1/chat/completions", { model: "local", messages: [{ role: "user", content: "hi" }], stream: true })).text();
    expect(chat.startsWith(": keepalive\n\n")).toBe(true);
    expect(chat.endsWith("data: [DONE]\n\n")).toBe(true);
    const sdk = await router.client.chat.completions.create({ model: "local", messages: [{ role: "user", content: "hi" }], stream: true });
    let content = "";
    for await (const chunk of sdk) content += chunk.choices?.[0]?.delta?.content ?? "";
    expect(content).toBe("Hello");
  });

  it("none with sse_keepalive: 0", async () => {
    const text = await (await post(quiet, "/v1/responses", { model: "local", input: "hi", stream: true })).text();
    expect(text).not.toContain(": keepalive");
    expect(frames(text).at(-1)).toBe("response.completed");
  });
});
