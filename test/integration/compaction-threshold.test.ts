import { describe, expect, it } from "vitest";
import type { ResponseInputItem } from "openai/resources/responses/responses";
import { chatCompletion, chatTextChunks } from "../helpers/mock-upstream.js";
import { parseSse, useTwoKindRouter } from "../helpers/router.js";
import { assertResponsesGrammar } from "../helpers/grammar.js";
import { SUMMARY_PREFIX } from "../../src/translate/chat/compaction.js";

const env = useTwoKindRouter({ compaction: { key: "threshold-test-key-0123456789" } });

/** A long agent history: user asks, assistant calls a tool, the tool answers with a lot of text. */
function longHistory(): ResponseInputItem[] {
  return [
    { role: "user", content: "find the bug in parse.ts" },
    { type: "function_call", call_id: "c1", name: "read_file", arguments: '{"path":"parse.ts"}' },
    { type: "function_call_output", call_id: "c1", output: "x".repeat(8000) },
    { role: "assistant", content: "The lexer drops the last token." },
    { role: "user", content: "fix it" },
  ];
}
const tools = [{ type: "function" as const, name: "read_file", parameters: { type: "object", properties: { path: { type: "string" } } }, strict: false }];

describe("context_management compaction on a chat backend", () => {
  it("over the threshold: summarises first, answers over the compacted context, the compaction item first in the output", async () => {
    const { router, chat } = env;
    chat.enqueue("/chat/completions", { kind: "json", body: chatCompletion("SUMMARY-T1", "m", { usage: { prompt_tokens: 1100, completion_tokens: 20, total_tokens: 1120 } }) });
    chat.enqueue("/chat/completions", { kind: "json", body: chatCompletion("fixed") });
    const r = await router.client.responses.create({ model: "local", input: longHistory(), tools, context_management: [{ type: "compaction", compact_threshold: 1000 }] });
    expect(r.output.map((i) => i.type)).toEqual(["compaction", "message"]);
    expect((r.output[0] as any).encrypted_content).toMatch(/^rrc1\./);
    expect(r.output_text).toBe("fixed");
    const calls = chat.requests.filter((q) => q.path === "/chat/completions");
    expect(calls).toHaveLength(2);
    expect(calls[0]!.body.tools).toBeUndefined(); // the summarisation call
    const answer = calls[1]!.body;
    expect(answer.tools).toHaveLength(1);
    const contents = answer.messages.map((m: any) => m.content as string);
    expect(contents).toEqual(["find the bug in parse.ts", "fix it", expect.stringContaining("SUMMARY-T1")]);
    expect(contents[2].startsWith(SUMMARY_PREFIX)).toBe(true);
    expect(answer.messages.some((m: any) => m.role === "tool")).toBe(false);

    // Chained: the stored turn holds the compaction item, so the next turn stays compacted.
    chat.enqueue("/chat/completions", { kind: "json", body: chatCompletion("next") });
    await router.client.responses.create({ model: "local", previous_response_id: r.id, input: "and test it" });
    const next = chat.requests.at(-1)!.body.messages.map((m: any) => m.content as string);
    expect(next).toEqual(["find the bug in parse.ts", "fix it", expect.stringContaining("SUMMARY-T1"), "fixed", "and test it"]);
  });

  it("streamed: the compaction item is emitted complete before the answer, in the stream grammar and through the SDK", async () => {
    const { router, chat } = env;
    chat.enqueue("/chat/completions", { kind: "json", body: chatCompletion("SUMMARY-T2") });
    chat.enqueue("/chat/completions", { kind: "sse", frames: chatTextChunks(["fi", "xed"]) });
    const res = await router.fetch("/v1/responses", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "local", stream: true, input: longHistory(), context_management: [{ type: "compaction", compact_threshold: 1000 }] }),
    });
    const events = parseSse(await res.text()).map((f) => f.data);
    const g = assertResponsesGrammar(events);
    expect(g.items.map((i) => i.type)).toEqual(["compaction", "message"]);
    expect(events.map((e) => e.type).slice(0, 6)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.compaction.compacting",
      "response.output_item.done",
      "response.output_item.added",
    ]);

    chat.enqueue("/chat/completions", { kind: "json", body: chatCompletion("SUMMARY-T3") });
    chat.enqueue("/chat/completions", { kind: "sse", frames: chatTextChunks(["ok"]) });
    const final = await router.client.responses.stream({ model: "local", input: longHistory(), context_management: [{ type: "compaction", compact_threshold: 1000 }] }).finalResponse();
    expect(final.output.map((i) => i.type)).toEqual(["compaction", "message"]);
    expect(final.output_text).toBe("ok");
  });

  it("under the threshold (or without one) nothing is compacted", async () => {
    const { router, chat } = env;
    chat.enqueue("/chat/completions", { kind: "json", body: chatCompletion("plain") });
    const r = await router.client.responses.create({ model: "local", input: "short", context_management: [{ type: "compaction", compact_threshold: 100000 }] });
    expect(r.output.map((i) => i.type)).toEqual(["message"]);
    expect(chat.requests.filter((q) => q.path === "/chat/completions")).toHaveLength(1);
  });

  it("rejects a malformed context_management with a 400 naming it", async () => {
    const { router } = env;
    const err = await router.client.responses.create({ model: "local", input: "x", context_management: [{ type: "compaction", compact_threshold: -3 }] }).catch((e) => e);
    expect(err.status).toBe(400);
    expect(err.error.param).toBe("context_management[0].compact_threshold");
  });

  it("passes context_management through to an openai backend", async () => {
    const { router, oai } = env;
    await router.client.responses.create({ model: "gpt-4.1", input: "x", context_management: [{ type: "compaction", compact_threshold: 1000 }] });
    expect(oai.requests[0]!.body.context_management).toEqual([{ type: "compaction", compact_threshold: 1000 }]);
    const metrics = await (await router.fetch("/metrics")).text();
    expect(metrics).toMatch(/responses_router_compactions_total\{model="local",kind="chat",trigger="threshold"\} 3/);
  });
});
