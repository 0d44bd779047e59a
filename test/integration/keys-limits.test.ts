import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chatTextChunks, startMockUpstream, type MockUpstream } from "../helpers/mock-upstream.js";
import { startTestRouter, twoKindConfig, type TestRouter } from "../helpers/router.js";
import { readUntil, waitUntil } from "../helpers/wait.js";

/** Per-key limits and budgets over real HTTP, on a clock the test moves (no timed assertions). */

const NOON = Date.UTC(2026, 5, 15, 12, 0, 0);
let now = NOON;
const KEYS = {
  rpm: { name: "rpm", key: "rr-rpm-key-5e4d3c2b1a", limits: { requests_per_minute: 2 } },
  tpm: { name: "tpm", key: "rr-tpm-key-1a2b3c4d5e", limits: { tokens_per_minute: 20 } },
  tpmBig: { name: "tpm-big", key: "rr-tpm-big-key-7c8d9e0f1a", limits: { tokens_per_minute: 1000 } },
  conc: { name: "conc", key: "rr-conc-key-9f8e7d6c5b", limits: { max_concurrent: 1 } },
  budget: { name: "budget", key: "rr-budget-key-0f1e2d3c4b", budget: { tokens_per_day: 10 } },
  free: { name: "free", key: "rr-free-key-a1b2c3d4e5" },
};

let chat: MockUpstream;
let oai: MockUpstream;
let router: TestRouter;
const client = (k: keyof typeof KEYS) => new OpenAI({ baseURL: `${router.url}/v1`, apiKey: KEYS[k].key, maxRetries: 0 });

beforeAll(async () => {
  chat = await startMockUpstream();
  oai = await startMockUpstream();
  router = await startTestRouter({ ...twoKindConfig(chat.url, oai.url), server: { api_keys: Object.values(KEYS) } }, { now: () => now });
});
afterAll(async () => {
  await router.close(500);
  await chat.close();
  await oai.close();
});

