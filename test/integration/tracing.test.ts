import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { captureLog, type CapturedLog } from "../helpers/log-capture.js";
import { chatTextChunks, startMockUpstream, upstreamError, type MockUpstream } from "../helpers/mock-upstream.js";
import { KIND, startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from "../helpers/otlp-receiver.js";
import { startRedis } from "../helpers/redis-server.js";
import { deadUrl } from "../helpers/pool-config.js";
import { parseSse, startTestRouter, type TestRouter } from "../helpers/router.js";
import { waitUntil } from "../helpers/wait.js";
import { WebSocket } from "ws";

/**
 * OpenTelemetry traces through the real SDK and OTLP/HTTP exporter, posted to a collector
 * stand-in on loopback: the span tree, names, kinds, attributes and parentage of JSON,
 * stream, failover, fallback and background requests; trace context in from the client
 * and out to the upstream; log lines carrying the ids; no prompt text or keys in spans.
 */

const UPSTREAM_KEY = "sk-upstream-secret-0123456789";
const CLIENT_KEY = "rk-client-secret-abcdef";
const PROMPT = "the secret prompt text 7f3a";

let chat: MockUpstream;
let oai: MockUpstream;
let otlp: OtlpReceiver;
let router: TestRouter;
let log: CapturedLog;

beforeAll(async () => {
  chat = await startMockUpstream();
  oai = await startMockUpstream();
  otlp = await startOtlpReceiver();
  const dead = await deadUrl(); // nothing listens: connection refused
  log = captureLog("info");
  router = await startTestRouter(
    {
      server: { api_keys: [{ name: "team-a", key: CLIENT_KEY }] },
      endpoints: [
        { name: "dead", url: dead, kind: "chat" },
        { name: "box", url: chat.url, kind: "chat", max_concurrency: 4 },
        { name: "oai", url: oai.url, kind: "openai", api_key: UPSTREAM_KEY, max_concurrency: 8 },
      ],
      models: {
        local: { endpoints: ["box"], upstream_model: "llama3.1:8b" },
        "gpt-4.1": { endpoints: ["oai"] },
        // The dead endpoint is every request's first choice: the attempt fails over to box.
        flaky: { endpoints: [{ name: "dead", weight: 1000 }, { name: "box", weight: 1 }], upstream_model: "qwen2.5:7b" },
        // A pool that is down: the request falls back to gpt-4.1.
        gone: { endpoints: ["dead"], fallbacks: ["gpt-4.1"] },
        cached: { endpoints: ["box"], cache: { ttl: "1h" } },
      },
      routing: { queue_timeout: "2s", retry: { attempts: 3, max_time: "10s" }, health: { failure_threshold: 100, cooldown: "60s" } },
      tracing: { endpoint: otlp.url, service_name: "router-under-test" },
    },
    // An empty environment: the test's config is the only source of settings.
    { logger: log.logger, env: {}, apiKey: CLIENT_KEY },
  );
});
afterAll(async () => {
  await router.close(500);
  await Promise.all([chat.close(), oai.close(), otlp.close()]);
});

/** Flushes the router's spans until `find` sees what it wants (the server span ends when the socket closes). */
async function spansOf(traceId: string, until: (spans: ReceivedSpan[]) => boolean): Promise<ReceivedSpan[]> {
  const of = () => otlp.spans.filter((s) => s.traceId === traceId);
  await waitUntil(`spans of trace ${traceId}`, async () => {
    await router.runtime.tracing.flush();
    return until(of());
  });
  return of();
}

const serverSpan = (spans: ReceivedSpan[]) => spans.find((s) => s.kind === KIND.server);
const clientSpans = (spans: ReceivedSpan[]) => spans.filter((s) => s.kind === KIND.client && s.attributes["gen_ai.operation.name"]);

/** A client-side trace to continue: W3C traceparent with a random trace id. */
function clientTrace(): { traceId: string; parentId: string; traceparent: string } {
  const hex = (n: number) => [...crypto.getRandomValues(new Uint8Array(n))].map((b) => b.toString(16).padStart(2, "0")).join("");
  const traceId = hex(16);
  const parentId = hex(8);
  return { traceId, parentId, traceparent: `00-${traceId}-${parentId}-01` };
}

function post(body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return router.fetch("/v1/responses", {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${CLIENT_KEY}`, ...headers },
    body: JSON.stringify(body),
  });
}

describe("traces of /v1/responses", () => {
  it("JSON: continues the client's trace; one SERVER span, one CLIENT span per upstream call with GenAI attributes; traceparent goes upstream", async () => {
    const t = clientTrace();
    chat.requests.length = 0;
    const res = await post({ model: "local", input: PROMPT }, { traceparent: t.traceparent, tracestate: "vendor=abc", "x-request-id": "req-json-1" });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { id: string };

    const spans = await spansOf(t.traceId, (s) => !!serverSpan(s) && clientSpans(s).length === 1);
    const server = serverSpan(spans)!;
    expect(server.parentSpanId).toBe(t.parentId);
    expect(server.name).toBe("POST /v1/responses");
    expect(server.resource["service.name"]).toBe("router-under-test");
    expect(server.attributes).toMatchObject({
      "http.request.method": "POST",
      "http.route": "/v1/responses",
      "http.response.status_code": 200,
      "gen_ai.operation.name": "chat",
      "gen_ai.request.model": "local",
      "gen_ai.response.model": "local",
      "gen_ai.response.id": body.id,
      "gen_ai.usage.input_tokens": 5,
      "gen_ai.usage.output_tokens": 2,
      "router.upstream": "box",
      "router.key": "team-a",
      "router.request_id": "req-json-1",
    });
    const [call] = clientSpans(spans);
    expect(call!.parentSpanId).toBe(server.spanId);
    expect(call!.name).toBe("chat llama3.1:8b");
    expect(call!.attributes).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "openai_compatible",
      "gen_ai.request.model": "llama3.1:8b",
      "gen_ai.response.model": "llama3.1:8b",
      "gen_ai.response.id": body.id,
      "gen_ai.usage.input_tokens": 5,
      "gen_ai.usage.output_tokens": 2,
      "server.address": "127.0.0.1",
      "http.response.status_code": 200,
      "router.upstream": "box",
      "router.attempt": 0,
      "router.fallback": false,
      "router.panic_routed": false,
    });
    expect(call!.status.code ?? 0).not.toBe(2);

    // The upstream is called inside the attempt's span, with the client's tracestate kept.
    const sent = chat.requests.at(-1)!;
    expect(sent.headers.traceparent).toBe(`00-${t.traceId}-${call!.spanId}-01`);
    expect(sent.headers.tracestate).toBe("vendor=abc");

    // Every log line of the request names its trace and the request's span.
    const lines = log.lines().filter((l) => l.requestId === "req-json-1");
    expect(lines.length).toBeGreaterThan(0);
    for (const l of lines) expect(l).toMatchObject({ trace_id: t.traceId, span_id: server.spanId });
  });

  it("stream: the attempt's span lasts until the stream is read and carries the usage; a request without traceparent starts a trace", async () => {
    const res = await post({ model: "gpt-4.1", input: PROMPT, stream: true }, { "x-request-id": "req-stream-1" });
    expect(res.status).toBe(200);
    const events = parseSse(await res.text());
    const completed = events.find((e) => e.event === "response.completed")!.data.response;
    const line = log.lines().find((l) => l.requestId === "req-stream-1" && l.msg === "request")!;
    expect(line.trace_id).toMatch(/^[0-9a-f]{32}$/);

    const spans = await spansOf(line.trace_id, (s) => !!serverSpan(s) && clientSpans(s).length === 1);
    const server = serverSpan(spans)!;
    expect(server.parentSpanId).toBeUndefined();
    expect(server.attributes["gen_ai.response.id"]).toBe(completed.id);
    const [call] = clientSpans(spans);
    expect(call!.parentSpanId).toBe(server.spanId);
    expect(call!.name).toBe("chat gpt-4.1");
    expect(call!.attributes).toMatchObject({ "gen_ai.provider.name": "openai", "router.upstream": "oai", "gen_ai.response.finish_reasons": ["completed"] });
    expect(call!.attributes["gen_ai.usage.output_tokens"]).toBe(completed.usage.output_tokens);
  });

  it("failover: the failed attempt and the one that answered are sibling CLIENT spans; the failure's class is on the failed one", async () => {
    const t = clientTrace();
    expect((await post({ model: "flaky", input: "hi" }, { traceparent: t.traceparent })).status).toBe(200);
    const spans = await spansOf(t.traceId, (s) => !!serverSpan(s) && clientSpans(s).length === 2);
    const server = serverSpan(spans)!;
    const [first, second] = clientSpans(spans).sort((a, b) => Number(a.attributes["router.attempt"]) - Number(b.attributes["router.attempt"]));
    expect(first!.parentSpanId).toBe(server.spanId);
    expect(second!.parentSpanId).toBe(server.spanId);
    expect(first!.attributes).toMatchObject({ "router.upstream": "dead", "router.attempt": 0, "error.type": "connect", "router.failure": "connect" });
    expect(first!.status.code).toBe(2); // ERROR
    expect(second!.attributes).toMatchObject({ "router.upstream": "box", "router.attempt": 1, "http.response.status_code": 200 });
    expect(second!.attributes["error.type"]).toBeUndefined();
    expect(server.attributes["router.upstream"]).toBe("box");
  });

  it("fallback: the fallback model's attempt follows the failed pool's, marked as a fallback; the request span names the served model", async () => {
    const t = clientTrace();
    const res = await post({ model: "gone", input: "hi" }, { traceparent: t.traceparent });
    expect(res.status).toBe(200);
    const spans = await spansOf(t.traceId, (s) => !!serverSpan(s) && clientSpans(s).some((c) => c.attributes["router.upstream"] === "oai"));
    const server = serverSpan(spans)!;
    const calls = clientSpans(spans);
    const failed = calls.filter((c) => c.attributes["router.upstream"] === "dead");
    const served = calls.find((c) => c.attributes["router.upstream"] === "oai")!;
    expect(failed.length).toBeGreaterThan(0);
    for (const f of failed) expect(f.attributes).toMatchObject({ "router.model": "gone", "router.fallback": false, "error.type": "connect" });
    expect(served.attributes).toMatchObject({ "router.model": "gpt-4.1", "router.fallback": true, "gen_ai.request.model": "gpt-4.1" });
    expect(calls.every((c) => c.parentSpanId === server.spanId)).toBe(true);
    expect(server.attributes).toMatchObject({ "gen_ai.request.model": "gone", "gen_ai.response.model": "gpt-4.1", "router.fallback": true });
  });

  it("history load and save are store spans under the request", async () => {
    const first = (await (await post({ model: "local", input: "one" })).json()) as { id: string };
    const t = clientTrace();
    expect((await post({ model: "local", input: "two", previous_response_id: first.id }, { traceparent: t.traceparent })).status).toBe(200);
    const spans = await spansOf(t.traceId, (s) => !!serverSpan(s));
    const server = serverSpan(spans)!;
    const load = spans.find((s) => s.name === "store history.load")!;
    const save = spans.find((s) => s.name === "store responses.save")!;
    expect(load.kind).toBe(KIND.client);
    expect(load.parentSpanId).toBe(server.spanId);
    expect(load.attributes).toMatchObject({ "db.system.name": "memory", "db.operation.name": "history.load" });
    expect(save.parentSpanId).toBe(server.spanId);
    expect(server.attributes["router.previous_response_id"]).toBe(first.id);
  });

  it("a cache hit: the request span says so and no upstream attempt is made", async () => {
    const body = { model: "cached", input: "cache me" };
    expect((await post(body)).status).toBe(200);
    const t = clientTrace();
    expect((await post(body, { traceparent: t.traceparent })).status).toBe(200);
    const spans = await spansOf(t.traceId, (s) => !!serverSpan(s));
    expect(serverSpan(spans)!.attributes).toMatchObject({ "router.cache_hit": true, "router.upstream": "cache", "gen_ai.request.model": "cached" });
    expect(clientSpans(spans)).toEqual([]);
  });

  it("conversation affinity: a follow-up turn's attempt says it went to the endpoint of the previous turn", async () => {
    const first = (await (await post({ model: "local", input: "one" })).json()) as { id: string };
    const t = clientTrace();
    expect((await post({ model: "local", input: "two", previous_response_id: first.id }, { traceparent: t.traceparent })).status).toBe(200);
    const spans = await spansOf(t.traceId, (s) => !!serverSpan(s) && clientSpans(s).length === 1);
    expect(clientSpans(spans)[0]!.attributes).toMatchObject({ "router.affinity": true, "router.upstream": "box" });
    expect(serverSpan(spans)!.attributes["router.affinity_endpoint"]).toBe("box");
  });

  it("background: the job's CONSUMER span is linked to the request that queued it and parents the job's upstream call", async () => {
    const t = clientTrace();
    const res = await post({ model: "local", input: "later", background: true }, { traceparent: t.traceparent });
    const queued = (await res.json()) as { id: string };
    const requestSpans = await spansOf(t.traceId, (s) => !!serverSpan(s));
    const server = serverSpan(requestSpans)!;
    expect(server.attributes["router.background"]).toBe(true);
    expect(requestSpans.some((s) => s.name === "store jobs.enqueue" && s.parentSpanId === server.spanId)).toBe(true);

    let job: ReceivedSpan | undefined;
    await waitUntil("the job's span", async () => {
      await router.runtime.tracing.flush();
      job = otlp.spans.find((s) => s.kind === KIND.consumer && s.attributes["gen_ai.response.id"] === queued.id);
      return !!job;
    });
    expect(job!.name).toBe("background local");
    expect(job!.parentSpanId).toBeUndefined();
    expect(job!.links).toEqual([{ traceId: t.traceId, spanId: server.spanId }]);
    expect(job!.attributes).toMatchObject({ "gen_ai.operation.name": "chat", "gen_ai.request.model": "local", "router.response_status": "completed", "gen_ai.usage.output_tokens": 2 });
    const jobSpans = await spansOf(job!.traceId, (s) => clientSpans(s).length === 1);
    expect(clientSpans(jobSpans)[0]!.parentSpanId).toBe(job!.spanId);
    // The job's log lines carry its trace, not the request's.
    const finished = log.lines().find((l) => l.msg === "background job finished" && l.responseId === queued.id)!;
    expect(finished).toMatchObject({ trace_id: job!.traceId, span_id: job!.spanId });
  });

  it("chat completions and embeddings proxies: attempt spans named by their operation", async () => {
    const t = clientTrace();
    const res = await router.fetch("/v1/embeddings", {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${CLIENT_KEY}`, traceparent: t.traceparent },
      body: JSON.stringify({ model: "local", input: "hi" }),
    });
    expect(res.status).toBe(200);
    const spans = await spansOf(t.traceId, (s) => !!serverSpan(s) && clientSpans(s).length === 1);
    expect(serverSpan(spans)!).toMatchObject({ name: "POST /v1/embeddings", attributes: { "gen_ai.operation.name": "embeddings", "gen_ai.request.model": "local" } });
    expect(clientSpans(spans)[0]!).toMatchObject({ name: "embeddings llama3.1:8b", attributes: { "gen_ai.operation.name": "embeddings" } });
  });

  it("no prompt or completion text, upstream key or client key in any exported span", async () => {
    await router.runtime.tracing.flush();
    const all = otlp.bodies.join("\n");
    expect(all).toContain("gen_ai.request.model");
    expect(all).not.toContain(PROMPT);
    expect(all).not.toContain("Hello from upstream");
    expect(all).not.toContain(UPSTREAM_KEY);
    expect(all).not.toContain(CLIENT_KEY);
  });
});

