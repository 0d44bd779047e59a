import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { captureLog, type CapturedLog } from "../helpers/log-capture.js";
import { startMockUpstream, type MockUpstream } from "../helpers/mock-upstream.js";
import { startTestRouter, twoKindConfig, type TestRouter } from "../helpers/router.js";
import { postResponses, waitUntil } from "../helpers/wait.js";

/** API keys, what they own, and secrets that must never cross the router in either direction. */

const KEY_A = "rr-team-a-7f3c9e1d5b2a4c6e8f0a1b3c";
const KEY_B = "rr-team-b-0d2e4f6a8c1b3d5e7f9a0b2c";
const OAI_SECRET = "sk-upstream-secret-0123456789";
const CHAT_SECRET = "sk-chat-box-secret-9876543210";

let chat: MockUpstream;
let oai: MockUpstream;
let router: TestRouter;
let log: CapturedLog;
let a: OpenAI;
let b: OpenAI;

function keyedConfig(extraServer: Record<string, unknown> = {}) {
  const cfg = twoKindConfig(chat.url, oai.url);
  cfg.endpoints[0] = { ...cfg.endpoints[0]!, api_key: CHAT_SECRET } as never;
  return {
    ...cfg,
    server: {
      // team-a's key comes from the environment, as in a real deployment.
      api_keys: [
        { name: "team-a", key: "${RR_AUTH_TEST_KEY_A}" },
        { name: "team-b", key: KEY_B },
      ],
      ...extraServer,
    },
  };
}

beforeAll(async () => {
  process.env.RR_AUTH_TEST_KEY_A = KEY_A;
  chat = await startMockUpstream();
  oai = await startMockUpstream();
  log = captureLog("debug");
  router = await startTestRouter(keyedConfig(), { logger: log.logger, apiKey: KEY_A });
  a = router.client;
  b = new OpenAI({ baseURL: `${router.url}/v1`, apiKey: KEY_B, maxRetries: 0 });
});
afterAll(async () => {
  await router.close(500);
  await chat.close();
  await oai.close();
  delete process.env.RR_AUTH_TEST_KEY_A;
});

describe("API keys", () => {
  it("401 in OpenAI shape without a key, with a wrong key, or with a non-Bearer scheme", async () => {
    for (const authorization of [undefined, "Bearer nope", `Basic ${KEY_A}`, `Bearer ${KEY_A}x`, `Bearer ${KEY_A.slice(0, -1)}`, "Bearer "]) {
      const res = await postResponses(router.url, { model: "local", input: "hi" }, { headers: authorization ? { authorization } : {} });
      expect(res.status, String(authorization)).toBe(401);
      const body = (await res.json()) as { error: Record<string, unknown> };
      expect(body.error).toMatchObject({ type: "invalid_request_error", param: null, code: authorization?.startsWith("Bearer ") && authorization.length > 7 ? "invalid_api_key" : "missing_api_key" });
      expect(JSON.stringify(body)).not.toContain(KEY_A);
    }
    const stranger = new OpenAI({ baseURL: `${router.url}/v1`, apiKey: "sk-not-a-router-key", maxRetries: 0 });
    await expect(stranger.responses.create({ model: "local", input: "hi" })).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
  });

  it("both named keys work; the one from ${ENV} too", async () => {
    expect((await a.responses.create({ model: "local", input: "hi" })).output_text).toBe("Hello world");
    expect((await b.responses.create({ model: "gpt-4.1", input: "hi" })).output_text).toBe("Hello from upstream");
  });

  it("health and metrics are open by default", async () => {
    for (const path of ["/healthz", "/readyz", "/metrics"]) expect((await router.fetch(path)).status, path).toBe(200);
  });

  it("public_health: false and public_metrics: false put them behind the keys", async () => {
    const closed = await startTestRouter(keyedConfig({ public_health: false, public_metrics: false }));
    try {
      for (const path of ["/healthz", "/readyz", "/metrics"]) {
        const res = await closed.fetch(path);
        expect(res.status, path).toBe(401);
        expect(((await res.json()) as any).error.code).toBe("missing_api_key");
        expect((await closed.fetch(path, { headers: { authorization: `Bearer ${KEY_B}` } })).status, path).toBe(200);
      }
    } finally {
      await closed.close(500);
    }
    const mixed = await startTestRouter(keyedConfig({ public_health: true, public_metrics: false }));
    try {
      expect((await mixed.fetch("/healthz")).status).toBe(200);
      expect((await mixed.fetch("/metrics")).status).toBe(401);
    } finally {
      await mixed.close(500);
    }
  });
});

