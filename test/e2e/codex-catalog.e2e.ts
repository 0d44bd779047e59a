import { beforeAll, describe, expect, it } from "vitest";
import { chatChunk, chatTextChunks, chatToolCallChunks, type RecordedRequest, type Reply } from "../helpers/mock-upstream.js";
import { useTwoKindRouter } from "../helpers/router.js";
import { assertCodexInstalled, codexExec } from "./codex-cli.js";

/**
 * Codex's model catalog from the router: a local model whose context window router.yaml sets is
 * listed in the shape Codex reads (`GET /v1/models?client_version=...`), and Codex runs a whole
 * tool turn on it with the catalog entry (its base instructions reach the backend as the system
 * message), instead of its fallback for a model it does not know.
 */
const ECHO = "echo hi from codex";

function chatModel(req: RecordedRequest): Reply {
  const result = (req.body.messages as { role: string; content: unknown }[]).find((m) => m.role === "tool");
  if (!result) {
    const args = JSON.stringify({ cmd: ECHO, yield_time_ms: 2000 });
    return { kind: "sse", frames: [chatChunk({ role: "assistant", content: null }), ...chatToolCallChunks([{ id: "call_echo", name: "exec_command", args: [args] }])] };
  }
  return { kind: "sse", frames: [...chatTextChunks(["done"], req.body.model), "data: [DONE]\n\n"] };
}

const env = useTwoKindRouter({
  models: { local: { endpoints: ["box"], upstream_model: "llama3.1:8b", context_window: 32768, input_modalities: ["text"], reasoning: false } },
});
beforeAll(() => {
  assertCodexInstalled();
  env.chat.setDefault("/chat/completions", chatModel);
});

describe("Codex's model catalog through the router", () => {
  it("the catalog lists the local model with its context window, and Codex completes a tool turn on it", async () => {
    const catalog = (await (await env.router.fetch("/v1/models?client_version=0.169.0", { headers: { authorization: "Bearer test-key" } })).json()) as { models?: { slug: string; context_window: number; base_instructions: string }[] };
    const entry = catalog.models?.find((m) => m.slug === "local");
    expect(entry?.context_window).toBe(32768);

    const run = await codexExec(env.router.url, "local", "Run `echo hi from codex` and tell me what it printed.");
    const failure = `codex exited ${run.code}\n${run.stderr.slice(-3000)}\n${JSON.stringify(run.events, null, 1).slice(-3000)}`;
    expect(run.code, failure).toBe(0);
    expect(run.events.at(-1)?.type, failure).toBe("turn.completed");
    const commands = run.events.filter((e) => e.type === "item.completed" && e.item?.type === "command_execution");
    expect(commands, failure).toHaveLength(1);
    // The catalog entry's base instructions are what Codex sent as `instructions` (the system message on chat).
    const system = (env.chat.requests[0]!.body.messages as { role: string; content: unknown }[]).find((m) => m.role === "system" || m.role === "developer");
    expect(JSON.stringify(system?.content)).toContain(JSON.stringify(entry!.base_instructions.slice(0, 40)).slice(1, -1));
  });
});
