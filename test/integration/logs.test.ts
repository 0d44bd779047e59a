import { describe, expect, it } from "vitest";
import { buildConfig } from "../../src/config/load.js";
import { createLogger } from "../../src/ops/log.js";
import { prettyLine } from "../../src/ops/log-pretty.js";
import { captureLog } from "../helpers/log-capture.js";
import { metricSample } from "../helpers/metrics-text.js";
import { chatChunk, chatTextChunks, type MockUpstream } from "../helpers/mock-upstream.js";
import { deadUrl, poolConfig } from "../helpers/pool-config.js";
import { usePerTestServers } from "../helpers/per-test.js";
import { waitUntil } from "../helpers/wait.js";
import { Writable } from "node:stream";

/** Logs as an operator reads them: which request a line is about, at the right level. */
const { mocks, router } = usePerTestServers();

const LENIENT = { health: { failure_threshold: 100, cooldown: "60s" }, retry: { attempts: 3, max_time: "20s" } };
const json = (body: unknown, requestId: string) => ({
  method: "POST",
  body: JSON.stringify(body),
  headers: { "content-type": "application/json", "x-request-id": requestId },
});

describe("log lines about upstream attempts carry the requestId", () => {
  it("a failed attempt on /v1/responses, /v1/chat/completions and in a background job", async () => {
    const [b] = await mocks(1);
    const log = captureLog("info");
    const raw = poolConfig([await deadUrl(), b!.url], { routing: LENIENT });
    // Endpoint "a" is dead; its weight makes it every request's first choice.
    raw.models.m.endpoints = [{ name: "a", weight: 100 }, "b"] as never;
    const r = await router(raw, { logger: log.logger });
    expect((await r.fetch("/v1/responses", json({ model: "m", input: "hi" }, "trace-resp"))).status).toBe(200);
    expect((await r.fetch("/v1/chat/completions", json({ model: "m", messages: [{ role: "user", content: "hi" }] }, "trace-chat"))).status).toBe(200);
    const bg = (await (await r.fetch("/v1/responses", json({ model: "m", input: "later", background: true }, "trace-bg"))).json()) as { id: string };
    await waitUntil("the background job to finish", () => log.lines().some((l) => l.msg === "background job finished"));

    const attempts = log.lines().filter((l) => l.msg === "upstream attempt failed; trying another endpoint");
    expect(attempts.map((l) => l.requestId).sort()).toEqual(["trace-bg", "trace-chat", "trace-resp"]);
    expect(attempts.every((l) => l.endpoint === "a" && l.level === "warn")).toBe(true);
    expect(attempts.find((l) => l.requestId === "trace-bg")?.responseId).toBe(bg.id);
    // The background job's own lines name both the request that created it and the response.
    for (const l of log.lines().filter((x) => /^background job/.test(String(x.msg)))) expect(l).toMatchObject({ requestId: "trace-bg", responseId: bg.id });
    expect(log.text()).not.toMatch(/"requestId":"trace-[a-z]+"[^\n]*"requestId"/);
  });

  it("a chat-completions stream that breaks mid-way is logged with its requestId", async () => {
    const [a] = await mocks(1);
    a!.enqueue("/chat/completions", { kind: "sse", frames: [{ data: chatChunk({ role: "assistant", content: "Hel" }) }, { data: chatChunk({ content: "lo" }) }], dieAfter: 2 });
    const log = captureLog("info");
    const r = await router(poolConfig([a!.url], { routing: LENIENT }), { logger: log.logger });
    const res = await r.fetch("/v1/chat/completions", json({ model: "m", stream: true, messages: [{ role: "user", content: "hi" }] }, "trace-broken"));
    await res.text();
    await waitUntil("the broken stream to be logged", () => log.lines().some((l) => l.msg === "chat completion stream broke mid-way"));
    expect(log.lines().find((l) => l.msg === "chat completion stream broke mid-way")).toMatchObject({ requestId: "trace-broken", endpoint: "a" });
  });
});

