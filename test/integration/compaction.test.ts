import { describe, expect, it } from "vitest";
import type { ResponseInputItem } from "openai/resources/responses/responses";
import { chatCompletion } from "../helpers/mock-upstream.js";
import { useTwoKindRouter } from "../helpers/router.js";
import { SUMMARY_PREFIX } from "../../src/translate/chat/compaction.js";
import { writeConfigFile } from "../helpers/background.js";
import { startChildRouter } from "../helpers/child-router.js";
import { waitUntil } from "../helpers/wait.js";

const KEY = "test-compaction-key-0123456789";
const env = useTwoKindRouter({ compaction: { key: KEY } });

const history: ResponseInputItem[] = [
  { role: "user", content: "Refactor the parser in src/parse.ts" },
  { role: "assistant", content: "I split it into lexer and parser." },
  { role: "user", content: "Now add tests for the lexer" },
];

const userTexts = (output: any[]) => output.filter((i) => i.type === "message").map((i) => i.content.map((p: any) => p.text).join(""));

describe("POST /v1/responses/compact on a chat backend", () => {
  it("asks the backend for a summary and returns the user messages plus one sealed compaction item", async () => {
    const { router, chat } = env;
    chat.enqueue("/chat/completions", { kind: "json", body: chatCompletion("SUMMARY: parser split, lexer tests next", "m", { usage: { prompt_tokens: 120, completion_tokens: 9, total_tokens: 129 } }) });
    const compacted = await router.client.responses.compact({ model: "local", input: history, instructions: "Be brief." });
    expect(compacted.object).toBe("response.compaction");
    expect(compacted.id).toMatch(/^resp_/);
    expect(Number.isInteger(compacted.created_at)).toBe(true);
    expect(userTexts(compacted.output)).toEqual(["Refactor the parser in src/parse.ts", "Now add tests for the lexer"]);
    const item = compacted.output.at(-1) as any;
    expect(item.type).toBe("compaction");
    expect(item.id).toMatch(/^cmp_/);
    expect(item.encrypted_content).toMatch(/^rrc1\./);
    expect(item.encrypted_content).not.toContain("SUMMARY");
    expect(compacted.usage).toMatchObject({ input_tokens: 120, output_tokens: 9, total_tokens: 129 });

    // The summarisation call: instructions, the history, then the summary prompt last; no tools.
    const sent = chat.requests[0]!.body;
    expect(sent.model).toBe("llama3.1:8b");
    expect(sent.messages[0]).toEqual({ role: "system", content: "Be brief." });
    expect(sent.messages.at(-1).role).toBe("user");
    expect(sent.messages.at(-1).content).toMatch(/summary/i);
    expect(sent.messages.map((m: any) => m.content)).toContain("I split it into lexer and parser.");
    expect(sent.tools).toBeUndefined();

    // The next turn carries the compacted output: the backend sees the summary, framed, not the item.
    chat.enqueue("/chat/completions", { kind: "json", body: chatCompletion("ok, writing lexer tests") });
    const next = await router.client.responses.create({ model: "local", input: [...(compacted.output as any[]), { role: "user", content: "go on" }] });
    expect(next.output_text).toBe("ok, writing lexer tests");
    const msgs = chat.requests[1]!.body.messages as { role: string; content: string }[];
    expect(msgs.map((m) => m.role)).toEqual(["user", "user", "user", "user"]);
    expect(msgs[2]!.content.startsWith(SUMMARY_PREFIX)).toBe(true);
    expect(msgs[2]!.content).toContain("SUMMARY: parser split, lexer tests next");
    expect(msgs[3]!.content).toBe("go on");
  });

  it("answers 400 naming the item for a tampered, foreign or OpenAI compaction item, and never calls the backend", async () => {
    const { router, chat } = env;
    chat.enqueue("/chat/completions", { kind: "json", body: chatCompletion("S") });
    const compacted = await router.client.responses.compact({ model: "local", input: "hello" });
    const sealed = (compacted.output.at(-1) as any).encrypted_content as string;
    const flipped = sealed.slice(0, -3) + (sealed.at(-3) === "A" ? "B" : "A") + sealed.slice(-2);
    const cases = [flipped, "gAAAAABopenai-style-ciphertext", "rrc1.AAAA"];
    for (const enc of cases) {
      chat.requests.length = 0;
      const err = await router.client.responses
        .create({ model: "local", input: [{ role: "user", content: "hi" }, { type: "compaction", encrypted_content: enc }] })
        .catch((e) => e);
      expect(err.status).toBe(400);
      expect(err.error.param).toBe("input[1].encrypted_content");
      expect(err.error.type).toBe("invalid_request_error");
      expect(err.error.message).toMatch(/compaction item/);
      expect(chat.requests.filter((r) => r.path === "/chat/completions")).toHaveLength(0);
    }
  });

  it("chains across a compaction with previous_response_id: the compacted history replaces what it summarised", async () => {
    const { router, chat } = env;
    chat.enqueue("/chat/completions", { kind: "json", body: chatCompletion("first answer") });
    const first = await router.client.responses.create({ model: "local", input: "write a lexer" });
    chat.enqueue("/chat/completions", { kind: "json", body: chatCompletion("THE-SUMMARY") });
    const compacted = await router.client.responses.compact({ model: "local", previous_response_id: first.id, input: "and tests" });
    expect(userTexts(compacted.output)).toEqual(["write a lexer", "and tests"]);
    expect(chat.requests[1]!.body.messages.map((m: any) => m.content)).toContain("first answer");
    chat.enqueue("/chat/completions", { kind: "json", body: chatCompletion("after compaction") });
    const next = await router.client.responses.create({ model: "local", input: [...(compacted.output as any[]), { role: "user", content: "next" }] });
    {
      chat.enqueue("/chat/completions", { kind: "json", body: chatCompletion("chained") });
      await router.client.responses.create({ model: "local", previous_response_id: next.id, input: "more" });
      const msgs = chat.requests.at(-1)!.body.messages.map((m: any) => m.content as string);
      // The stored chain still holds the compaction item: the summary rides along; what it summarised does not come back.
      expect(msgs.some((c: string) => c.includes("THE-SUMMARY"))).toBe(true);
      expect(msgs).not.toContain("first answer");
      expect(msgs.slice(-2)).toEqual(["after compaction", "more"]);
    }
  });
});

