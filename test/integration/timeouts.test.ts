import { describe, expect, it } from "vitest";
import { assertResponsesGrammar } from "../helpers/grammar.js";
import { chatTextChunks, nativeEvents, nativeResponse, type MockUpstream } from "../helpers/mock-upstream.js";
import { poolConfig } from "../helpers/pool-config.js";
import { parseSse } from "../helpers/router.js";
import { usePerTestServers } from "../helpers/per-test.js";
import { postResponses, waitUntil } from "../helpers/wait.js";

/** Per-endpoint timeouts: first_byte (before any answer) fails over; idle (between chunks) ends the stream. */


const { mocks, router } = usePerTestServers();


const TIGHT = { timeouts: { connect: "2s", first_byte: "300ms", idle: "300ms" } };
const calls = (m: MockUpstream, path = "/chat/completions") => m.requests.filter((r) => r.path === path).length;

describe("timeouts", () => {
  it("a first_byte timeout fails over to another endpoint and the silent upstream call is abandoned", async () => {
    const [slow, ok] = await mocks(2);
    slow!.setDefault("/chat/completions", { kind: "hang" });
    // a is tried first (equal load and weight: the first in order wins the first pick).
    const r = await router(poolConfig([slow!.url, ok!.url], { endpoint: TIGHT, routing: { health: { failure_threshold: 100, cooldown: "60s" } } }));
    const res = await r.client.responses.create({ model: "m", input: "x" });
    expect(res.output_text).toBe("Hello world");
    expect(calls(slow!)).toBe(1);
    expect(calls(ok!)).toBe(1);
    await waitUntil("the timed-out upstream request was closed", () => slow!.aborted === 1);
    const metrics = await (await r.fetch("/metrics")).text();
    expect(metrics).toMatch(/responses_router_upstream_retries_total\{[^}]*upstream="a"[^}]*reason="timeout"[^}]*\} 1/);
  });

  it("a first_byte timeout on every endpoint gives 504 in OpenAI shape; the endpoint is not asked again (only connection failures are)", async () => {
    const [slow] = await mocks(1);
    slow!.setDefault("/chat/completions", { kind: "hang" });
    const r = await router(poolConfig([slow!.url], { endpoint: TIGHT, routing: { retry: { attempts: 2, max_time: "10s" } } }));
    const res = await postResponses(r.url, { model: "m", input: "x", stream: true });
    expect(res.status).toBe(504);
    const body = (await res.json()) as { error: Record<string, unknown> };
    expect(body.error).toMatchObject({ type: "server_error", code: "upstream_timeout", param: null });
    expect(calls(slow!)).toBe(1);
    expect(r.runtime.pool.get("a")!.inFlight).toBe(0);
  });

  it("an idle timeout mid-stream (translated) ends the stream with response.failed and frees the slot", async () => {
    const [up] = await mocks(1);
    up!.setDefault("/chat/completions", { kind: "sse", frames: chatTextChunks(["partial"]).slice(0, 2), holdOpenMs: 5_000 });
    const r = await router(poolConfig([up!.url], { endpoint: TIGHT }));
    const res = await postResponses(r.url, { model: "m", input: "x", stream: true });
    expect(res.status).toBe(200);
    const events = parseSse(await res.text()).map((f) => f.data);
    assertResponsesGrammar(events);
    const last = events.at(-1);
    expect(last.type).toBe("response.failed");
    expect(last.response.error.code).toBe("timeout");
    // Partial output is kept in the failed response.
    expect(JSON.stringify(last.response.output)).toContain("partial");
    await waitUntil("the idle upstream request was closed", () => up!.aborted === 1);
    expect(r.runtime.pool.get("a")!.inFlight).toBe(0);
  });

  it("an idle timeout mid-stream (native) ends the stream with response.failed", async () => {
    const [up] = await mocks(1);
    up!.setDefault("/responses", { kind: "sse", frames: nativeEvents(nativeResponse("hello there")).slice(0, 5), holdOpenMs: 5_000 });
    const r = await router(poolConfig([up!.url], { endpoint: TIGHT, kind: "openai" }));
    const res = await postResponses(r.url, { model: "m", input: "x", stream: true });
    const events = parseSse(await res.text()).map((f) => f.data);
    // (Native events pass through as the upstream sent them; the item it left open stays open.)
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events.at(-1)).toMatchObject({ type: "response.failed", response: { status: "failed" } });
    expect(events.at(-1).response.error.code).toBe("timeout");
    await waitUntil("the idle upstream request was closed", () => up!.aborted === 1);
    expect(r.runtime.pool.get("a")!.inFlight).toBe(0);
  });

  it("a stream that keeps sending within the idle timeout is not cut, however long it runs in total", async () => {
    const [up] = await mocks(1);
    const parts = Array.from({ length: 10 }, (_, i) => `${i}`);
    up!.setDefault("/chat/completions", { kind: "sse", frames: [...chatTextChunks(parts), "data: [DONE]\n\n"], delayMs: 100 });
    const r = await router(poolConfig([up!.url], { endpoint: TIGHT }));
    const final = await r.client.responses.stream({ model: "m", input: "x" }).finalResponse();
    expect(final.status).toBe("completed");
    expect(final.output_text).toBe(parts.join(""));
  });
});