/** The 429 a call failed with. */
async function limited(call: Promise<unknown>) {
  const err = await call.then(
    () => {
      throw new Error("expected a 429");
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(OpenAI.RateLimitError);
  return err as InstanceType<typeof OpenAI.RateLimitError>;
}

const ask = (c: OpenAI) => c.responses.create({ model: "local", input: "hi" }).withResponse();

describe("limits: per key, every route", () => {
  it("requests_per_minute: 429 rate_limit_exceeded with Retry-After and OpenAI's headers; passes again once the bucket refilled", async () => {
    now = NOON;
    const c = client("rpm");
    const first = await ask(c);
    expect(first.response.headers.get("x-ratelimit-limit-requests")).toBe("2");
    expect(first.response.headers.get("x-ratelimit-remaining-requests")).toBe("1");
    expect(first.response.headers.get("x-ratelimit-reset-requests")).toBe("30s");
    expect(first.response.headers.get("x-ratelimit-limit-tokens")).toBeNull();
    // Chat completions and embeddings count against the same key.
    const second = await c.embeddings.create({ model: "local", input: "hi" }).withResponse();
    expect(second.response.headers.get("x-ratelimit-remaining-requests")).toBe("0");
    expect(second.response.headers.get("x-ratelimit-reset-requests")).toBe("1m0s");
    const err = await limited(c.chat.completions.create({ model: "local", messages: [{ role: "user", content: "hi" }] }));
    expect(err.error).toMatchObject({ type: "requests", code: "rate_limit_exceeded", param: null });
    expect(err.message).toContain("Limit 2");
    expect(err.headers?.get("retry-after")).toBe("30");
    expect(err.headers?.get("x-ratelimit-limit-requests")).toBe("2");
    expect(err.headers?.get("x-ratelimit-remaining-requests")).toBe("0");
    expect(err.headers?.get("x-ratelimit-reset-requests")).toBe("1m0s");
    // Background creates count too.
    await limited(c.responses.create({ model: "local", input: "hi", background: true }));
    now = NOON + 29_999;
    await limited(c.responses.create({ model: "local", input: "hi" }));
    now = NOON + 30_000;
    expect((await ask(c)).data.output_text).toBe("Hello world");
    // Another key is not affected.
    expect((await ask(client("free"))).response.headers.get("x-ratelimit-limit-requests")).toBeNull();
  });

  it("tokens_per_minute: charged from upstream usage; 429 with the token headers once the bucket is short", async () => {
    now = NOON;
    const c = client("tpm");
    const seen: string[] = [];
    let err: InstanceType<typeof OpenAI.RateLimitError> | undefined;
    for (let i = 0; i < 5 && !err; i++) {
      try {
        const r = await ask(c);
        seen.push(r.response.headers.get("x-ratelimit-remaining-tokens")!);
        expect(r.response.headers.get("x-ratelimit-limit-tokens")).toBe("20");
      } catch (e) {
        err = await limited(Promise.reject(e));
      }
    }
    // The mock reports 7 tokens per answer: after two answers 6 of 20 are left, less than a request reserves.
    expect(seen).toHaveLength(2);
    expect(err!.error).toMatchObject({ type: "tokens", code: "rate_limit_exceeded" });
    expect(err!.headers?.get("x-ratelimit-remaining-tokens")).toBe("6");
    expect(err!.headers?.get("x-ratelimit-reset-tokens")).toBe("42s");
    expect(Number(err!.headers?.get("retry-after"))).toBeGreaterThan(0);
    now = NOON + 60_000;
    expect((await ask(c)).data.output_text).toBe("Hello world");
  });

  it("tokens_per_minute: an answer without a usage report keeps its estimate; a reported one is charged exactly", async () => {
    now = NOON;
    const c = client("tpmBig");
    const remaining = async (stream: boolean, includeUsage: boolean) => {
      const r = await c.chat.completions.create({ model: "local", messages: [{ role: "user", content: "hi" }], stream, ...(includeUsage ? { stream_options: { include_usage: true } } : {}) }).withResponse();
      if (stream) for await (const _ of r.data as AsyncIterable<unknown>) void _;
      return Number(r.response.headers.get("x-ratelimit-remaining-tokens"));
    };
    // Headers show what is left after this request's reservation; the previous answer was settled by then.
    const noUsage = { kind: "sse" as const, frames: [...chatTextChunks(["Hi"]).slice(0, -1), "data: [DONE]\n\n"] }; // no usage chunk
    chat.enqueue("/chat/completions", noUsage, noUsage);
    const r0 = await remaining(true, false);
    const r1 = await remaining(true, false);
    const estimate = 1000 - r0;
    expect(estimate).toBeGreaterThan(7);
    expect(r0 - r1).toBe(estimate); // the first kept its whole estimate
    const r2 = await remaining(false, false); // the mock reports 7 tokens
    const r3 = await remaining(false, false);
    expect(r2 - r3).toBe(7); // the JSON answer was corrected to the 7 it reported
  });

  it("max_concurrent: a stream holds its slot until it ends", async () => {
    now = NOON;
    chat.enqueue("/chat/completions", { kind: "sse", frames: chatTextChunks(["Hel", "lo"]), holdOpenMs: 60_000 });
    const ac = new AbortController();
    const res = await fetch(`${router.url}/v1/responses`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${KEYS.conc.key}` },
      body: JSON.stringify({ model: "local", input: "hi", stream: true }),
      signal: ac.signal,
    });
    await readUntil(res, (t) => t.includes("response.output_text.delta"));
    const err = await limited(client("conc").responses.create({ model: "local", input: "hi" }));
    expect(err.error).toMatchObject({ type: "requests", code: "rate_limit_exceeded" });
    expect(err.headers?.get("retry-after")).toBe("1");
    ac.abort();
    await waitUntil("the slot to be freed", async () => {
      try {
        await ask(client("conc"));
        return true;
      } catch {
        return false;
      }
    });
  });

  it("max_concurrent: a background job holds its slot while it runs", async () => {
    now = NOON;
    chat.enqueue("/chat/completions", { kind: "sse", frames: chatTextChunks(["slow"]), holdOpenMs: 60_000 });
    const c = client("conc");
    const bg = await c.responses.create({ model: "local", input: "hi", background: true });
    await waitUntil("the job to run", async () => (await c.responses.retrieve(bg.id)).status === "in_progress");
    await limited(c.responses.create({ model: "local", input: "hi" }));
    await c.responses.cancel(bg.id);
    await waitUntil("the slot to be freed", async () => {
      try {
        await ask(c);
        return true;
      } catch {
        return false;
      }
    });
  });

  it("budget.tokens_per_day: 429 insufficient_quota once the day's tokens are used, until the next UTC day", async () => {
    now = NOON;
    const c = client("budget");
    await ask(c); // 7 tokens
    await ask(c); // 14: over the budget of 10 now
    const err = await limited(c.responses.create({ model: "local", input: "hi" }));
    expect(err.error).toMatchObject({ type: "insufficient_quota", code: "insufficient_quota", param: null });
    expect(err.message).toContain("10 tokens per day");
    expect(err.headers?.get("retry-after")).toBe(String(12 * 3600));
    await limited(c.chat.completions.create({ model: "local", messages: [{ role: "user", content: "hi" }] }));
    now = Date.UTC(2026, 5, 16, 0, 0, 0);
    expect((await ask(c)).data.output_text).toBe("Hello world");
  });
});

describe("limits: hot reload", () => {
  it("applies new limits at the next request; a removed key is rejected at once while its stream in flight finishes", async () => {
    now = NOON + 3_600_000;
    const cfg = router.runtime.config;
    const withKeys = (keys: typeof cfg.server.api_keys) => ({ ...cfg, server: { ...cfg.server, api_keys: keys } });
    chat.enqueue("/chat/completions", { kind: "sse", frames: chatTextChunks(["still", " here"]), delayMs: 50 });
    const res = await fetch(`${router.url}/v1/responses`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${KEYS.free.key}` },
      body: JSON.stringify({ model: "local", input: "hi", stream: true }),
    });
    await readUntil(res, (t) => t.includes("response.created"));
    router.runtime.applyConfig(withKeys(cfg.server.api_keys.filter((k) => k.name !== "free").map((k) => (k.name === "rpm" ? { ...k, limits: { requests_per_minute: 1 } } : k))));
    try {
      await expect(client("free").responses.create({ model: "local", input: "hi" })).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
      const rest = await readUntil(res, (t) => t.includes("response.completed"));
      expect(rest).toContain("response.completed");
      const r = await ask(client("rpm"));
      expect(r.response.headers.get("x-ratelimit-limit-requests")).toBe("1");
      await limited(client("rpm").responses.create({ model: "local", input: "hi" }));
    } finally {
      router.runtime.applyConfig(cfg);
    }
  });
});
