import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startChildRouter } from "../helpers/child-router.js";
import { chatTextChunks, startMockUpstream, type MockUpstream } from "../helpers/mock-upstream.js";
import { parseSse } from "../helpers/router.js";
import { postResponses, readRest, readUntil, waitUntil } from "../helpers/wait.js";

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

  it("cuts what is still running at shutdown_timeout and still exits 0", async () => {
    const router = await startChildRouter(writeConfig("deadline", "1s"));
    try {
      up.enqueue("/chat/completions", slow(300, 100)); // ~30 s of stream
      const res = await postResponses(router.url, { model: "m", input: "endless", stream: true });
      await readUntil(res, (t) => t.includes("response.output_text.delta"));
      router.kill("SIGTERM");
      const rest = await readRest(res);
      expect(rest.text).toContain("response.output_text.delta"); // it kept streaming until the deadline
      expect(rest.text).not.toContain("response.completed");
      expect(await router.exited).toBe(0);
      // The router hung up on the upstream too.
      await waitUntil("upstream request closed", () => up.open() === 0);
    } finally {
      router.kill("SIGKILL");
    }
  });
});