describe("traces of responses over a WebSocket", () => {
  it("each response.create is its own SERVER span continuing the upgrade's traceparent, parent of its upstream attempt; a chained store:false turn too", async () => {
    const t = clientTrace();
    const ws = new WebSocket(router.url.replace(/^http/, "ws") + "/v1/responses", { headers: { authorization: `Bearer ${CLIENT_KEY}`, traceparent: t.traceparent } });
    const events: { type: string; response?: { id: string } }[] = [];
    ws.on("message", (data) => events.push(JSON.parse(String(data))));
    await new Promise((resolve, reject) => ws.once("open", resolve).once("error", reject));
    const completed = async (n: number) => {
      await waitUntil(`${n} completed responses on the socket`, () => events.filter((e) => e.type === "response.completed").length >= n);
      return events.filter((e) => e.type === "response.completed")[n - 1]!.response!.id;
    };
    ws.send(JSON.stringify({ type: "response.create", model: "local", input: PROMPT, store: false }));
    const first = await completed(1);
    ws.send(JSON.stringify({ type: "response.create", model: "gpt-4.1", input: "and again", store: false, previous_response_id: first }));
    const second = await completed(2);
    ws.close();

    const spans = await spansOf(t.traceId, (s) => s.filter((x) => x.kind === KIND.server).length === 2 && clientSpans(s).length === 2);
    const servers = spans.filter((s) => s.kind === KIND.server);
    for (const [server, id, model] of [[servers.find((s) => s.attributes["gen_ai.response.id"] === first), first, "local"], [servers.find((s) => s.attributes["gen_ai.response.id"] === second), second, "gpt-4.1"]] as const) {
      expect(server, `the span of ${id}`).toBeDefined();
      expect(server!.name).toBe("response.create");
      expect(server!.parentSpanId).toBe(t.parentId);
      expect(server!.attributes).toMatchObject({ "network.protocol.name": "websocket", "gen_ai.operation.name": "chat", "gen_ai.request.model": model, "router.key": "team-a", "router.ws.status": 200 });
      const calls = clientSpans(spans).filter((c) => c.parentSpanId === server!.spanId);
      expect(calls).toHaveLength(1);
    }
    expect(JSON.stringify(spans)).not.toContain(PROMPT);
  });
});

