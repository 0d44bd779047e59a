import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startChildRouter } from "../helpers/child-router.js";
import { chatTextChunks, nativeEvents, nativeResponse, startMockUpstream, type MockUpstream } from "../helpers/mock-upstream.js";
import { buildApp } from "../../src/app.js";
import { parseSse, startTestRouter } from "../helpers/router.js";
import { postResponses, readRest, readUntil, waitUntil } from "../helpers/wait.js";
import { startMcpServer } from "../helpers/mcp-server.js";

/**
 * SIGTERM on the real CLI process: it stops accepting at once, lets in-flight
 * requests and streams finish (up to server.shutdown_timeout), then exits 0.
 */

let up: MockUpstream;
const dir = mkdtempSync(join(tmpdir(), "rr-shutdown-"));

beforeAll(async () => {
  up = await startMockUpstream();
});
afterAll(async () => {
  await up.close();
  rmSync(dir, { recursive: true, force: true });
});

function writeConfig(name: string, shutdownTimeout: string): string {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(
    file,
    `server: { shutdown_timeout: ${shutdownTimeout} }
endpoints:
  - { name: box, url: "${up.url}", kind: chat }
models:
  m: { endpoints: [box] }
logging: { level: info }
`,
  );
  return file;
}

/** Resolves true when a TCP connection to the port is refused. */
function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host: "127.0.0.1", port });
    s.once("connect", () => {
      s.destroy();
      resolve(false);
    });
    s.once("error", (err: NodeJS.ErrnoException) => resolve(err.code === "ECONNREFUSED"));
  });
}

const slow = (parts: number, delayMs: number) => ({
  kind: "sse" as const,
  frames: [...chatTextChunks(Array.from({ length: parts }, (_, i) => `w${i} `)), "data: [DONE]\n\n"],
  delayMs,
});

