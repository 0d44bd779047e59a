import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { chatCompletion, chatTextChunks, nativeEvents, nativeResponse } from "../helpers/mock-upstream.js";
import { useTwoKindRouter } from "../helpers/router.js";
import { finalResponse, WsClient } from "../helpers/ws-client.js";

/** Client `OpenAI-Beta` headers (Codex sends several) reach kind: openai upstreams; nothing else the client sends does. */
const env = useTwoKindRouter();

const BETA = "responses=experimental";

describe("client headers to kind: openai upstreams", () => {
  it("OpenAI-Beta passes on create and compact; credentials and other headers do not; chat backends get none", async () => {
    const client = new OpenAI({
      baseURL: `${env.router.url}/v1`,
      apiKey: "test-key",
      maxRetries: 0,
      defaultHeaders: { "OpenAI-Beta": BETA, "OpenAI-Organization": "org-client", "OpenAI-Project": "proj-client", "x-custom": "1", cookie: "a=b" },
    });
    env.oai.enqueue("/responses", { kind: "json", body: nativeResponse("ok") });
    await client.responses.create({ model: "gpt-4.1", input: "hi" });
    const sent = env.oai.requests.at(-1)!.headers;
    expect(sent["openai-beta"]).toBe(BETA);
    expect(sent.authorization).toBe("Bearer sk-upstream-secret-0123456789");
    for (const name of ["openai-organization", "openai-project", "x-custom", "cookie"]) expect(sent[name]).toBeUndefined();

    env.oai.enqueue("/responses/compact", { kind: "json", body: { id: "resp_c", object: "response.compaction", created_at: 1, output: [{ id: "cmp_1", type: "compaction", encrypted_content: "enc" }], usage: nativeResponse("").usage } });
    await client.responses.compact({ model: "gpt-4.1", input: "hi" });
    expect(env.oai.requests.at(-1)!.headers["openai-beta"]).toBe(BETA);

    env.chat.enqueue("/chat/completions", { kind: "json", body: chatCompletion("ok") });
    await client.responses.create({ model: "local", input: "hi" });
    expect(env.chat.requests.at(-1)!.headers["openai-beta"]).toBeUndefined();
  });

  it("streamed requests forward it too", async () => {
    env.oai.enqueue("/responses", { kind: "sse", frames: nativeEvents(nativeResponse("ok")) });
    await env.router.fetch("/v1/responses", { method: "POST", headers: { "content-type": "application/json", authorization: "Bearer test-key", "OpenAI-Beta": BETA }, body: JSON.stringify({ model: "gpt-4.1", input: "hi", stream: true }) }).then((r) => r.text());
    expect(env.oai.requests.at(-1)!.headers["openai-beta"]).toBe(BETA);
  });

  it("over the WebSocket, the upgrade's OpenAI-Beta reaches the upstream without the socket's own feature", async () => {
    const ws = new WsClient(env.router.url, "test-key", { headers: { "OpenAI-Beta": `responses_websockets=2026-02-06, ${BETA}` } } as any);
    try {
      env.oai.enqueue("/responses", { kind: "sse", frames: nativeEvents(nativeResponse("ok")) });
      finalResponse(await ws.create({ model: "gpt-4.1", input: "hi" }));
      expect(env.oai.requests.at(-1)!.headers["openai-beta"]).toBe(BETA);
      env.chat.enqueue("/chat/completions", { kind: "sse", frames: [...chatTextChunks(["ok"]), "data: [DONE]\n\n"] });
      finalResponse(await ws.create({ model: "local", input: "hi" }));
      expect(env.chat.requests.at(-1)!.headers["openai-beta"]).toBeUndefined();
    } finally {
      ws.close();
    }
  });
});
