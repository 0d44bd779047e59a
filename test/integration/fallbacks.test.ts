import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { captureLog, type CapturedLog } from "../helpers/log-capture.js";
import { metricSample } from "../helpers/metrics-text.js";
import { startMockUpstream, type MockUpstream } from "../helpers/mock-upstream.js";
import { deadUrl } from "../helpers/pool-config.js";
import { startTestRouter, parseSse, type TestRouter } from "../helpers/router.js";
import { waitUntil } from "../helpers/wait.js";

/** models.<name>.fallbacks: a pool that fails before the first byte hands the request to the next model, of either kind. */

let chat: MockUpstream;
let oai: MockUpstream;
let oaiDown: MockUpstream;
let router: TestRouter;
let client: OpenAI;
let log: CapturedLog;

const DOWN = { kind: "json" as const, status: 503, body: { error: { message: "overloaded", type: "server_error", param: null, code: null } } };

beforeAll(async () => {
  chat = await startMockUpstream();
  oai = await startMockUpstream();
  oaiDown = await startMockUpstream();
  oaiDown.setDefault("/responses", DOWN);
  oaiDown.setDefault("/chat/completions", DOWN);
  const dead = await deadUrl(); // nothing listens: connection refused
  log = captureLog("info");
  router = await startTestRouter({
    endpoints: [
      { name: "dead-box", url: dead, kind: "chat" },
      { name: "box", url: chat.url, kind: "chat" },
      { name: "oai", url: oai.url, kind: "openai", api_key: "sk-upstream-secret-0123456789" },
      { name: "oai-down", url: oaiDown.url, kind: "openai" },
      { name: "box-tight", url: chat.url, kind: "chat", max_concurrency: 1 },
    ],
    models: {
      // chat pool (down) -> openai model
      local: { endpoints: ["dead-box"], upstream_model: "llama3.1:8b", fallbacks: ["gpt-4.1"] },
      "gpt-4.1": { endpoints: ["oai"] },
      // openai pool (503) -> chat model
      "gpt-primary": { endpoints: ["oai-down"], fallbacks: ["local-ok"] },
      "local-ok": { endpoints: ["box"], upstream_model: "qwen2.5:7b" },
      // chat (down) -> openai (503) -> chat: a cross-kind chain
      chain: { endpoints: ["dead-box"], fallbacks: ["gpt-primary"] },
      // one slot: a second request waits queue_timeout, then goes to the fallback
      tight: { endpoints: ["box-tight"], fallbacks: ["gpt-4.1"] },
    },
    routing: { queue_timeout: "500ms", retry: { attempts: 2, max_time: "5s" }, health: { failure_threshold: 3, cooldown: "200ms" } },
  }, { logger: log.logger });
  client = router.client;
});
afterAll(async () => {
  await router.close(500);
  await Promise.all([chat.close(), oai.close(), oaiDown.close()]);
});

