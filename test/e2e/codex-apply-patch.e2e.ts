import { beforeAll, describe, expect, it } from "vitest";
import { chatChunk, chatTextChunks, usageChunk, type RecordedRequest, type Reply } from "../helpers/mock-upstream.js";
import { useTwoKindRouter } from "../helpers/router.js";
import { assertCodexInstalled, codexExec } from "./codex-cli.js";

/**
 * Codex's freeform `apply_patch` tool through a chat backend. Codex sends `apply_patch` as a
 * `custom` tool with a Lark grammar for the models its catalog marks `apply_patch_tool_type:
 * freeform`; here a router model named like one of those (`gpt-5.5`) is served by a chat
 * backend (a scripted one that answers with the apply_patch call, as a local coder model
 * would). The router sends the tool as a one-string-parameter function, turns the call back
 * into a `custom_tool_call`, Codex applies the patch to its work dir and sends the result as
 * a `custom_tool_call_output`, which reaches the backend as a tool message.
 * Run with `npm run test:codex`.
 */
const PATCH = "*** Begin Patch\n*** Add File: hello.txt\n+Hello from a chat backend\n*** End Patch\n";

function chatModel(req: RecordedRequest): Reply {
  const messages = req.body.messages as { role: string; content: unknown }[];
  const result = messages.find((m) => m.role === "tool");
  const model = req.body.model as string;
  if (!result) {
    const args = JSON.stringify({ input: PATCH });
    return {
      kind: "sse",
      frames: [
        chatChunk({ role: "assistant", content: null }, null, model),
        chatChunk({ tool_calls: [{ index: 0, id: "call_patch", type: "function", function: { name: "apply_patch", arguments: args.slice(0, 20) } }] }, null, model),
        chatChunk({ tool_calls: [{ index: 0, function: { arguments: args.slice(20) } }] }, null, model),
        chatChunk({}, "tool_calls", model),
        usageChunk(50, 20, {}, model),
        "data: [DONE]\n\n",
      ],
    };
  }
  return { kind: "sse", frames: [...chatTextChunks(["Patched: ", String(result.content).slice(0, 40)], model), "data: [DONE]\n\n"] };
}

const env = useTwoKindRouter({
  models: {
    "gpt-5.5": { endpoints: ["box"], upstream_model: "qwen3-coder:30b" },
    "gpt-4.1": { endpoints: ["oai"] },
  },
});
beforeAll(() => {
  assertCodexInstalled();
  env.chat.setDefault("/chat/completions", chatModel);
});

describe("Codex CLI: freeform apply_patch on a chat backend", () => {
  for (const websockets of [false, true]) {
    it(`edits a file through the router (${websockets ? "WebSocket" : "HTTP"})`, async () => {
      const run = await codexExec(env.router.url, "gpt-5.5", "Create hello.txt saying hello.", "test-key", { websockets, readFiles: ["hello.txt"] });
      const failure = `codex exited ${run.code}\n${run.stderr.slice(-3000)}\n${JSON.stringify(run.events, null, 1).slice(-3000)}`;
      expect(run.code, failure).toBe(0);
      expect(run.files["hello.txt"], failure).toBe("Hello from a chat backend\n");
      const changes = run.events.filter((e) => e.type === "item.completed" && e.item?.type === "file_change");
      expect(changes, failure).toHaveLength(1);
      expect(changes[0]!.item!.status).toBe("completed");
      expect(run.events.at(-1)?.type).toBe("turn.completed");

      expect(env.chat.requests).toHaveLength(2);
      const [first, second] = env.chat.requests.map((r) => r.body);
      const tool = (first.tools as { function: { name: string; description: string; parameters: { required: string[] } } }[]).find((t) => t.function.name === "apply_patch");
      expect(tool?.function.parameters.required).toEqual(["input"]);
      expect(tool?.function.description).toContain("*** Begin Patch");
      // Turn 2 replays the custom call and carries Codex's result for it.
      const assistant = second.messages.find((m: { role: string; tool_calls?: unknown[] }) => m.role === "assistant" && m.tool_calls);
      expect(assistant.tool_calls).toEqual([{ id: "call_patch", type: "function", function: { name: "apply_patch", arguments: JSON.stringify({ input: PATCH }) } }]);
      const result = second.messages.find((m: { role: string }) => m.role === "tool");
      expect(result.tool_call_id).toBe("call_patch");
      expect(String(result.content)).toContain("hello.txt");
    });
  }
});