describe("POST /v1/responses/compact on an openai backend", () => {
  it("passes through to the upstream's /responses/compact and returns its items untouched, with the router's id", async () => {
    const { router, oai } = env;
    oai.enqueue("/responses/compact", {
      kind: "json",
      body: {
        id: "resp_upstream_cmp",
        object: "response.compaction",
        created_at: 1700000000,
        output: [
          { id: "msg_u1", type: "message", role: "user", status: "completed", content: [{ type: "input_text", text: "hello" }] },
          { id: "cmp_up", type: "compaction", encrypted_content: "gAAAAAB-openai-secret" },
        ],
        usage: { input_tokens: 50, input_tokens_details: { cached_tokens: 0 }, output_tokens: 10, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 60 },
      },
    });
    const compacted = await router.client.responses.compact({ model: "gpt-4.1", input: "hello", prompt_cache_key: "sess-1" });
    expect(compacted.id).toMatch(/^resp_/);
    expect(compacted.id).not.toBe("resp_upstream_cmp");
    expect(compacted.output.at(-1)).toEqual({ id: "cmp_up", type: "compaction", encrypted_content: "gAAAAAB-openai-secret" });
    const sent = oai.requests.find((r) => r.path === "/responses/compact")!;
    expect(sent.body).toMatchObject({ model: "gpt-4.1", input: "hello", prompt_cache_key: "sess-1" });
    expect(sent.body.store).toBeUndefined();
    expect(sent.body.stream).toBeUndefined();
    expect(sent.headers.authorization).toBe("Bearer sk-upstream-secret-0123456789");

    // Its items go back to the upstream untouched on the next turn.
    await router.client.responses.create({ model: "gpt-4.1", input: [...(compacted.output as any[]), { role: "user", content: "go" }] });
    const next = oai.requests.find((r) => r.path === "/responses")!;
    expect(next.body.input).toContainEqual({ id: "cmp_up", type: "compaction", encrypted_content: "gAAAAAB-openai-secret" });
  });

  it("crossing kinds: the router's own compaction item reaches an openai backend as the framed summary, what it summarised left out", async () => {
    const { router, chat, oai } = env;
    chat.enqueue("/chat/completions", { kind: "json", body: chatCompletion("CROSS-SUMMARY") });
    const compacted = await router.client.responses.compact({ model: "local", input: [{ role: "user", content: "q1" }, { role: "assistant", content: "a1" }] });
    await router.client.responses.create({ model: "gpt-4.1", input: [{ role: "assistant", content: "old" }, ...(compacted.output as any[]), { role: "user", content: "go" }] });
    const input = oai.requests.find((r) => r.path === "/responses")!.body.input as any[];
    expect(input.map((i) => i.role)).toEqual(["user", "user", "user"]);
    expect(input[1].content[0].text.startsWith(SUMMARY_PREFIX)).toBe(true);
    expect(input[1].content[0].text).toContain("CROSS-SUMMARY");
    expect(JSON.stringify(input)).not.toContain("rrc1.");
    expect(JSON.stringify(input)).not.toContain("old");
  });

  it("maps an upstream 4xx to the same status and counts compactions in the metrics", async () => {
    const { router, oai } = env;
    oai.enqueue("/responses/compact", { kind: "json", status: 400, body: { error: { message: "bad compact", type: "invalid_request_error", param: "input", code: null } } });
    const err = await router.client.responses.compact({ model: "gpt-4.1", input: "x" }).catch((e) => e);
    expect(err.status).toBe(400);
    const text = await (await router.fetch("/metrics")).text();
    expect(text).toMatch(/responses_router_compactions_total\{model="local",kind="chat",trigger="compact"\} [1-9]/);
    expect(text).toMatch(/responses_router_compactions_total\{model="gpt-4.1",kind="openai",trigger="compact"\} [1-9]/);
    expect(text).toMatch(/responses_router_compaction_tokens_total\{kind="chat",trigger="compact",stage="after"\} [1-9]/);
  });

  it("validates the body like a create request", async () => {
    const { router } = env;
    const err = await router.client.responses.compact({ input: "x" } as any).catch((e) => e);
    expect(err.status).toBe(400);
    expect(err.error.param).toBe("model");
    const unknown = await router.client.responses.compact({ model: "nope", input: "x" }).catch((e) => e);
    expect(unknown.status).toBe(404);
  });
});