describe("attempts that end badly", () => {
  it("a stream that breaks after the headers: the attempt's span ends failed; an ejected endpoint asked anyway is marked panic-routed", async () => {
    const up = await startMockUpstream();
    const receiver = await startOtlpReceiver();
    const r = await startTestRouter(
      {
        endpoints: [{ name: "a", url: up.url, kind: "chat" }],
        models: { m: { endpoints: ["a"] } },
        routing: { retry: { attempts: 1, max_time: "5s" }, health: { failure_threshold: 1, cooldown: "60s" } },
        tracing: { endpoint: receiver.url },
      },
      { env: {} },
    );
    const attemptOf = async (requestId: string): Promise<ReceivedSpan> => {
      let found: ReceivedSpan | undefined;
      await waitUntil(`the attempt of ${requestId}`, async () => {
        await r.runtime.tracing.flush();
        const server = receiver.spans.find((s) => s.kind === KIND.server && s.attributes["router.request_id"] === requestId);
        found = server && receiver.spans.find((s) => s.parentSpanId === server.spanId && s.kind === KIND.client);
        return !!found;
      });
      return found!;
    };
    const call = (requestId: string, stream: boolean) =>
      r.fetch("/v1/responses", { method: "POST", headers: { "content-type": "application/json", "x-request-id": requestId }, body: JSON.stringify({ model: "m", input: "hi", stream }) });
    try {
      up.enqueue("/chat/completions", { kind: "sse", frames: [...chatTextChunks(["one", "two", "three"]), "data: [DONE]\n\n"], dieAfter: 2 });
      const broken = await call("req-broken", true);
      expect(broken.status).toBe(200);
      expect(await broken.text()).toContain("response.failed");
      const b = await attemptOf("req-broken");
      expect(b.status.code).toBe(2);
      expect(b.attributes["error.type"]).toBe("incomplete");
      expect(b.attributes["http.response.status_code"]).toBe(200);

      // The broken stream ejected "a" (threshold 1): the next request is routed to it anyway.
      up.enqueue("/chat/completions", upstreamError(503, "loading", null, "server_error"));
      expect((await call("req-panic", false)).status).toBe(503);
      const p = await attemptOf("req-panic");
      expect(p.attributes).toMatchObject({ "router.panic_routed": true, "error.type": "503", "http.response.status_code": 503, "router.failure": "status_5xx" });
      const server = receiver.spans.find((s) => s.kind === KIND.server && s.attributes["router.request_id"] === "req-panic")!;
      expect(server.status.code).toBe(2);
      expect(server.attributes["http.response.status_code"]).toBe(503);
    } finally {
      await r.close(500);
      await Promise.all([up.close(), receiver.close()]);
    }
  });
});

