import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startChildRouter, type ChildRouter } from "../helpers/child-router.js";

/**
 * An upstream that sends a long answer all at once (thousands of SSE chunks in one burst, as a
 * fast backend or a buffering proxy does) must stream through the router to its end. The router
 * runs in a child process so that a router stuck in a loop fails this test by its timeout instead
 * of freezing the test runner with it.
 */
const CHUNKS = 3000;
let upstream: Server;
let router: ChildRouter;
let dir: string;

function chatBurst(res: import("node:http").ServerResponse): void {
  res.writeHead(200, { "content-type": "text/event-stream" });
  const chunk = (delta: object, finish: string | null = null) => `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  res.write(chunk({ role: "assistant", content: "" }));
  for (let i = 0; i < CHUNKS; i++) res.write(chunk({ content: `w${i} ` }));
  res.end(chunk({}, "stop") + "data: [DONE]\n\n");
}

function nativeBurst(res: import("node:http").ServerResponse): void {
  res.writeHead(200, { "content-type": "text/event-stream" });
  let seq = 0;
  const ev = (type: string, payload: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...payload, sequence_number: seq++ })}\n\n`;
  const base = { id: "resp_up", object: "response", created_at: 1, status: "in_progress", model: "m", output: [], usage: null };
  const msg = { id: "msg_up", type: "message", role: "assistant", status: "in_progress", content: [] };
  res.write(ev("response.created", { response: base }) + ev("response.output_item.added", { output_index: 0, item: msg }));
  res.write(ev("response.content_part.added", { item_id: "msg_up", output_index: 0, content_index: 0, part: { type: "output_text", text: "", annotations: [] } }));
  let text = "";
  for (let i = 0; i < CHUNKS; i++) {
    text += `w${i} `;
    res.write(ev("response.output_text.delta", { item_id: "msg_up", output_index: 0, content_index: 0, delta: `w${i} ` }));
  }
  const part = { type: "output_text", text, annotations: [] };
  const done = { ...msg, status: "completed", content: [part] };
  res.end(
    ev("response.output_text.done", { item_id: "msg_up", output_index: 0, content_index: 0, text }) +
      ev("response.content_part.done", { item_id: "msg_up", output_index: 0, content_index: 0, part }) +
      ev("response.output_item.done", { output_index: 0, item: done }) +
      ev("response.completed", { response: { ...base, status: "completed", output: [done], usage: { input_tokens: 1, output_tokens: CHUNKS, total_tokens: CHUNKS + 1 } } }),
  );
}

beforeAll(async () => {
  upstream = createServer((req, res) => {
    req.resume();
    req.on("end", () => (req.url!.endsWith("/chat/completions") ? chatBurst(res) : nativeBurst(res)));
  });
  await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;
  dir = mkdtempSync(join(tmpdir(), "rr-long-"));
  const config = join(dir, "router.yaml");
  writeFileSync(
    config,
    JSON.stringify({
      endpoints: [
        { name: "chat", url, kind: "chat" },
        { name: "oai", url, kind: "openai", api_key: "k" },
      ],
      models: { local: { endpoints: ["chat"] }, native: { endpoints: ["oai"] } },
      logging: { level: "warn" },
    }),
  );
  router = await startChildRouter(config);
}, 30_000);
afterAll(async () => {
  router?.kill("SIGKILL");
  upstream?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function stream(path: string, body: object): Promise<string> {
  const res = await fetch(`${router.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body), signal: AbortSignal.timeout(20_000) });
  expect(res.status).toBe(200);
  return res.text();
}

describe("a long upstream stream sent in one burst", () => {
  it("translated from chat chunks: every delta reaches the client and the stream completes", async () => {
    const text = await stream("/v1/responses", { model: "local", input: "hi", stream: true, store: false });
    expect(text.match(/"type":"response\.output_text\.delta"/g)).toHaveLength(CHUNKS);
    expect(text).toContain('"type":"response.completed"');
  }, 30_000);

  it("a native Responses stream: every delta reaches the client and the stream completes", async () => {
    const text = await stream("/v1/responses", { model: "native", input: "hi", stream: true, store: false });
    expect(text.match(/"type":"response\.output_text\.delta"/g)).toHaveLength(CHUNKS);
    expect(text).toContain('"type":"response.completed"');
  }, 30_000);

  it("chat completions passed through: every chunk and [DONE]", async () => {
    const text = await stream("/v1/chat/completions", { model: "local", messages: [{ role: "user", content: "hi" }], stream: true });
    expect(text.match(/"content":"w\d+ "/g)).toHaveLength(CHUNKS);
    expect(text.trimEnd().endsWith("data: [DONE]")).toBe(true);
  }, 30_000);
});
