import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMockUpstream, type MockUpstream } from "../helpers/mock-upstream.js";
import { startTestRouter, twoKindConfig, type TestRouter } from "../helpers/router.js";

/** Per-key model allow-lists: another key's model is answered exactly as a model that does not exist. */

const LOCAL_ONLY = "rr-local-only-key-1f2e3d4c5b6a";
const GPT_GLOB = "rr-gpt-glob-key-6a5b4c3d2e1f";
const EVERYTHING = "rr-everything-key-0a9b8c7d6e5f";

let chat: MockUpstream;
let oai: MockUpstream;
let router: TestRouter;
const clients: Record<string, OpenAI> = {};

beforeAll(async () => {
  chat = await startMockUpstream();
  oai = await startMockUpstream();
  const cfg = twoKindConfig(chat.url, oai.url);
  router = await startTestRouter({
    ...cfg,
    models: { ...cfg.models, "gpt-4.1-mini": { endpoints: ["oai"] } },
    server: {
      api_keys: [
        { name: "local-only", key: LOCAL_ONLY, models: ["local"] },
        { name: "gpt-glob", key: GPT_GLOB, models: ["gpt-4.1*"] },
        { name: "everything", key: EVERYTHING },
      ],
    },
  });
  for (const [name, key] of Object.entries({ local: LOCAL_ONLY, gpt: GPT_GLOB, all: EVERYTHING })) {
    clients[name] = new OpenAI({ baseURL: `${router.url}/v1`, apiKey: key, maxRetries: 0 });
  }
});
afterAll(async () => {
  await router.close(500);
  await chat.close();
  await oai.close();
});

/** The error a call failed with, with the model name taken out of the message (it names the model asked for). */
async function failure(call: Promise<unknown>, model: string) {
  const err = await call.then(
    () => {
      throw new Error("expected the call to fail");
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(OpenAI.NotFoundError);
  const e = err as InstanceType<typeof OpenAI.NotFoundError>;
  return { status: e.status, body: JSON.parse(JSON.stringify(e.error).replaceAll(model, "<model>")) };
}

describe("models: allow-lists per key", () => {
  it("a model outside the key's list is a 404 model_not_found identical to an unknown model, on every route", async () => {
    const c = clients.local!;
    const calls: ((model: string) => Promise<unknown>)[] = [
      (model) => c.responses.create({ model, input: "hi" }),
      (model) => c.responses.create({ model, input: "hi", stream: true }),
      (model) => c.responses.create({ model, input: "hi", background: true }),
      (model) => c.chat.completions.create({ model, messages: [{ role: "user", content: "hi" }] }),
      (model) => c.chat.completions.create({ model, messages: [{ role: "user", content: "hi" }], stream: true }),
      (model) => c.embeddings.create({ model, input: "hi" }),
      (model) => c.models.retrieve(model),
    ];
    for (const [i, call] of calls.entries()) {
      const d = await failure(call("gpt-4.1"), "gpt-4.1");
      const u = await failure(call("no-such-model"), "no-such-model");
      expect(d, `call ${i}`).toEqual(u);
      expect(d.status).toBe(404);
      expect(d.body).toMatchObject({ param: "model", code: "model_not_found" });
    }
    expect(oai.requests).toHaveLength(0);
  });

  it("the key's own models work, and globs match", async () => {
    expect((await clients.local!.responses.create({ model: "local", input: "hi" })).output_text).toBe("Hello world");
    expect((await clients.gpt!.responses.create({ model: "gpt-4.1-mini", input: "hi" })).model).toBe("gpt-4.1-mini");
    expect((await clients.gpt!.chat.completions.create({ model: "gpt-4.1", messages: [{ role: "user", content: "hi" }] })).object).toBe("chat.completion");
    await failure(clients.gpt!.responses.create({ model: "local", input: "hi" }), "local");
  });

  it("GET /v1/models lists only the key's models; a key without a list sees all", async () => {
    const ids = async (c: OpenAI) => (await c.models.list()).data.map((m) => m.id);
    expect(await ids(clients.local!)).toEqual(["local"]);
    expect(await ids(clients.gpt!)).toEqual(["gpt-4.1", "gpt-4.1-mini"]);
    expect(await ids(clients.all!)).toEqual(["local", "gpt-4.1", "gpt-4.1-mini"]);
    expect((await clients.gpt!.models.retrieve("gpt-4.1-mini")).id).toBe("gpt-4.1-mini");
  });

  it("a reload that narrows a key's list applies to the next request", async () => {
    const cfg = router.runtime.config;
    const next = { ...cfg, server: { ...cfg.server, api_keys: cfg.server.api_keys.map((k) => (k.name === "everything" ? { ...k, models: ["local"] } : k)) } };
    router.runtime.applyConfig(next);
    try {
      expect((await clients.all!.models.list()).data.map((m) => m.id)).toEqual(["local"]);
      await failure(clients.all!.responses.create({ model: "gpt-4.1", input: "hi" }), "gpt-4.1");
    } finally {
      router.runtime.applyConfig(cfg);
    }
  });
});
