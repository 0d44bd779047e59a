import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMockUpstream, upstreamError, type MockUpstream } from "../helpers/mock-upstream.js";
import { startTestRouter, twoKindConfig, type TestRouter } from "../helpers/router.js";

let chat: MockUpstream;
let oai: MockUpstream;
let router: TestRouter;

beforeAll(async () => {
  chat = await startMockUpstream();
  oai = await startMockUpstream();
  router = await startTestRouter(twoKindConfig(chat.url, oai.url));
});
afterAll(async () => {
  await router.close(1000);
  await chat.close();
  await oai.close();
});

/** Reads one sample's value from the exposition text (labels given in any order). */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split("\n")) {
    if (!line.startsWith(name)) continue;
    const m = /^([a-z_]+)(\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...(m[3] ?? "").matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(m[4]);
  }
  return undefined;
}

describe("/metrics after known traffic", () => {
  it("counts requests, tokens, durations, in-flight and endpoint state with the right values", async () => {
    await router.client.responses.create({ model: "local", input: "a" });
    await router.client.responses.create({ model: "local", input: "b" });
    const s = router.client.responses.stream({ model: "gpt-4.1", input: "c" });
    await s.finalResponse();
    chat.enqueue("/chat/completions", upstreamError(400, "bad", "invalid_value"));
    await router.client.responses.create({ model: "local", input: "d" }).catch(() => {});
    await router.fetch("/v1/responses", { method: "POST", body: "{" });

    const res = await router.fetch("/metrics");
    expect(res.headers.get("content-type")).toContain("text/plain");
    const text = await res.text();
    const route = "/v1/responses";
    expect(sample(text, "responses_router_requests_total", { route, model: "local", endpoint: "box", status: "200" })).toBe(2);
    expect(sample(text, "responses_router_requests_total", { route, model: "gpt-4.1", endpoint: "oai", status: "200" })).toBe(1);
    expect(sample(text, "responses_router_requests_total", { route, model: "local", status: "400" })).toBe(1);
    expect(sample(text, "responses_router_requests_total", { route, model: "", status: "400" })).toBe(1);
    // mock chat usage: 5 prompt + 2 completion per call; native mock: 3 in (1 cached) + 4 out
    expect(sample(text, "responses_router_tokens_total", { model: "local", endpoint: "box", type: "input" })).toBe(10);
    expect(sample(text, "responses_router_tokens_total", { model: "local", endpoint: "box", type: "output" })).toBe(4);
    expect(sample(text, "responses_router_tokens_total", { model: "gpt-4.1", endpoint: "oai", type: "cached" })).toBe(1);
    expect(sample(text, "responses_router_request_duration_seconds_count", { route, model: "local", endpoint: "box" })).toBe(2);
    expect(sample(text, "responses_router_upstream_duration_seconds_count", { endpoint: "box", outcome: "ok" })).toBe(2);
    expect(sample(text, "responses_router_time_to_first_token_seconds_count", { model: "gpt-4.1", endpoint: "oai" })).toBe(1);
    expect(sample(text, "responses_router_overhead_seconds_count", { route })).toBe(3);
    expect(sample(text, "responses_router_endpoint_in_flight", { endpoint: "box" })).toBe(0);
    expect(sample(text, "responses_router_endpoint_max_concurrency", { endpoint: "oai" })).toBe(8);
    expect(sample(text, "responses_router_endpoint_up", { endpoint: "box" })).toBe(1);
    expect(sample(text, "responses_router_stream_chunks_total", { kind: "native" })).toBeGreaterThan(5);
    expect(text).not.toContain("sk-upstream-secret");
    expect(text).not.toMatch(/resp_[0-9a-f]{10}/);
  });

  it("accepts and returns x-request-id", async () => {
    const res = await router.fetch("/v1/models", { headers: { "x-request-id": "trace-123" } });
    expect(res.headers.get("x-request-id")).toBe("trace-123");
    const other = await router.fetch("/v1/models");
    expect(other.headers.get("x-request-id")).toMatch(/^req_/);
  });

  it("lists configured models in the OpenAI shape", async () => {
    const list = await router.client.models.list();
    expect(list.data.map((m) => m.id).sort()).toEqual(["gpt-4.1", "local"]);
    expect(list.data[0]).toMatchObject({ object: "model", owned_by: "responses-router" });
  });
});