describe("key rotation", () => {
  it("items sealed with a previous key still open; new ones are sealed with the current key only", async () => {
    const { startTestRouter, twoKindConfig } = await import("../helpers/router.js");
    const { chat, oai } = env;
    const old = await startTestRouter(twoKindConfig(chat.url, oai.url, { compaction: { key: "the-old-key-0123456789" } }));
    const rotated = await startTestRouter(twoKindConfig(chat.url, oai.url, { compaction: { key: "the-new-key-0123456789", previous_keys: ["the-old-key-0123456789"] } }));
    try {
      chat.enqueue("/chat/completions", { kind: "json", body: chatCompletion("OLD-SUMMARY") });
      const sealedOld = await old.client.responses.compact({ model: "local", input: "hi" });
      chat.enqueue("/chat/completions", { kind: "json", body: chatCompletion("ok") });
      await rotated.client.responses.create({ model: "local", input: [...(sealedOld.output as any[]), { role: "user", content: "next" }] });
      expect(JSON.stringify(chat.requests.at(-1)!.body.messages)).toContain("OLD-SUMMARY");

      chat.enqueue("/chat/completions", { kind: "json", body: chatCompletion("NEW-SUMMARY") });
      const sealedNew = await rotated.client.responses.compact({ model: "local", input: "hi" });
      const err = await old.client.responses.create({ model: "local", input: sealedNew.output as any[] }).catch((e) => e);
      expect(err.status).toBe(400);
    } finally {
      await old.close(200);
      await rotated.close(200);
    }
  });
});

describe("the compaction key at start", () => {
  const base = { endpoints: [{ name: "a", url: "http://127.0.0.1:9/v1", kind: "chat" }], models: { m: { endpoints: ["a"] } } };

  it("warns when compaction.key is not set, and never prints a configured key", async () => {
    const bare = await startChildRouter(writeConfigFile(base));
    try {
      await waitUntil("the warning", () => bare.output().includes("compaction.key is not set"), 20_000, 50);
    } finally {
      bare.kill();
      await bare.exited;
    }
    const secret = "do-not-print-this-key-0123456789";
    const keyed = await startChildRouter(writeConfigFile({ ...base, compaction: { key: "${ROUTER_COMPACTION_KEY}" } }), { ROUTER_COMPACTION_KEY: secret });
    try {
      await waitUntil("the listening line", () => keyed.output().includes("listening on"), 20_000, 50);
    } finally {
      keyed.kill();
      await keyed.exited;
    }
    expect(keyed.output()).not.toContain("compaction.key is not set");
    expect(keyed.output()).not.toContain(secret);
  });
});
