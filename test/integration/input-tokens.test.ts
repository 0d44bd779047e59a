import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMockUpstream, upstreamError, type MockUpstream } from "../helpers/mock-upstream.js";
import { startTestRouter, type TestRouter } from "../helpers/router.js";

/**
 * POST /v1/responses/input_tokens through the openai SDK: passed through to OpenAI endpoints;
 * on chat endpoints the backend's tokenizer (llama.cpp: /apply-template then /tokenize;
 * vLLM: /tokenize with messages), else the documented estimate, flagged in x-router-token-count.
 */
let llama: MockUpstream;
let vllm: MockUpstream;
let plain: MockUpstream;
let oai: MockUpstream;
let router: TestRouter;

beforeAll(async () => {
  [llama, vllm, plain, oai] = await Promise.all([startMockUpstream(), startMockUpstream(), startMockUpstream(), startMockUpstream()]);
  llama.setDefault("/apply-template", (req) => ({ kind: "json", body: { prompt: req.body.messages.map((m: { role: string; content: string }) => `<|${m.role}|>${m.content}`).join("") } }));
  llama.setDefault("/tokenize", (req) => ({ kind: "json", body: { tokens: String(req.body.content).split(/(?=<\|)|\s+/).map((_, i) => i) } }));
  vllm.setDefault("/tokenize", (req) => (req.body.messages ? { kind: "json", body: { count: 40 + req.body.messages.length, max_model_len: 4096, tokens: [] } } : upstreamError(400, "no prompt")));
  oai.setDefault("/responses/input_tokens", () => ({ kind: "json", body: { object: "response.input_tokens", input_tokens: 123 } }));
  router = await startTestRouter({
    endpoints: [
      { name: "llama", url: llama.url, kind: "chat" },
      { name: "vllm", url: vllm.url, kind: "chat" },
      { name: "plain", url: plain.url, kind: "chat" },
      { name: "oai", url: oai.url, kind: "openai", api_key: "sk-upstream-secret-0123456789" },
    ],
    models: {
      "llama-m": { endpoints: ["llama"] },
      "vllm-m": { endpoints: ["vllm"], upstream_model: "org/vllm-model" },
      "plain-m": { endpoints: ["plain"] },
      "gpt-4.1": { endpoints: ["oai"] },
    },
  });
});
afterAll(async () => {
  await router?.close(500);
  await Promise.all([llama, vllm, plain, oai].map((m) => m?.close()));
});

async function count(params: Parameters<TestRouter["client"]["responses"]["inputTokens"]["count"]>[0]) {
  const { data, response } = await router.client.responses.inputTokens.count(params).withResponse();
  return { data, source: response.headers.get("x-router-token-count") };
}

describe("POST /v1/responses/input_tokens", () => {
  it("passes through to an OpenAI endpoint, with the stored history as input and only count fields", async () => {
    const prev = await router.client.responses.create({ model: "gpt-4.1", input: "first" });
    const got = await count({ model: "gpt-4.1", input: "second", previous_response_id: prev.id, instructions: "be brief" });
    expect(got).toEqual({ data: { object: "response.input_tokens", input_tokens: 123 }, source: "upstream" });
    const sent = oai.requests.at(-1)!;
    expect(sent.path).toBe("/responses/input_tokens");
    expect(sent.headers.authorization).toBe("Bearer sk-upstream-secret-0123456789");
    expect(Object.keys(sent.body).sort()).toEqual(["input", "instructions", "model"]);
    expect(JSON.stringify(sent.body.input)).toContain("first");
    expect(JSON.stringify(sent.body.input)).toContain("second");
  });

  it("keeps an OpenAI endpoint's 4xx", async () => {
    oai.enqueue("/responses/input_tokens", upstreamError(400, "Invalid 'input': bad.", "invalid_value", "invalid_request_error", "input"));
    await expect(count({ model: "gpt-4.1", input: "x" })).rejects.toMatchObject({ status: 400, error: { message: "Invalid 'input': bad.", param: "input" } });
  });

  it("asks llama.cpp's template and tokenizer on a chat endpoint, with the conversation's history", async () => {
    const conv = await router.client.conversations.create({ items: [{ type: "message", role: "user", content: "earlier turn" }] });
    const got = await count({ model: "llama-m", input: "hello there", instructions: "sys", conversation: conv.id });
    expect(got.source).toBe("tokenizer");
    const template = llama.requests.find((r) => r.path === "/apply-template")!;
    expect(template.body.messages).toEqual([
      { role: "system", content: "sys" },
      { role: "user", content: "earlier turn" },
      { role: "user", content: "hello there" },
    ]);
    // "<|system|>sys<|user|>earlier turn<|user|>hello there" split by the mock tokenizer
    expect(got.data).toEqual({ object: "response.input_tokens", input_tokens: 5 });
  });

  it("asks vLLM's /tokenize with the messages when there is no /apply-template", async () => {
    const got = await count({ model: "vllm-m", input: [{ role: "user", content: "a" }, { role: "assistant", content: "b" }, { role: "user", content: "c" }] });
    expect(got).toEqual({ data: { object: "response.input_tokens", input_tokens: 43 }, source: "tokenizer" });
    const sent = vllm.requests.find((r) => r.path === "/tokenize" && r.body.messages)!;
    expect(sent.body).toMatchObject({ model: "org/vllm-model", add_generation_prompt: true });
  });

  it("estimates (and says so) on a backend without a tokenizer, probing it only once", async () => {
    const text = "x".repeat(400);
    const got = await count({ model: "plain-m", input: text });
    expect(got).toEqual({ data: { object: "response.input_tokens", input_tokens: 100 + 3 }, source: "estimate" });
    const probes = plain.requests.length;
    expect(probes).toBeGreaterThan(0);
    await count({ model: "plain-m", input: text });
    expect(plain.requests.length).toBe(probes);
    expect((await router.client.responses.create({ model: "plain-m", input: "still serves" })).status).toBe("completed");
  });

  it("answers 404 for an unknown model and 400 for a bad body, in OpenAI's shape", async () => {
    await expect(count({ model: "nope", input: "x" })).rejects.toMatchObject({ status: 404, error: { param: "model" } });
    await expect(count({ model: "llama-m", input: 5 as never })).rejects.toMatchObject({ status: 400, error: { param: "input" } });
  });
});
