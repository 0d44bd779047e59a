import { beforeAll, describe, expect, it } from "vitest";
import { chatChunk, chatTextChunks, chatToolCallChunks, nativeEvents, nativeResponse, usageChunk, type RecordedRequest, type Reply } from "../helpers/mock-upstream.js";
import { useTwoKindRouter } from "../helpers/router.js";
import { SUMMARY_PREFIX } from "../../src/translate/chat/compaction.js";
import { assertCodexInstalled, codexExec, type CodexRun } from "./codex-cli.js";

/**
 * The Codex CLI compacting a session through the router: a small context window and
 * auto-compact limit, a first answer (a shell tool call) that reports more tokens than the
 * limit, so Codex compacts before it sends the tool's output back. The provider is named
 * "OpenAI" so Codex uses its remote compaction (the `compaction_trigger` item on
 * /v1/responses) as it does against OpenAI. On the chat kind the router writes the summary
 * with the backend and seals it; on the openai kind the upstream does. Codex's next request
 * must carry the compaction item and the turn must finish. Run with `npm run test:codex`.
 */
const ECHO = "echo hi from codex";
const SMALL_WINDOW = "model_context_window = 16000\nmodel_auto_compact_token_limit = 4000\n";
const BIG = 9000; // tokens the first answer reports: over the limit
const isSummaryCall = (req: RecordedRequest) => !req.body.tools && /summary/i.test(String(req.body.messages?.at(-1)?.content));

function chatModel(req: RecordedRequest): Reply {
  if (isSummaryCall(req)) return { kind: "sse", frames: [...chatTextChunks(["SUMMARY-E2E: ran echo, awaiting its output"]), "data: [DONE]\n\n"] };
  const sawSummary = (req.body.messages as { content: unknown }[]).some((m) => typeof m.content === "string" && m.content.startsWith(SUMMARY_PREFIX) && m.content.includes("SUMMARY-E2E"));
  if (sawSummary) return { kind: "sse", frames: [...chatTextChunks(["after compaction: done"]), "data: [DONE]\n\n"] };
  const args = JSON.stringify({ cmd: ECHO, yield_time_ms: 2000 });
  const call = chatToolCallChunks([{ id: "call_echo", name: "exec_command", args: [args] }]).filter((f) => typeof f !== "string" && !("usage" in f.data));
  return { kind: "sse", frames: [chatChunk({ role: "assistant", content: null }), ...call, usageChunk(BIG, 10), "data: [DONE]\n\n"] };
}

const UPSTREAM_ITEM = { id: "cmp_upstream", type: "compaction", encrypted_content: "gAAAAAB-upstream-sealed" };

function responsesModel(req: RecordedRequest): Reply {
  const input = req.body.input as { type?: string }[];
  if (input.at(-1)?.type === "compaction_trigger") {
    const resp = { ...nativeResponse("", req.body.model, "resp_cmp"), output: [UPSTREAM_ITEM] };
    const base = { ...resp, status: "in_progress", output: [] };
    return {
      kind: "sse",
      frames: [
        { event: "response.created", data: { type: "response.created", response: base, sequence_number: 0 } },
        { event: "response.output_item.added", data: { type: "response.output_item.added", output_index: 0, item: UPSTREAM_ITEM, sequence_number: 1 } },
        { event: "response.compaction.compacting", data: { type: "response.compaction.compacting", item_id: UPSTREAM_ITEM.id, output_index: 0, sequence_number: 2 } },
        { event: "response.output_item.done", data: { type: "response.output_item.done", output_index: 0, item: UPSTREAM_ITEM, sequence_number: 3 } },
        { event: "response.completed", data: { type: "response.completed", response: resp, sequence_number: 4 } },
      ],
    };
  }
  if (input.some((i) => i.type === "compaction")) return { kind: "sse", frames: nativeEvents(nativeResponse("after compaction: done", req.body.model, "resp_after")) };
  const resp = {
    ...nativeResponse("", req.body.model, "resp_call"),
    output: [{ id: "fc_up1", type: "function_call", status: "completed", call_id: "call_echo", name: "exec_command", arguments: JSON.stringify({ cmd: ECHO, yield_time_ms: 2000 }) }],
  };
  resp.usage = { ...resp.usage, input_tokens: BIG, total_tokens: BIG + 10 } as typeof resp.usage;
  return { kind: "sse", frames: nativeEvents(resp as ReturnType<typeof nativeResponse>) };
}

const env = useTwoKindRouter({ compaction: { key: "codex-e2e-compaction-key-0123" } });
beforeAll(() => {
  assertCodexInstalled();
  env.chat.setDefault("/chat/completions", chatModel);
  env.oai.setDefault("/responses", responsesModel);
});

function expectCompactedTurn(run: CodexRun): void {
  const failure = `codex exited ${run.code}\n${run.stderr.slice(-3000)}\n${JSON.stringify(run.events, null, 1).slice(-3000)}`;
  expect(run.code, failure).toBe(0);
  const messages = run.events.filter((e) => e.type === "item.completed" && e.item?.type === "agent_message").map((e) => e.item!.text);
  expect(messages, failure).toEqual(["after compaction: done"]);
  expect(run.events.some((e) => e.type === "turn.failed" || e.type === "error")).toBe(false);
  expect(run.events.at(-1)?.type).toBe("turn.completed");
}

describe("Codex CLI compacting a session through the router", () => {
  it("on a chat backend: the router summarises with the backend, seals the item, and the next request carries the summary", async () => {
    const run = await codexExec(env.router.url, "local", "Run `echo hi from codex` and tell me what it printed.", "test-key", { extra: SMALL_WINDOW, providerName: "OpenAI" });
    expectCompactedTurn(run);
    const bodies = env.chat.requests.map((r) => r.body);
    const summaryCalls = env.chat.requests.filter(isSummaryCall);
    expect(summaryCalls).toHaveLength(1);
    // The summarisation call saw the conversation so far, Codex's tool call included.
    expect(JSON.stringify(summaryCalls[0]!.body.messages)).toContain("exec_command");
    const after = bodies.at(-1)!;
    expect(after.tools.length).toBeGreaterThan(0);
    expect(JSON.stringify(after.messages)).toContain("SUMMARY-E2E");
    const metrics = await (await env.router.fetch("/metrics")).text();
    expect(metrics).toMatch(/responses_router_compactions_total\{model="local",kind="chat",trigger="trigger"\} 1/);
  });

  it("on an openai backend: the upstream compacts and its item goes back untouched on the next request", async () => {
    const run = await codexExec(env.router.url, "gpt-4.1", "Run `echo hi from codex` and tell me what it printed.", "test-key", { extra: SMALL_WINDOW, providerName: "OpenAI" });
    expectCompactedTurn(run);
    const sent = env.oai.requests.filter((r) => r.path === "/responses").map((r) => r.body);
    expect(sent.some((b) => b.input.at(-1)?.type === "compaction_trigger")).toBe(true);
    const last = sent.at(-1)!;
    expect(last.input).toContainEqual(expect.objectContaining({ type: "compaction", encrypted_content: UPSTREAM_ITEM.encrypted_content }));
  });
});
