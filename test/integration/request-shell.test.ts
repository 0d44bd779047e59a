import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { captureLog, type CapturedLog } from "../helpers/log-capture.js";
import { startMockUpstream, type MockUpstream } from "../helpers/mock-upstream.js";
import { buildConfig } from "../../src/config/load.js";
import { startTestRouter, twoKindConfig, type TestRouter } from "../helpers/router.js";
import { postResponses, waitUntil } from "../helpers/wait.js";

/** Every answer, a refused key and an oversized body included, is logged and counted once, with its request id. */

const KEY = "rr-shell-key-5c1e9a7b3d";
let chat: MockUpstream;
let oai: MockUpstream;
let router: TestRouter;
let log: CapturedLog;

beforeAll(async () => {
  chat = await startMockUpstream();
  oai = await startMockUpstream();
  log = captureLog("info");
  const cfg = twoKindConfig(chat.url, oai.url);
  router = await startTestRouter({ ...cfg, server: { api_keys: [{ name: "team", key: KEY }], max_body_bytes: 2048, public_metrics: true } }, { logger: log.logger, apiKey: KEY });
});
afterAll(async () => {
  await router.close(500);
  await chat.close();
  await oai.close();
});

/** POST with a chunked body (no Content-Length): the limit is judged while reading it. */
function postChunked(path: string, body: string, headers: Record<string, string>): Promise<{ status: number; body: string; requestId: string | undefined }> {
  const url = new URL(path, router.url);
  return new Promise((resolve, reject) => {
    const req = request(url, { method: "POST", headers: { "content-type": "application/json", ...headers } }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (d: string) => (text += d));
      res.on("end", () => resolve({ status: res.statusCode!, body: text, requestId: res.headers["x-request-id"] as string | undefined }));
    });
    req.on("error", reject);
    // Two writes: the body goes out chunked.
    req.write(body.slice(0, 10));
    req.end(body.slice(10));
  });
}

function counted(metrics: string, status: string): number {
  const line = metrics.split("\n").find((l) => l.startsWith("responses_router_requests_total{") && l.includes(`status="${status}"`));
  return line ? Number(line.split(" ").pop()) : 0;
}

describe("the request shell", () => {
  it("answers, logs and counts a missing key, an oversized body (declared or chunked) and a good request", async () => {
    const big = JSON.stringify({ model: "local", input: "x".repeat(4000) });
    const before = await (await router.fetch("/metrics")).text();

    const noKey = await postResponses(router.url, { model: "local", input: "hi" }, { headers: { "x-request-id": "shell-401" } });
    expect(noKey.status).toBe(401);
    expect(((await noKey.json()) as { error: { code: string } }).error.code).toBe("missing_api_key");
    expect(noKey.headers.get("x-request-id")).toBe("shell-401");

    const declared = await postResponses(router.url, JSON.parse(big), { headers: { authorization: `Bearer ${KEY}`, "x-request-id": "shell-413" } });
    expect(declared.status).toBe(413);
    expect(((await declared.json()) as { error: { code: string } }).error.code).toBe("request_too_large");

    const chunked = await postChunked("/v1/responses", big, { authorization: `Bearer ${KEY}`, "x-request-id": "shell-413-chunked" });
    expect(chunked.status).toBe(413);
    expect(JSON.parse(chunked.body).error).toMatchObject({ type: "invalid_request_error", code: "request_too_large" });
    expect(chunked.requestId).toBe("shell-413-chunked");

    const small = await postChunked("/v1/responses", JSON.stringify({ model: "local", input: "hi" }), { authorization: `Bearer ${KEY}`, "x-request-id": "shell-200" });
    expect(small.status).toBe(200);
    expect(JSON.parse(small.body).output_text ?? JSON.parse(small.body).output[0].content[0].text).toBe("Hello world");

    const unknown = await fetch(`${router.url}/v1/nothing-here`, { headers: { authorization: `Bearer ${KEY}`, "x-request-id": "shell-404" } });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { code: string } }).error.code).toBe("unknown_url");
    expect(unknown.headers.get("x-request-id")).toBe("shell-404");

    await waitUntil("five access lines", () => ["shell-401", "shell-413", "shell-413-chunked", "shell-200", "shell-404"].every((id) => log.lines().some((l) => l.msg === "request" && l.requestId === id)));
    const line = (id: string) => log.lines().find((l) => l.msg === "request" && l.requestId === id)!;
    expect(line("shell-401")).toMatchObject({ status: 401, method: "POST" });
    expect(line("shell-413")).toMatchObject({ status: 413 });
    expect(line("shell-413-chunked")).toMatchObject({ status: 413 });
    expect(line("shell-200")).toMatchObject({ status: 200, route: "/v1/responses", model: "local" });
    expect(line("shell-404")).toMatchObject({ status: 404, route: "unmatched", method: "GET" });

    const after = await (await router.fetch("/metrics")).text();
    expect(counted(after, "401") - counted(before, "401")).toBe(1);
    expect(counted(after, "413") - counted(before, "413")).toBe(2);
    expect(counted(after, "404") - counted(before, "404")).toBe(1);
  });

  it("a reloaded max_body_bytes is the limit it enforces and the one its 413 names", async () => {
    const cfg = twoKindConfig(chat.url, oai.url);
    const own = await startTestRouter({ ...cfg, server: { max_body_bytes: 2048 } });
    try {
      const body = { model: "local", input: "x".repeat(3000) };
      const first = await postResponses(own.url, body);
      expect(first.status).toBe(413);
      expect(((await first.json()) as { error: { message: string } }).error.message).toContain("limit of 2048 bytes");
      // Raised: the same body now passes, declared or chunked.
      own.runtime.applyConfig(buildConfig({ ...cfg, server: { host: "127.0.0.1", port: 0, max_body_bytes: 8192 } }));
      expect((await postResponses(own.url, body)).status).toBe(200);
      // Lowered below it: refused, and the message names the limit in force.
      own.runtime.applyConfig(buildConfig({ ...cfg, server: { host: "127.0.0.1", port: 0, max_body_bytes: 1024 } }));
      const lowered = await postResponses(own.url, { model: "local", input: "x".repeat(1500) });
      expect(lowered.status).toBe(413);
      expect(((await lowered.json()) as { error: { message: string } }).error.message).toContain("limit of 1024 bytes");
    } finally {
      await own.close(500);
    }
  });
});
