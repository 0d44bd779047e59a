import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeConfigFile } from "../helpers/background.js";
import { startChildRouter, type ChildRouter } from "../helpers/child-router.js";
import { metricSample } from "../helpers/metrics-text.js";
import { startMockUpstream, upstreamError, type MockUpstream } from "../helpers/mock-upstream.js";
import { deadUrl } from "../helpers/pool-config.js";
import { postResponses, waitUntil } from "../helpers/wait.js";

/**
 * "Never worse than a direct connection", against the real CLI process: a backend that
 * answers must never be turned into an outage by the router's health logic.
 */
let single: MockUpstream; // model "solo": its only endpoint
let good: MockUpstream; // model "pair": with a dead endpoint next to it
let v1Only: Server; // answers only under /v1, like a real OpenAI-compatible server
let v1OnlyPort: number;
let router: ChildRouter;

const calls = (m: MockUpstream) => m.requests.filter((r) => r.path === "/chat/completions").length;
const post = (body: Record<string, unknown>) => postResponses(router.url, body);

beforeAll(async () => {
  single = await startMockUpstream();
  good = await startMockUpstream();
  v1Only = createServer((req, res) => {
    // A backend whose routes live under /v1: anything else is "no route" (the example body).
    res.writeHead(404, { "content-type": "application/json" });
    res.end(JSON.stringify({ message: "no route" }));
    req.resume();
  });
  await new Promise<void>((r) => v1Only.listen(0, "127.0.0.1", r));
  v1OnlyPort = (v1Only.address() as AddressInfo).port;
  const dead = await deadUrl();
  router = await startChildRouter(
    writeConfigFile({
      endpoints: [
        { name: "solo-box", url: single.url, kind: "chat" },
        { name: "good-box", url: good.url, kind: "chat" },
        { name: "dead-box", url: dead, kind: "chat" },
        { name: "lost-box", url: dead, kind: "chat" },
        // The url lacks /v1 (and carries credentials that must never be shown).
        { name: "no-v1-box", url: `http://user:hunter2secret@127.0.0.1:${v1OnlyPort}`, kind: "chat", api_key: "sk-never-shown-0123456789" },
      ],
      models: {
        solo: { endpoints: ["solo-box"] },
        pair: { endpoints: ["dead-box", "good-box"] },
        lost: { endpoints: ["lost-box"] },
        misrouted: { endpoints: ["no-v1-box"] },
      },
      // The defaults, spelled out: three failures eject for 5 s.
      routing: { health: { failure_threshold: 3, cooldown: "5s" } },
      logging: { level: "info" },
    }),
  );
});
afterAll(async () => {
  router?.kill("SIGKILL");
  await single?.close();
  await good?.close();
  await new Promise((r) => v1Only?.close(r));
});

describe("a single-endpoint pool is never taken down by its own answers", () => {
  it("after one upstream 500, the next request is served at once (asked once each: no retry on the same endpoint)", async () => {
    single.enqueue("/chat/completions", upstreamError(500, "this request broke the model", null, "server_error"));
    const failed = await post({ model: "solo", input: "bad" });
    expect(failed.status).toBe(502);
    expect(calls(single)).toBe(1);
    const next = await post({ model: "solo", input: "good" });
    expect(next.status).toBe(200);
    expect(calls(single)).toBe(2);
  });

  it("after ten upstream 500s in a row, the next request is served at once", async () => {
    const before = calls(single);
    for (let i = 0; i < 10; i++) {
      single.enqueue("/chat/completions", upstreamError(500, "boom", null, "server_error"));
      expect((await post({ model: "solo", input: `bad ${i}` })).status).toBe(502);
    }
    expect(calls(single)).toBe(before + 10);
    const next = await post({ model: "solo", input: "good", stream: true });
    expect(next.status).toBe(200);
    expect(await next.text()).toContain("response.completed");
  });

  it("after ten gateway failures (503: the endpoint is ejected) the next request is still served: panic routing, not 503 no_healthy_endpoint", async () => {
    for (let i = 0; i < 10; i++) {
      single.enqueue("/chat/completions", upstreamError(503, "overloaded", null, "server_error"));
      const res = await post({ model: "solo", input: `busy ${i}` });
      expect(res.status).toBe(503);
      expect(((await res.json()) as { error: { code: string } }).error.code).not.toBe("no_healthy_endpoint");
    }
    expect((await post({ model: "solo", input: "good" })).status).toBe(200);
    const metrics = await (await fetch(`${router.url}/metrics`)).text();
    expect(metricSample(metrics, "responses_router_panic_routed_total", { model: "solo", upstream: "solo-box", outcome: "error" })).toBeGreaterThan(0);
    expect(metricSample(metrics, "responses_router_panic_routed_total", { model: "solo", upstream: "solo-box", outcome: "ok" })).toBe(1); // the one that was served
  });
});

