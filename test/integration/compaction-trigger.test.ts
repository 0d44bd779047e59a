import { describe, expect, it } from "vitest";
import type { ResponseInputItem, ResponseStreamEvent } from "openai/resources/responses/responses";
import { chatCompletion, chatTextChunks, nativeResponse } from "../helpers/mock-upstream.js";
import { parseSse, useTwoKindRouter } from "../helpers/router.js";
import { assertResponsesGrammar } from "../helpers/grammar.js";
import { waitUntil } from "../helpers/wait.js";
import { SUMMARY_PREFIX } from "../../src/translate/chat/compaction.js";

const env = useTwoKindRouter({ compaction: { key: "trigger-test-key-0123456789" } });
async function rawStream(router: (typeof env)["router"], body: unknown): Promise<any[]> {
  const res = await router.fetch("/v1/responses", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  return parseSse(await res.text()).map((f) => f.data);
}

const trigger = { type: "compaction_trigger" } as unknown as ResponseInputItem;

describe("the compaction_trigger input item (v2) on a chat backend", () => {
  it("streams exactly one compaction item through responses.stream() with the SDK's accumulator", async () => {
    const { router, chat } = env;
    chat.enqueue("/chat/completions", { kind: "sse", frames: chatTextChunks(["SUM", "MARY-", "ONE"]) });
    const stream = router.client.responses.stream({ model: "local", input: [{ role: "user", content: "build a lexer" }, { role: "assistant", content: "done" }, trigger] });
    const events: ResponseStreamEvent[] = [];
    stream.on("event", (e) => events.push(e));
    const final = await stream.finalResponse();
    const types = events.map((e) => e.type);
    expect(types).toEqual(["response.created", "response.in_progress", "response.output_item.added", "response.compaction.compacting", "response.output_item.done", "response.completed"]);
    expect(final.status).toBe("completed");
    expect(final.output).toHaveLength(1);
    const item = final.output[0] as any;
    expect(item.type).toBe("compaction");
    expect(item.encrypted_content).toMatch(/^rrc1\./);
    expect(final.usage).toMatchObject({ input_tokens: 5, output_tokens: 3 });
    // The backend was asked for a summary of what came before the trigger, streamed, without tools.
    const sent = chat.requests[0]!.body;
    expect(sent.stream).toBe(true);
    expect(sent.messages.map((m: any) => m.content).slice(0, 2)).toEqual(["build a lexer", "done"]);
    expect(sent.messages.at(-1).content).toMatch(/summary/i);

    // Chained: the backend sees the summary, not what it summarised (the trigger's turn is stored like any response).
    chat.enqueue("/chat/completions", { kind: "json", body: chatCompletion("continuing") });
    const next = await router.client.responses.create({ model: "local", previous_response_id: final.id, input: "go on" });
    expect(next.output_text).toBe("continuing");
    const msgs = chat.requests[1]!.body.messages.map((m: any) => m.content as string);
    expect(msgs[0]).toBe("build a lexer");
    expect(msgs).not.toContain("done");
    expect(msgs[1]!.startsWith(SUMMARY_PREFIX) && msgs[1]!.endsWith("SUMMARY-ONE")).toBe(true);
    expect(msgs[2]).toBe("go on");
  });

  it("answers without streaming too, and works on a conversation", async () => {
    const { router, chat } = env;
    const conv = await router.client.conversations.create({ items: [{ type: "message", role: "user", content: "remember: blue" }] });
    chat.enqueue("/chat/completions", { kind: "json", body: chatCompletion("SUMMARY-CONV") });
    const r = await router.client.responses.create({ model: "local", conversation: conv.id, input: [trigger] });
    expect(r.output.map((i) => i.type)).toEqual(["compaction"]);
    const items = await router.client.conversations.items.list(conv.id, { order: "asc" });
    expect(items.data.map((i) => i.type)).toContain("compaction");
    chat.enqueue("/chat/completions", { kind: "json", body: chatCompletion("blue it is") });
    await router.client.responses.create({ model: "local", conversation: conv.id, input: "what colour?" });
    const msgs = chat.requests.at(-1)!.body.messages.map((m: any) => m.content as string);
    expect(msgs).toEqual(["remember: blue", expect.stringContaining("SUMMARY-CONV"), "what colour?"]);
  });

  it("keeps the stream grammar on the wire (sequence, key order, item events)", async () => {
    const { router, chat } = env;
    chat.enqueue("/chat/completions", { kind: "sse", frames: chatTextChunks(["S1", "S2"]) });
    const events = await rawStream(router, { model: "local", stream: true, input: [{ role: "user", content: "a" }, trigger] });
    const g = assertResponsesGrammar(events);
    expect(g.terminal?.type).toBe("response.completed");
    expect(g.items.map((i) => i.type)).toEqual(["compaction"]);
  });

  it("runs as a background job: queued, then completed with the one compaction item", async () => {
    const { router, chat } = env;
    chat.enqueue("/chat/completions", { kind: "sse", frames: chatTextChunks(["BG-", "SUMMARY"]) });
    const queued = await router.client.responses.create({ model: "local", background: true, input: [{ role: "user", content: "a" }, trigger] });
    expect(queued.status).toBe("queued");
    let done = queued;
    await waitUntil("the job to finish", async () => {
      done = await router.client.responses.retrieve(queued.id);
      return done.status !== "queued" && done.status !== "in_progress";
    });
    expect(done.status).toBe("completed");
    expect(done.output.map((o) => o.type)).toEqual(["compaction"]);
    chat.enqueue("/chat/completions", { kind: "json", body: chatCompletion("ok") });
    await router.client.responses.create({ model: "local", previous_response_id: done.id, input: "next" });
    expect(JSON.stringify(chat.requests.at(-1)!.body.messages)).toContain("BG-SUMMARY");
  });

  it("refuses a trigger that is not the last input item", async () => {
    const { router } = env;
    const err = await router.client.responses.create({ model: "local", input: [trigger, { role: "user", content: "x" }] }).catch((e) => e);
    expect(err.status).toBe(400);
    expect(err.error.param).toBe("input[0].type");
  });

  it("a backend that breaks mid-summary ends in response.failed, no compaction item", async () => {
    const { router, chat } = env;
    chat.enqueue("/chat/completions", { kind: "sse", frames: chatTextChunks(["partial", "more", "x"]), dieAfter: 2 });
    const events = await rawStream(router, { model: "local", stream: true, input: [{ role: "user", content: "a" }, trigger] });
    assertResponsesGrammar(events);
    expect(events.at(-1).type).toBe("response.failed");
    expect(events.at(-1).response.output).toEqual([]);
  });
});

describe("the compaction_trigger on an openai backend", () => {
  it("passes the trigger through untouched and relays the upstream's compaction events", async () => {
    const { router, oai } = env;
    const resp = { ...nativeResponse("x", "gpt-4.1"), output: [{ id: "cmp_up", type: "compaction", encrypted_content: "gAAAA-up" }] };
    const frames = [
      { event: "response.created", data: { type: "response.created", response: { ...resp, status: "in_progress", output: [] }, sequence_number: 0 } },
      { event: "response.output_item.added", data: { type: "response.output_item.added", output_index: 0, item: resp.output[0], sequence_number: 1 } },
      { event: "response.compaction.compacting", data: { type: "response.compaction.compacting", item_id: "cmp_up", output_index: 0, sequence_number: 2 } },
      { event: "response.output_item.done", data: { type: "response.output_item.done", output_index: 0, item: resp.output[0], sequence_number: 3 } },
      { event: "response.completed", data: { type: "response.completed", response: resp, sequence_number: 4 } },
    ];
    oai.enqueue("/responses", { kind: "sse", frames });
    const stream = router.client.responses.stream({ model: "gpt-4.1", input: [{ role: "user", content: "hi" }, trigger] });
    const final = await stream.finalResponse();
    expect(final.output).toEqual([{ id: "cmp_up", type: "compaction", encrypted_content: "gAAAA-up" }]);
    expect(oai.requests[0]!.body.input.at(-1)).toEqual({ type: "compaction_trigger" });
    const metrics = await (await router.fetch("/metrics")).text();
    expect(metrics).toMatch(/responses_router_compactions_total\{model="gpt-4.1",kind="openai",trigger="trigger"\} 1/);
    expect(metrics).toMatch(/responses_router_compactions_total\{model="local",kind="chat",trigger="trigger"\} [1-9]/);
  });
});