describe("a client that disconnects", () => {
  it("is an info line with its requestId, counted as 499, never an 'unhandled error'", async () => {
    const [a] = await mocks(1);
    a!.enqueue("/chat/completions", { kind: "hang" });
    const log = captureLog("debug");
    const r = await router(poolConfig([a!.url], { routing: LENIENT }), { logger: log.logger });
    const ctrl = new AbortController();
    const pending = r.fetch("/v1/responses", { ...json({ model: "m", input: "hi" }, "trace-gone"), signal: ctrl.signal }).catch(() => "aborted");
    await waitUntil("the upstream call to start", () => (a as MockUpstream).open() === 1);
    ctrl.abort();
    expect(await pending).toBe("aborted");
    await waitUntil("the access line", () => log.lines().some((l) => l.msg === "request" && l.requestId === "trace-gone"));
    const lines = log.lines();
    expect(lines.filter((l) => l.level === "error" || l.level === "fatal")).toEqual([]);
    expect(log.text()).not.toContain("unhandled error");
    expect(lines.find((l) => l.msg === "client disconnected before the answer")).toMatchObject({ level: "info", requestId: "trace-gone" });
    expect(lines.find((l) => l.msg === "request" && l.requestId === "trace-gone")).toMatchObject({ status: 499 });
    const metrics = await (await r.fetch("/metrics")).text();
    expect(metricSample(metrics, "responses_router_requests_total", { route: "/v1/responses", model: "m", status: "499" })).toBe(1);
    expect(metricSample(metrics, "responses_router_requests_total", { route: "/v1/responses", status: "500" })).toBeUndefined();
  });
});

describe("logging.level on reload", () => {
  it("takes effect for the router's lines and the access log", async () => {
    const [a] = await mocks(1);
    a!.setDefault("/chat/completions", { kind: "sse", frames: chatTextChunks(["ok"]) });
    const log = captureLog("info");
    const raw = { ...poolConfig([a!.url], { routing: LENIENT }), logging: { level: "info" } };
    const r = await router(raw, { logger: log.logger });
    const accessLines = () => log.lines().filter((l) => l.msg === "request").length;
    await r.fetch("/v1/models");
    expect(accessLines()).toBe(1);

    r.runtime.applyConfig(buildConfig({ ...raw, server: { host: "127.0.0.1", port: 0 }, logging: { level: "warn" } }));
    await r.fetch("/v1/models");
    await r.fetch("/v1/models");
    expect(accessLines()).toBe(1);

    r.runtime.applyConfig(buildConfig({ ...raw, server: { host: "127.0.0.1", port: 0 }, logging: { level: "debug" } }));
    await r.fetch("/v1/models");
    await waitUntil("the access line at info again", () => accessLines() === 2);
  });
});

describe("pretty log format", () => {
  it("writes one readable line per event, fields after the message, secrets still redacted", () => {
    let out = "";
    const sink = new Writable({
      write(chunk, _enc, done) {
        out += String(chunk);
        done();
      },
    });
    const log = createLogger("info", sink, "pretty");
    log.info({ requestId: "req_1", endpoint: "box-a", models: ["demo"], api_key: "sk-secret-123456" }, "config reloaded");
    log.debug("hidden");
    const lines = out.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}config reloaded {2}requestId=req_1 endpoint=box-a models=\["demo"\] api_key=\[redacted\]$/);
    expect(out).not.toContain("sk-secret");
    expect(out).not.toContain("{\"level\"");
  });

  it("colours the level only when asked, and passes non-JSON through", () => {
    const line = JSON.stringify({ level: "warn", time: "2026-01-02T03:04:05.678Z", service: "responses-router", msg: "endpoint a is now cooldown", reason: "connect: ECONNREFUSED" });
    expect(prettyLine(line, false)).toBe('03:04:05.678 WARN  endpoint a is now cooldown  reason="connect: ECONNREFUSED"');
    expect(prettyLine(line, true)).toContain("\x1b[33mWARN \x1b[0m");
    expect(prettyLine("not json", true)).toBe("not json");
  });
});
