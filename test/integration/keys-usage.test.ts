import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMockUpstream, type MockUpstream } from "../helpers/mock-upstream.js";
import { startTestRouter, twoKindConfig, type TestRouter } from "../helpers/router.js";
import { waitUntil } from "../helpers/wait.js";

/** Usage per key: GET /v1/usage (admin keys), the key label on metrics, admin-only backend health. */

const NOON = Date.UTC(2026, 5, 15, 12, 0, 0);
const KEYS = {
  a: { name: "team-a", key: "rr-usage-team-a-8d7c6b5a4f" },
  b: { name: "team-b", key: "rr-usage-team-b-4f5a6b7c8d", models: ["gpt-4.1"] },
  ops: { name: "ops", key: "rr-usage-ops-1b2c3d4e5f", role: "admin" },
};

let chat: MockUpstream;
let oai: MockUpstream;
let router: TestRouter;
const client = (k: keyof typeof KEYS) => new OpenAI({ baseURL: `${router.url}/v1`, apiKey: KEYS[k].key, maxRetries: 0 });
type Totals = Record<string, { requests: number; input_tokens: number; output_tokens: number }>;
const expected: Totals = {};
function count(key: string, model: string, requests: number, input: number, output: number): void {
  const t = (expected[`${key}/${model}`] ??= { requests: 0, input_tokens: 0, output_tokens: 0 });
  t.requests += requests;
  t.input_tokens += input;
  t.output_tokens += output;
}

beforeAll(async () => {
  chat = await startMockUpstream();
  oai = await startMockUpstream();
  router = await startTestRouter({ ...twoKindConfig(chat.url, oai.url), server: { api_keys: Object.values(KEYS) } }, { now: () => NOON });

  // Known traffic; the expected totals are the usage the mocks reported, as the clients saw it.
  const a = client("a");
  for (let i = 0; i < 2; i++) {
    const r = await a.responses.create({ model: "local", input: "hi" });
    count("team-a", "local", 1, r.usage!.input_tokens, r.usage!.output_tokens);
  }
  const stream = await a.responses.create({ model: "local", input: "hi", stream: true });
  for await (const ev of stream) if (ev.type === "response.completed") count("team-a", "local", 1, ev.response.usage!.input_tokens, ev.response.usage!.output_tokens);
  const cc = await a.chat.completions.create({ model: "local", messages: [{ role: "user", content: "hi" }] });
  count("team-a", "local", 1, cc.usage!.prompt_tokens, cc.usage!.completion_tokens);
  const emb = await a.embeddings.create({ model: "local", input: "hi" });
  count("team-a", "local", 1, emb.usage.prompt_tokens, 0);
  const bg = await a.responses.create({ model: "gpt-4.1", input: "hi", background: true });
  let done = bg;
  await waitUntil("the background job", async () => ((done = await a.responses.retrieve(bg.id)).status === "completed"));
  count("team-a", "gpt-4.1", 1, done.usage!.input_tokens, done.usage!.output_tokens);
  const rb = await client("b").responses.create({ model: "gpt-4.1", input: "hi" });
  count("team-b", "gpt-4.1", 1, rb.usage!.input_tokens, rb.usage!.output_tokens);
  await client("b").responses.create({ model: "local", input: "hi" }).catch(() => {}); // not its model: no usage
});
afterAll(async () => {
  await router.close(500);
  await chat.close();
  await oai.close();
});

interface UsageBody {
  object: string;
  from: string;
  to: string;
  data: { object: string; date: string; key: string; model: string; requests: number; input_tokens: number; output_tokens: number; total_tokens: number }[];
  totals: { key: string; model: string; requests: number; input_tokens: number; output_tokens: number; total_tokens: number }[];
}

const usage = (query = "", key = KEYS.ops.key) => router.fetch(`/v1/usage${query}`, { headers: { authorization: `Bearer ${key}` } });