describe("model fallbacks on /v1/responses", () => {
  it("JSON: a chat pool that is down falls back to an openai model; the client's model name stays, the served one is in x-router-model", async () => {
    const { data, response } = await client.responses.create({ model: "local", input: "hi" }).withResponse();
    expect(data.output_text).toBe("Hello from upstream");
    expect(data.model).toBe("local");
    expect(response.headers.get("x-router-model")).toBe("gpt-4.1");
    expect(oai.requests.at(-1)!.body.model).toBe("gpt-4.1");
    // Stored under the client's model, chainable as any response.
    expect((await client.responses.retrieve(data.id)).model).toBe("local");
    // The logs name the model that served it.
    expect(log.lines().some((l) => l.msg === "model local failed; falling back to gpt-4.1" && l.to === "gpt-4.1")).toBe(true);
    await waitUntil("the access line", () => log.lines().some((l) => l.msg === "request" && l.model === "local" && l.servedModel === "gpt-4.1"));
  });

  it("stream: every event names the client's model", async () => {
    const res = await router.fetch("/v1/responses", {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer test-key" },
      body: JSON.stringify({ model: "local", input: "hi", stream: true }),
    });
    expect(res.headers.get("x-router-model")).toBe("gpt-4.1");
    const events = parseSse(await res.text());
    expect(events.at(-1)!.event).toBe("response.completed");
    for (const e of events.filter((e) => e.data.response)) expect(e.data.response.model, e.event).toBe("local");
  });

  it("a cross-kind chain: chat (down) -> openai (503) -> chat", async () => {
    const before = chat.requests.length;
    const { data, response } = await client.responses.create({ model: "chain", input: "hi" }).withResponse();
    expect(data.output_text).toBe("Hello world");
    expect(data.model).toBe("chain");
    expect(response.headers.get("x-router-model")).toBe("local-ok");
    expect(oaiDown.requests.some((r) => r.path === "/responses")).toBe(true);
    expect(chat.requests.slice(before).map((r) => r.body.model)).toEqual(["qwen2.5:7b"]);
    // The next turn goes back through the chain with the stored history, whichever kind serves it.
    const next = await client.responses.create({ model: "local", input: "and again", previous_response_id: data.id });
    expect(next.output_text).toBe("Hello from upstream");
    const sent = oai.requests.at(-1)!.body.input as { role?: string; content: unknown }[];
    expect(JSON.stringify(sent)).toContain("Hello world");
    expect(JSON.stringify(sent)).toContain("and again");
  });

  it("background: the job falls back too", async () => {
    const bg = await client.responses.create({ model: "gpt-primary", input: "hi", background: true });
    let done = bg;
    await waitUntil("the job", async () => (done = await client.responses.retrieve(bg.id)).status === "completed");
    expect(done.model).toBe("gpt-primary");
    expect(done.output_text).toBe("Hello world");
  });

  it("an upstream 429 (rate limited) falls back too", async () => {
    oaiDown.enqueue("/responses", { kind: "json", status: 429, body: { error: { message: "Rate limit reached", type: "requests", param: null, code: "rate_limit_exceeded" } } });
    const before = oaiDown.requests.length;
    const { data, response } = await client.responses.create({ model: "gpt-primary", input: "hi" }).withResponse();
    expect(data.output_text).toBe("Hello world");
    expect(response.headers.get("x-router-model")).toBe("local-ok");
    expect(oaiDown.requests.length).toBe(before + 1);
  });

  it("a pool with no free slot (429 after queue_timeout) falls back", async () => {
    chat.enqueue("/chat/completions", { kind: "hang" });
    const ac = new AbortController();
    const holder = client.responses.create({ model: "tight", input: "hold" }, { signal: ac.signal }).catch(() => null);
    await waitUntil("the slot to be taken", () => chat.open() > 0);
    const { data, response } = await client.responses.create({ model: "tight", input: "hi" }).withResponse();
    expect(data.output_text).toBe("Hello from upstream");
    expect(response.headers.get("x-router-model")).toBe("gpt-4.1");
    ac.abort();
    await holder;
  });

  it("a 4xx about the request is the client's answer: no fallback", async () => {
    oaiDown.enqueue("/responses", { kind: "json", status: 400, body: { error: { message: "bad tool schema", type: "invalid_request_error", param: "tools", code: null } } });
    const before = chat.requests.length;
    const err = await client.responses.create({ model: "gpt-primary", input: "hi" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(chat.requests.length).toBe(before);
  });

  it("metrics count the fallback and the tokens under the model that served them", async () => {
    const text = await (await router.fetch("/metrics")).text();
    expect(metricSample(text, "responses_router_fallbacks_total", { model: "local", fallback: "gpt-4.1" })).toBeGreaterThanOrEqual(2);
    expect(metricSample(text, "responses_router_fallbacks_total", { model: "chain", fallback: "local-ok" })).toBeGreaterThanOrEqual(1);
    expect(metricSample(text, "responses_router_tokens_total", { model: "gpt-4.1", type: "output" })).toBeGreaterThan(0);
  });
});

describe("model fallbacks on chat completions and embeddings", () => {
  it("chat completions, JSON and stream: served by the fallback, named as the client's model", async () => {
    const { data, response } = await client.chat.completions.create({ model: "gpt-primary", messages: [{ role: "user", content: "hi" }] }).withResponse();
    expect(data.model).toBe("gpt-primary");
    expect(data.choices[0]!.message.content).toBe("Hello world");
    expect(response.headers.get("x-router-model")).toBe("local-ok");
    const stream = await client.chat.completions.create({ model: "local", messages: [{ role: "user", content: "hi" }], stream: true });
    const models = new Set<string>();
    for await (const chunk of stream) models.add(chunk.model);
    expect([...models]).toEqual(["local"]);
    expect(oai.requests.at(-1)!.path).toBe("/chat/completions");
  });

  it("embeddings", async () => {
    const { data, response } = await client.embeddings.create({ model: "local", input: "hi" }).withResponse();
    expect(data.model).toBe("local");
    expect(response.headers.get("x-router-model")).toBe("gpt-4.1");
  });
});