describe("tracing options", () => {
  it("capture_content: prompt and output text on the spans when asked", async () => {
    const receiver = await startOtlpReceiver();
    const r = await startTestRouter(
      { endpoints: [{ name: "box", url: chat.url, kind: "chat" }], models: { local: { endpoints: ["box"] } }, tracing: { endpoint: receiver.url, capture_content: true } },
      { env: {} },
    );
    try {
      await r.client.responses.create({ model: "local", input: PROMPT, instructions: "be brief" });
      await waitUntil("the request span", async () => {
        await r.runtime.tracing.flush();
        return receiver.spans.some((s) => s.kind === KIND.server);
      });
      const server = receiver.spans.find((s) => s.kind === KIND.server)!;
      expect(server.attributes["gen_ai.system_instructions"]).toBe("be brief");
      expect(String(server.attributes["gen_ai.input.messages"])).toContain(PROMPT);
      const call = receiver.spans.find((s) => s.kind === KIND.client && s.attributes["gen_ai.operation.name"])!;
      expect(String(call.attributes["gen_ai.output.messages"])).toContain("Hello world");
    } finally {
      await r.close(500);
      await receiver.close();
    }
  });

  it("off unless configured: no export, no trace headers upstream, no trace ids in logs", async () => {
    const receiver = await startOtlpReceiver();
    const quiet = captureLog("info");
    // An OTLP endpoint in the environment would turn it on: OTEL_SDK_DISABLED wins.
    const r = await startTestRouter(
      { endpoints: [{ name: "box", url: chat.url, kind: "chat" }], models: { local: { endpoints: ["box"] } } },
      { env: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.url, OTEL_SDK_DISABLED: "true" }, logger: quiet.logger },
    );
    try {
      expect(r.runtime.tracing.on).toBe(false);
      chat.requests.length = 0;
      const t = clientTrace();
      const res = await r.fetch("/v1/responses", { method: "POST", headers: { "content-type": "application/json", traceparent: t.traceparent }, body: JSON.stringify({ model: "local", input: "hi" }) });
      expect(res.status).toBe(200);
      expect(chat.requests.at(-1)!.headers.traceparent).toBeUndefined();
      expect(quiet.lines().some((l) => "trace_id" in l)).toBe(false);
    } finally {
      await r.close(500);
    }
    expect(receiver.bodies).toEqual([]);
    await receiver.close();
  });

  it("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT and OTEL_SERVICE_NAME alone turn it on; shutdown flushes the last spans", async () => {
    const receiver = await startOtlpReceiver();
    const r = await startTestRouter(
      { endpoints: [{ name: "box", url: chat.url, kind: "chat" }], models: { local: { endpoints: ["box"] } } },
      { env: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.url, OTEL_SERVICE_NAME: "from-env", OTEL_EXPORTER_OTLP_TRACES_HEADERS: "x-collector-token=tok1" } },
    );
    await r.client.responses.create({ model: "local", input: "hi" });
    await r.close(500); // no flush: the batch goes out on shutdown
    expect(receiver.spans.some((s) => s.kind === KIND.server && s.resource["service.name"] === "from-env")).toBe(true);
    expect(receiver.headers[0]!["x-collector-token"]).toBe("tok1");
    await receiver.close();
  });
});