describe("GET /v1/usage", () => {
  it("per key and model, by UTC day: the totals equal the tokens the upstreams reported", async () => {
    let body: UsageBody | undefined;
    const wanted = JSON.stringify(expected);
    // Rows are written when each answer is over (off the request's path): wait for the last one.
    await waitUntil("usage to add up", async () => {
      body = (await (await usage()).json()) as UsageBody;
      const got: Totals = {};
      for (const t of body.totals) got[`${t.key}/${t.model}`] = { requests: t.requests, input_tokens: t.input_tokens, output_tokens: t.output_tokens };
      return JSON.stringify(Object.fromEntries(Object.keys(expected).map((k) => [k, got[k]]))) === wanted && Object.keys(got).length === Object.keys(expected).length;
    });
    expect(body!).toMatchObject({ object: "list", from: "2026-05-17", to: "2026-06-15" });
    expect(body!.data.every((d) => d.object === "usage.day" && d.date === "2026-06-15" && d.total_tokens === d.input_tokens + d.output_tokens)).toBe(true);
    expect(expected["team-a/local"]!.requests).toBe(5);
    expect(expected["team-a/local"]!.input_tokens).toBeGreaterThan(0);
  });

  it("filters by key and date range; validates dates", async () => {
    const one = (await (await usage("?key=team-b&from=2026-06-15&to=2026-06-15")).json()) as UsageBody;
    expect(one.data.map((d) => [d.key, d.model])).toEqual([["team-b", "gpt-4.1"]]);
    expect(((await (await usage("?from=2026-06-16&to=2026-06-20")).json()) as UsageBody).data).toEqual([]);
    for (const q of ["?from=2026-13-01", "?to=yesterday", "?from=2026-06-15&to=2026-06-01", "?from=2020-01-01&to=2026-06-15"]) {
      const res = await usage(q);
      expect(res.status, q).toBe(400);
      expect(((await res.json()) as { error: { type: string } }).error.type).toBe("invalid_request_error");
    }
  });

  it("admin keys only: another key gets 403 permission_error; no key 401", async () => {
    const err = await client("a")
      .get("/usage")
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect((err as InstanceType<typeof OpenAI.PermissionDeniedError>).error).toMatchObject({ type: "permission_error", code: "insufficient_permissions" });
    expect((await router.fetch("/v1/usage")).status).toBe(401);
  });
});

describe("GET /health/backends with keys", () => {
  it("admin keys only", async () => {
    expect((await router.fetch("/health/backends")).status).toBe(401);
    expect((await router.fetch("/health/backends", { headers: { authorization: `Bearer ${KEYS.a.key}` } })).status).toBe(403);
    expect((await router.fetch("/health/backends", { headers: { authorization: `Bearer ${KEYS.ops.key}` } })).status).toBe(200);
  });
});

describe("metrics by key", () => {
  /** Sum of every sample of `name` whose labels include `labels`. */
  function sum(text: string, name: string, labels: Record<string, string>): number {
    let total = 0;
    for (const line of text.split("\n")) {
      const m = /^([a-z_]+)\{(.*)\} (\S+)$/.exec(line);
      if (!m || m[1] !== name) continue;
      const have = Object.fromEntries([...m[2]!.matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
      if (Object.entries(labels).every(([k, v]) => have[k] === v)) total += Number(m[3]);
    }
    return total;
  }

  it("requests_total and tokens_total carry the key's name, never the secret", async () => {
    const text = await (await router.fetch("/metrics")).text();
    for (const k of Object.values(KEYS)) expect(text).not.toContain(k.key);
    const a = expected["team-a/local"]!;
    const aGpt = expected["team-a/gpt-4.1"]!;
    expect(sum(text, "responses_router_tokens_total", { key: "team-a", type: "input" })).toBe(a.input_tokens + aGpt.input_tokens);
    expect(sum(text, "responses_router_tokens_total", { key: "team-a", type: "output" })).toBe(a.output_tokens + aGpt.output_tokens);
    expect(sum(text, "responses_router_tokens_total", { key: "team-b", type: "input" })).toBe(expected["team-b/gpt-4.1"]!.input_tokens);
    expect(sum(text, "responses_router_requests_total", { key: "team-a", route: "/v1/chat/completions", status: "200" })).toBe(1);
    expect(sum(text, "responses_router_requests_total", { key: "team-b", route: "/v1/responses", status: "404" })).toBe(1);
    expect(sum(text, "responses_router_requests_total", { key: "team-a", route: "/v1/responses", model: "local", status: "200" })).toBe(3);
  });
});
