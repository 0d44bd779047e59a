import { describe, expect, it } from "vitest";
import { metricSample as sample } from "../helpers/metrics-text.js";
import { upstreamError } from "../helpers/mock-upstream.js";
import { buildConfig } from "../../src/config/load.js";
import { startTestRouter, twoKindConfig, useTwoKindRouter } from "../helpers/router.js";

const env = useTwoKindRouter();

describe("/metrics after known traffic", () => {
  it("counts requests, tokens, durations, in-flight and endpoint state with the right values", async () => {
    await env.router.client.responses.create({ model: "local", input: "a" });
    await env.router.client.responses.create({ model: "local", input: "b" });
    const s = env.router.client.responses.stream({ model: "gpt-4.1", input: "c" });
    await s.finalResponse();
    env.chat.enqueue("/chat/completions", upstreamError(400, "bad", "invalid_value"));
    await env.router.client.responses.create({ model: "local", input: "d" }).catch(() => {});
    await env.router.fetch("/v1/responses", { method: "POST", body: "{" });

    const res = await env.router.fetch("/metrics");
    expect(res.headers.get("content-type")).toContain("text/plain");
    const text = await res.text();
    const route = "/v1/responses";
    expect(sample(text, "responses_router_requests_total", { route, model: "local", upstream: "box", status: "200" })).toBe(2);
    expect(sample(text, "responses_router_requests_total", { route, model: "gpt-4.1", upstream: "oai", status: "200" })).toBe(1);
    // The upstream's 400 is counted under the endpoint that gave it; the malformed body never reached one.
    expect(sample(text, "responses_router_requests_total", { route, model: "local", upstream: "box", status: "400" })).toBe(1);
    expect(sample(text, "responses_router_requests_total", { route, model: "", upstream: "", status: "400" })).toBe(1);
    // mock chat usage: 5 prompt + 2 completion per call; native mock: 3 in (1 cached) + 4 out
    expect(sample(text, "responses_router_tokens_total", { model: "local", upstream: "box", type: "input" })).toBe(10);
    expect(sample(text, "responses_router_tokens_total", { model: "local", upstream: "box", type: "output" })).toBe(4);
    expect(sample(text, "responses_router_tokens_total", { model: "gpt-4.1", upstream: "oai", type: "cached" })).toBe(1);
    expect(sample(text, "responses_router_request_duration_seconds_count", { route, model: "local", upstream: "box" })).toBe(3);
    expect(sample(text, "responses_router_upstream_duration_seconds_count", { upstream: "box", outcome: "error" })).toBe(1);
    expect(sample(text, "responses_router_upstream_duration_seconds_count", { upstream: "box", outcome: "ok" })).toBe(2);
    expect(sample(text, "responses_router_time_to_first_token_seconds_count", { model: "gpt-4.1", upstream: "oai" })).toBe(1);
    expect(sample(text, "responses_router_overhead_seconds_count", { route })).toBe(3);
    expect(sample(text, "responses_router_endpoint_in_flight", { upstream: "box" })).toBe(0);
    expect(sample(text, "responses_router_endpoint_max_concurrency", { upstream: "oai" })).toBe(8);
    expect(sample(text, "responses_router_endpoint_up", { upstream: "box" })).toBe(1);
    expect(sample(text, "responses_router_stream_chunks_total", { kind: "native" })).toBeGreaterThan(5);
    expect(text).not.toContain("sk-upstream-secret");
    expect(text).not.toMatch(/resp_[0-9a-f]{10}/);
  });

  it("accepts and returns x-request-id", async () => {
    const res = await env.router.fetch("/v1/models", { headers: { "x-request-id": "trace-123" } });
    expect(res.headers.get("x-request-id")).toBe("trace-123");
    const other = await env.router.fetch("/v1/models");
    expect(other.headers.get("x-request-id")).toMatch(/^req_/);
  });

  it("lists configured models in the OpenAI shape", async () => {
    const list = await env.router.client.models.list();
    expect(list.data.map((m) => m.id).sort()).toEqual(["gpt-4.1", "local"]);
    expect(list.data[0]).toMatchObject({ object: "model", owned_by: "responses-router" });
  });
});

describe("/metrics after a reload that removes an endpoint", () => {
  it("drops the removed endpoint's series and keeps the others", async () => {
    const raw = twoKindConfig(env.chat.url, env.oai.url);
    const router = await startTestRouter(raw);
    try {
      const before = await (await router.fetch("/metrics")).text();
      expect(sample(before, "responses_router_endpoint_up", { upstream: "oai" })).toBe(1);
      router.runtime.applyConfig(buildConfig({ ...raw, endpoints: raw.endpoints.slice(0, 1), models: { local: raw.models.local } }));
      const after = await (await router.fetch("/metrics")).text();
      expect(after).not.toContain('upstream="oai"');
      expect(sample(after, "responses_router_endpoint_up", { upstream: "box" })).toBe(1);
      expect(sample(after, "responses_router_endpoint_state", { upstream: "box", state: "healthy" })).toBe(1);
    } finally {
      await router.close(500);
    }
  });
});