describe("failover", () => {
  it("a two-endpoint pool with one dead endpoint serves every request, streamed or not", async () => {
    const jobs = Array.from({ length: 20 }, async (_, i) => {
      const res = await post({ model: "pair", input: `q${i}`, stream: i % 2 === 1 });
      return { status: res.status, text: await res.text() };
    });
    for (const r of await Promise.all(jobs)) {
      expect(r.status).toBe(200);
      expect(r.text).toContain("Hello world");
    }
    expect(calls(good)).toBe(20);
  });
});

describe("readiness is the instance's, backend health is separate", () => {
  it("/readyz stays 200 while a model's only backend is dead; /health/backends shows it", async () => {
    for (let i = 0; i < 3; i++) expect((await post({ model: "lost", input: "x" })).status).toBe(502);
    await waitUntil("lost-box ejected", async () => {
      const b = (await (await fetch(`${router.url}/health/backends`)).json()) as { models: Record<string, { unhealthy: string[] }> };
      return b.models.lost!.unhealthy.includes("lost-box");
    });
    const ready = await fetch(`${router.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(((await ready.json()) as { status: string }).status).toBe("ready");
    const backends = await fetch(`${router.url}/health/backends`);
    expect(backends.status).toBe(503);
    const body = (await backends.json()) as { status: string; models: Record<string, unknown>; problems: string[] };
    expect(body.status).toBe("degraded");
    expect(body.models.lost).toEqual({ healthy: [], unhealthy: ["lost-box"] });
    expect(body.models.pair).toEqual({ healthy: ["good-box"], unhealthy: ["dead-box"] });
    expect(body.problems.join("\n")).toMatch(/lost-box/);
  });
});

describe("an endpoint url without /v1 is the router's configuration error", () => {
  it("answers 502 naming the endpoint (never its URL or key), logs it and counts it against the endpoint", async () => {
    for (const [path, body] of [
      ["/v1/responses", { model: "misrouted", input: "hi" }],
      ["/v1/chat/completions", { model: "misrouted", messages: [{ role: "user", content: "hi" }] }],
    ] as const) {
      const res = await fetch(`${router.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
      expect(res.status, path).toBe(502);
      const text = await res.text();
      const err = (JSON.parse(text) as { error: { message: string; type: string; code: string } }).error;
      expect(err).toMatchObject({ type: "server_error", code: "upstream_route_not_found" });
      expect(err.message).toContain("no-v1-box");
      expect(err.message).toContain("/chat/completions");
      for (const secret of ["hunter2secret", "sk-never-shown", String(v1OnlyPort)]) expect(text).not.toContain(secret);
    }
    await waitUntil("the error is logged", () => /no-v1-box has no such route/.test(router.output()));
    expect(router.output()).not.toContain("hunter2secret");
    const metrics = await (await fetch(`${router.url}/metrics`)).text();
    expect(metricSample(metrics, "responses_router_endpoint_state", { upstream: "no-v1-box", state: "healthy" })).toBe(1); // two of three failures so far
    expect((await post({ model: "misrouted", input: "again" })).status).toBe(502);
    await waitUntil("the endpoint is ejected after three", async () => {
      const m = await (await fetch(`${router.url}/metrics`)).text();
      return metricSample(m, "responses_router_endpoint_state", { upstream: "no-v1-box", state: "cooldown" }) === 1;
    });
  });

  it("a 404 about the model is still the client's answer (404, endpoint stays healthy)", async () => {
    single.enqueue("/chat/completions", { kind: "json", status: 404, body: { error: { message: "model 'x' not found, try pulling it first", type: "invalid_request_error", param: null, code: null } } });
    const res = await post({ model: "solo", input: "x" });
    expect(res.status).toBe(404);
    expect((await post({ model: "solo", input: "x" })).status).toBe(200);
  });
});