describe("traces across instances (Redis)", () => {
  it("the job record carries the trace context through the queue: the job's span, on whichever instance runs it, links to the request", async () => {
    const redis = await startRedis();
    const receiver = await startOtlpReceiver();
    const raw = {
      endpoints: [{ name: "box", url: chat.url, kind: "chat" }],
      models: { local: { endpoints: ["box"] } },
      storage: { redis_url: redis.url, prefix: `rrtrace:${process.pid}:` },
      tracing: { endpoint: receiver.url },
    };
    const a = await startTestRouter(raw, { env: {} });
    const b = await startTestRouter(raw, { env: {} });
    try {
      const t = clientTrace();
      const res = await a.fetch("/v1/responses", { method: "POST", headers: { "content-type": "application/json", traceparent: t.traceparent }, body: JSON.stringify({ model: "local", input: "later", background: true }) });
      const queued = (await res.json()) as { id: string };
      let job: ReceivedSpan | undefined;
      let server: ReceivedSpan | undefined;
      await waitUntil("the request's and the job's spans", async () => {
        await Promise.all([a.runtime.tracing.flush(), b.runtime.tracing.flush()]);
        server = receiver.spans.find((s) => s.kind === KIND.server && s.traceId === t.traceId);
        job = receiver.spans.find((s) => s.kind === KIND.consumer && s.attributes["gen_ai.response.id"] === queued.id && s.attributes["router.response_status"]);
        return !!server && !!job;
      }, 10_000);
      expect(job!.links).toEqual([{ traceId: t.traceId, spanId: server!.spanId }]);
      expect(job!.traceId).not.toBe(t.traceId);
      const enqueue = receiver.spans.find((s) => s.name === "store jobs.enqueue" && s.traceId === t.traceId)!;
      expect(enqueue.attributes["db.system.name"]).toBe("redis");
    } finally {
      await a.close(500);
      await b.close(500);
      await receiver.close();
      await redis.stop();
    }
  });
});
