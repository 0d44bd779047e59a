import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chatCompletion, startMockUpstream, type MockUpstream } from "../helpers/mock-upstream.js";
import { startTestRouter, twoKindConfig, type TestRouter } from "../helpers/router.js";

/** POST /v1/responses/compact is admitted, limited, counted and owned like any inference request. */
let chat: MockUpstream;
let oai: MockUpstream;
let router: TestRouter;
const KEYS = [
  { name: "rpm", key: "rr-cmp-rpm-key-0123456789", limits: { requests_per_minute: 1 } },
  { name: "budget", key: "rr-cmp-budget-key-0123456789", budget: { tokens_per_day: 100 } },
  { name: "ops", key: "rr-cmp-ops-key-0123456789", role: "admin" },
  { name: "plain", key: "rr-cmp-plain-key-0123456789" },
];
const client = (i: number) => new OpenAI({ baseURL: `${router.url}/v1`, apiKey: KEYS[i]!.key, maxRetries: 0 });

beforeAll(async () => {
  chat = await startMockUpstream();
  oai = await startMockUpstream();
  chat.setDefault("/chat/completions", { kind: "json", body: chatCompletion("S", "m", { usage: { prompt_tokens: 90, completion_tokens: 20, total_tokens: 110 } }) });
  router = await startTestRouter({ ...twoKindConfig(chat.url, oai.url), server: { api_keys: KEYS }, compaction: { key: "limits-test-key-0123456789" } });
});
afterAll(async () => {
  await router.close(500);
  await chat.close();
  await oai.close();
});

describe("compaction under per-key limits", () => {
  it("requests_per_minute: the second compact call is a 429 with OpenAI's headers", async () => {
    const first = await client(0).responses.compact({ model: "local", input: "hi" }).withResponse();
    expect(first.response.headers.get("x-ratelimit-limit-requests")).toBe("1");
    const err = await client(0).responses.compact({ model: "local", input: "hi" }).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect(err.error.code).toBe("rate_limit_exceeded");
  });

  it("the summary's tokens are charged to the key's budget and counted in usage and metrics", async () => {
    await client(1).responses.compact({ model: "local", input: "hi" });
    const err = await client(1).responses.compact({ model: "local", input: "hi" }).catch((e) => e);
    expect(err.status).toBe(429);
    const usage = await (await router.fetch("/v1/usage", { headers: { authorization: `Bearer ${KEYS[2]!.key}` } })).json();
    expect(JSON.stringify(usage)).toContain("budget");
    const metrics = await (await router.fetch("/metrics", { headers: { authorization: `Bearer ${KEYS[2]!.key}` } })).text();
    expect(metrics).toMatch(/responses_router_requests_total\{route="\/v1\/responses\/compact",model="local",upstream="box",status="200",key="budget"\} 1/);
    expect(metrics).toMatch(/responses_router_tokens_total\{model="local",upstream="box",type="input",key="budget"\} 90/);
  });

  it("another key's previous_response_id is a 404, as for a create", async () => {
    const mine = await client(2).responses.create({ model: "local", input: "x" });
    const err = await client(3).responses.compact({ model: "local", previous_response_id: mine.id }).catch((e) => e);
    expect(err.status).toBe(404);
    expect(err.error.param).toBe("previous_response_id");
  });
});