describe("graceful shutdown (SIGTERM)", () => {
  it("refuses new connections, finishes the stream in flight, then exits 0", async () => {
    // A long deadline: the process must leave as soon as the stream is done, not when the deadline hits.
    const router = await startChildRouter(writeConfig("drain", "120s"));
    try {
      // An idle keep-alive connection from an earlier request must not hold the shutdown open.
      expect((await postResponses(router.url, { model: "m", input: "warm-up" })).status).toBe(200);
      up.enqueue("/chat/completions", slow(20, 100));
      const res = await postResponses(router.url, { model: "m", input: "long", stream: true });
      let text = await readUntil(res, (t) => t.includes("response.output_text.delta"));
      // So must a connection a client opened but has not sent anything on yet.
      const unused = net.connect({ host: "127.0.0.1", port: router.port });
      await new Promise((r) => unused.once("connect", r));
      const unusedClosed = new Promise<boolean>((r) => unused.once("close", () => r(true)));

      router.kill("SIGTERM");
      await waitUntil("new connections are refused", () => refused(router.port), 10_000);

      const rest = await readRest(res);
      expect(rest.broken).toBe(false);
      text += rest.text;
      const events = parseSse(text).map((f) => f.data);
      expect(events.at(-1).type).toBe("response.completed");
      expect(events.at(-1).response.output[0].content[0].text).toBe(Array.from({ length: 20 }, (_, i) => `w${i} `).join(""));

      expect(await unusedClosed).toBe(true);
      expect(await Promise.race([router.exited, new Promise((r) => setTimeout(() => r("still running 20 s after the stream ended"), 20_000))])).toBe(0);
      const logs = router.output();
      expect(logs).toContain("shutting down: draining in-flight requests");
      expect(logs).toContain("shutdown complete");
    } finally {
      router.kill("SIGKILL");
    }
  });

  it("at shutdown_timeout a Responses stream still open ends with response.failed (server_shutting_down, numbered on), then exits 0", async () => {
    const router = await startChildRouter(writeConfig("deadline", "1s"));
    try {
      up.enqueue("/chat/completions", slow(300, 100)); // ~30 s of stream
      const res = await postResponses(router.url, { model: "m", input: "endless", stream: true });
      const head = await readUntil(res, (t) => t.includes("response.output_text.delta"));
      router.kill("SIGTERM");
      const rest = await readRest(res);
      expect(rest.broken).toBe(false);
      expect(rest.text).toContain("response.output_text.delta"); // it kept streaming until the deadline
      const events = parseSse(head + rest.text).map((f) => f.data);
      const last = events.at(-1);
      expect(last.type).toBe("response.failed");
      expect(last.response.status).toBe("failed");
      expect(last.response.error).toMatchObject({ code: "server_shutting_down" });
      expect(last.response.output[0].content[0].text).toMatch(/^w0 w1 /); // the partial output is kept
      events.forEach((e, i) => expect(e.sequence_number).toBe(i)); // the terminal event continues the numbering
      expect(events.filter((e) => e.type === "response.completed")).toHaveLength(0);
      expect(await router.exited).toBe(0);
      // The router hung up on the upstream too.
      await waitUntil("upstream request closed", () => up.open() === 0);
    } finally {
      router.kill("SIGKILL");
    }
  });

  it("at shutdown_timeout a tool-loop (MCP) stream mid-round ends with response.failed (server_shutting_down), keeping the round's text", async () => {
    const mcp = await startMcpServer();
    const file = join(dir, "deadline-mcp.yaml");
    writeFileSync(file, `server: { shutdown_timeout: 1s }\nendpoints:\n  - { name: box, url: "${up.url}", kind: chat }\nmodels:\n  m: { endpoints: [box] }\ntools:\n  mcp:\n    servers:\n      - { label: kb, url: "${mcp.url}", require_approval: never }\n`);
    const router = await startChildRouter(file);
    try {
      up.enqueue("/chat/completions", slow(300, 100)); // the round's answer: ~30 s of stream
      const res = await postResponses(router.url, { model: "m", input: "endless", stream: true, tools: [{ type: "mcp", server_label: "kb" }] });
      const head = await readUntil(res, (t) => t.includes("response.output_text.delta"));
      router.kill("SIGTERM");
      const rest = await readRest(res);
      expect(rest.broken).toBe(false);
      const events = parseSse(head + rest.text).map((f) => f.data);
      expect(events.some((e) => e.type === "response.output_item.done" && e.item.type === "mcp_list_tools")).toBe(true);
      const last = events.at(-1);
      expect(last.type).toBe("response.failed");
      expect(last.response).toMatchObject({ status: "failed", error: { code: "server_shutting_down" } });
      events.forEach((e, i) => expect(e.sequence_number).toBe(i));
      // What the round had streamed is in the response, its message closed as incomplete.
      const message = last.response.output.find((i: { type: string }) => i.type === "message");
      expect(message).toMatchObject({ status: "incomplete" });
      expect(message.content[0].text).toMatch(/^w0 w1 /);
      expect(await router.exited).toBe(0);
    } finally {
      router.kill("SIGKILL");
      await mcp.close();
    }
  });

  it("at shutdown_timeout a native (openai) Responses stream ends with response.failed numbered after the upstream's last event", async () => {
    const file = join(dir, "deadline-native.yaml");
    writeFileSync(file, `server: { shutdown_timeout: 1s }\nendpoints:\n  - { name: oai, url: "${up.url}", kind: openai, api_key: sk-native-0123456789 }\nmodels:\n  gpt-4.1: { endpoints: [oai] }\n`);
    const router = await startChildRouter(file);
    try {
      // The upstream sends its first events (through the first delta), then stays open without a terminal event.
      // One read each: the delta reaches the client as the upstream's bytes, and the closing events number on from it.
      const frames = nativeEvents(nativeResponse("Hello there, a long answer")).slice(0, 5);
      up.enqueue("/responses", { kind: "sse", frames, delayMs: 20, holdOpenMs: 30_000 });
      const res = await postResponses(router.url, { model: "gpt-4.1", input: "endless", stream: true });
      const head = await readUntil(res, (t) => t.includes("response.output_text.delta"));
      router.kill("SIGTERM");
      const rest = await readRest(res);
      expect(rest.broken).toBe(false);
      const events = parseSse(head + rest.text).map((f) => f.data);
      // The upstream's events, the open items closed (as incomplete), then the terminal event, numbered on.
      expect(events.slice(0, frames.length).map((e) => e.type)).toEqual(frames.map((f) => f.event));
      const last = events.at(-1);
      expect(last.type).toBe("response.failed");
      events.forEach((e, i) => expect(e.sequence_number).toBe(i));
      expect(last.response).toMatchObject({ status: "failed", error: { code: "server_shutting_down" } });
      expect(await router.exited).toBe(0);
    } finally {
      router.kill("SIGKILL");
    }
  });

  it("at shutdown_timeout a request still waiting for its upstream's first byte gets 503 server_shutting_down, not a cut connection", async () => {
    const router = await startChildRouter(writeConfig("deadline-waiting", "1s"));
    try {
      up.enqueue("/chat/completions", { kind: "hang" }, { kind: "hang" });
      const streamed = postResponses(router.url, { model: "m", input: "slow prefill", stream: true });
      const json = fetch(`${router.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }] }) });
      await waitUntil("both upstream calls are open", () => up.open() === 2);
      router.kill("SIGTERM");
      for (const res of await Promise.all([streamed, json])) {
        expect(res.status).toBe(503);
        expect(((await res.json()) as { error: { code: string; type: string } }).error).toMatchObject({ type: "server_error", code: "server_shutting_down" });
      }
      expect(await router.exited).toBe(0);
      await waitUntil("upstream requests closed", () => up.open() === 0);
    } finally {
      router.kill("SIGKILL");
    }
  });

  it("at shutdown_timeout a chat-completions stream ends with an error chunk", async () => {
    const router = await startChildRouter(writeConfig("deadline-chat", "1s"));
    try {
      up.enqueue("/chat/completions", slow(300, 100));
      const res = await fetch(`${router.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "endless" }], stream: true }),
      });
      const head = await readUntil(res, (t) => t.includes("w1 "));
      router.kill("SIGTERM");
      const rest = await readRest(res);
      expect(rest.broken).toBe(false);
      const chunks = parseSse(head + rest.text).map((f) => f.data);
      expect(chunks.at(-1)).toEqual({ error: { message: expect.stringContaining("shutting down"), type: "server_error", param: null, code: "server_shutting_down" } });
      expect(await router.exited).toBe(0);
    } finally {
      router.kill("SIGKILL");
    }
  });

  it("/readyz answers 200 while serving and 503 while draining", async () => {
    // In process: once close() began, no new connection reaches the server, so ask the router's
    // own app (same runtime, same handler) what a probe on a kept-alive connection would get.
    const r = await startTestRouter({ server: { shutdown_timeout: "10s" }, endpoints: [{ name: "box", url: up.url, kind: "chat" }], models: { m: { endpoints: ["box"] } } });
    const { app } = buildApp(r.runtime);
    const before = await app.request("/readyz");
    expect(before.status).toBe(200);
    expect(await before.json()).toMatchObject({ status: "ready" });
    up.enqueue("/chat/completions", slow(10, 100));
    const res = await postResponses(r.url, { model: "m", input: "long", stream: true });
    await readUntil(res, (t) => t.includes("response.output_text.delta"));
    const closed = r.close();
    const during = await app.request("/readyz");
    expect(during.status).toBe(503);
    expect(await during.json()).toMatchObject({ status: "draining" });
    expect((await readRest(res)).text).toContain("response.completed");
    await closed;
  });
});