describe("stored responses belong to the key that created them", () => {
  it("another key gets 404 on GET, DELETE, input_items and previous_response_id, exactly as for an unknown id", async () => {
    const mine = await a.responses.create({ model: "local", input: "secret plans" });
    const unknownId = "resp_0000000000000000000000000000";
    const as404 = async (p: Promise<unknown>) => {
      const err = (await p.then(() => null, (e: unknown) => e)) as InstanceType<typeof OpenAI.APIError> | null;
      expect(err).toBeInstanceOf(OpenAI.NotFoundError);
      return { ...(err!.error as object), message: (err!.error as { message: string }).message.replace(mine.id, "ID").replace(unknownId, "ID") };
    };
    expect(await as404(b.responses.retrieve(mine.id))).toEqual(await as404(b.responses.retrieve(unknownId)));
    expect(await as404(b.responses.delete(mine.id))).toEqual(await as404(b.responses.delete(unknownId)));
    expect(await as404(b.responses.inputItems.list(mine.id))).toEqual(await as404(b.responses.inputItems.list(unknownId)));
    const chained = await as404(b.responses.create({ model: "local", input: "and then?", previous_response_id: mine.id }));
    expect(chained).toMatchObject({ param: "previous_response_id", code: "previous_response_not_found" });
    const sse = await router.fetch(`/v1/responses/${mine.id}?stream=true`, { headers: { authorization: `Bearer ${KEY_B}` } });
    expect(sse.status).toBe(404);

    // B's DELETE did nothing: A still has it, can chain from it, list it and delete it.
    expect((await a.responses.retrieve(mine.id)).id).toBe(mine.id);
    expect((await a.responses.inputItems.list(mine.id)).data).toHaveLength(1);
    expect((await a.responses.create({ model: "local", input: "next", previous_response_id: mine.id })).previous_response_id).toBe(mine.id);
    expect(await a.responses.delete(mine.id)).toMatchObject({ id: mine.id, deleted: true });
  });

  it("another key cannot cancel a background response", async () => {
    chat.enqueue("/chat/completions", { kind: "hang" });
    const job = await a.responses.create({ model: "local", input: "long job", background: true });
    await expect(b.responses.cancel(job.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    expect((await a.responses.cancel(job.id)).status).toBe("cancelled");
  });
});

describe("secrets stay where they belong", () => {
  it("the client's Authorization never goes upstream, on either kind of backend", async () => {
    chat.requests.length = 0;
    oai.requests.length = 0;
    await a.responses.create({ model: "local", input: "x" });
    await a.responses.stream({ model: "gpt-4.1", input: "x" }).finalResponse();
    await b.responses.create({ model: "gpt-4.1", input: "x" });
    await b.responses.stream({ model: "local", input: "x" }).finalResponse();
    expect(chat.requests.length).toBeGreaterThan(0);
    expect(oai.requests.length).toBeGreaterThan(0);
    for (const req of chat.requests) expect(req.headers.authorization).toBe(`Bearer ${CHAT_SECRET}`);
    for (const req of oai.requests) expect(req.headers.authorization).toBe(`Bearer ${OAI_SECRET}`);
    const everything = JSON.stringify([...chat.requests, ...oai.requests]);
    expect(everything).not.toContain(KEY_A);
    expect(everything).not.toContain(KEY_B);
  });

  it("upstream keys echoed by an upstream never reach the client, the logs or /metrics", async () => {
    const echo = (status: number, secret: string) => ({
      kind: "json" as const,
      status,
      body: { error: { message: `Incorrect API key provided: ${secret}. You can find your API key at https://platform.openai.com.`, type: "invalid_request_error", param: null, code: "invalid_api_key" } },
    });
    const seen: string[] = [];
    const collect = async (p: Promise<unknown>) => {
      const err = (await p.then(() => null, (e: unknown) => e)) as InstanceType<typeof OpenAI.APIError> | null;
      expect(err).toBeInstanceOf(OpenAI.APIError);
      seen.push(JSON.stringify(err!.error), String(err!.message));
    };
    oai.enqueue("/responses", echo(401, OAI_SECRET));
    await collect(a.responses.create({ model: "gpt-4.1", input: "x" }));
    oai.enqueue("/responses", echo(400, OAI_SECRET));
    await collect(a.responses.create({ model: "gpt-4.1", input: "x" }));
    oai.enqueue("/responses", echo(500, OAI_SECRET), echo(500, OAI_SECRET));
    await collect(a.responses.create({ model: "gpt-4.1", input: "x" }));
    chat.enqueue("/chat/completions", echo(403, CHAT_SECRET));
    await collect(a.responses.create({ model: "local", input: "x" }));
    // Mid-stream errors: a chat chunk carrying `error`, and a native `error` event.
    chat.enqueue("/chat/completions", { kind: "sse", frames: [{ data: { error: { message: `bad key ${CHAT_SECRET}` } } }] });
    seen.push(await (await postResponses(router.url, { model: "local", input: "x", stream: true }, { headers: { authorization: `Bearer ${KEY_A}` } })).text());
    oai.enqueue("/responses", {
      kind: "sse",
      frames: [
        { event: "response.created", data: { type: "response.created", sequence_number: 0, response: { id: "resp_up", object: "response", status: "in_progress", output: [] } } },
        { event: "error", data: { type: "error", code: "invalid_api_key", message: `Incorrect API key provided: ${OAI_SECRET}`, param: null, sequence_number: 1 } },
      ],
    });
    seen.push(await (await postResponses(router.url, { model: "gpt-4.1", input: "x", stream: true }, { headers: { authorization: `Bearer ${KEY_A}` } })).text());

    const metrics = await (await router.fetch("/metrics")).text();
    await waitUntil("the last request was logged", () => log.lines().filter((l) => l.msg === "request").length >= 6);
    for (const [where, text] of [
      ["client-visible errors", seen.join("\n")],
      ["logs", log.text()],
      ["/metrics", metrics],
    ] as const) {
      for (const secret of [OAI_SECRET, CHAT_SECRET, OAI_SECRET.slice(0, 12), CHAT_SECRET.slice(0, 12), KEY_A, KEY_B]) {
        expect(text.includes(secret), `${secret} in ${where}`).toBe(false);
      }
    }
    // The upstream's refusal of the router's credentials is not the client's 401.
    expect(seen[0]).toContain("upstream_auth_failed");
  });
});
