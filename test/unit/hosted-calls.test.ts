import { describe, expect, it } from "vitest";
import { hostedFunctionName, hostedItemsForModel } from "../../src/translate/hosted-calls.js";
import { responsesToChatRequest } from "../../src/translate/index.js";
import { itemsToMessages } from "../../src/translate/anthropic/index.js";
import type { Item } from "../../src/wire/types.js";

const call: Item = { id: "mcp_1", type: "mcp_call", server_label: "wiki", name: "search", arguments: '{"q":"x"}', output: "found x", status: "completed", error: null };

describe("hosted runs as the model's function calls", () => {
  it("names: label__tool, chat-safe and bounded", () => {
    expect(hostedFunctionName("wiki", "search")).toBe("wiki__search");
    expect(hostedFunctionName("my wiki", "read.page")).toBe("my_wiki__read_page");
    expect(hostedFunctionName("a".repeat(40), "b".repeat(40)).length).toBeLessThanOrEqual(64);
  });

  it("an mcp_call becomes the call and its output; a failed one tells the error; listings and pending approvals vanish", () => {
    const failed: Item = { ...call, id: "mcp_2", output: null, status: "failed", error: { type: "mcp_protocol_error", code: -32001, message: "timed out" } };
    const out = hostedItemsForModel([{ id: "mcpl_1", type: "mcp_list_tools", server_label: "wiki", tools: [] }, call, failed, { id: "mcpr_1", type: "mcp_approval_request", server_label: "wiki", name: "search", arguments: "{}" }]);
    expect(out).toEqual([
      // the calls of one turn together, then their outputs
      { type: "function_call", id: "mcp_1_call", call_id: "mcp_1", name: "wiki__search", arguments: '{"q":"x"}', status: "completed" },
      { type: "function_call", id: "mcp_2_call", call_id: "mcp_2", name: "wiki__search", arguments: '{"q":"x"}', status: "completed" },
      { type: "function_call_output", id: "mcp_1_output", call_id: "mcp_1", output: "found x" },
      { type: "function_call_output", id: "mcp_2_output", call_id: "mcp_2", output: "Error: timed out" },
    ]);
  });

  it("a client function call of the same turn stays with the hosted call; a later message ends the turn", () => {
    const fc: Item = { type: "function_call", call_id: "c1", name: "get_time", arguments: "{}" };
    const out = hostedItemsForModel([call, fc, { type: "function_call_output", call_id: "c1", output: "noon" }, { type: "message", role: "user", content: "next" }]);
    expect(out.map((i) => `${i.type}:${i.call_id ?? i.role}`)).toEqual(["function_call:mcp_1", "function_call:c1", "function_call_output:mcp_1", "function_call_output:c1", "message:user"]);
  });

  it("anthropic history: a turn with an mcp_call and a client call is one assistant message, its results one user message", () => {
    const fc: Item = { type: "function_call", call_id: "c1", name: "get_time", arguments: "{}" };
    const { messages } = itemsToMessages([{ type: "message", role: "user", content: "q" }, call, fc, { type: "function_call_output", call_id: "c1", output: "noon" }], { systemMessages: true, historyItems: 3 });
    expect(messages.map((m: any) => [m.role, m.content.map((b: any) => b.type)])).toEqual([
      ["user", ["text"]],
      ["assistant", ["tool_use", "tool_use"]],
      ["user", ["tool_result", "tool_result"]],
    ]);
  });

  it("a refused approval request is shown as a call that was not run", () => {
    const out = hostedItemsForModel([
      { id: "mcpr_1", type: "mcp_approval_request", server_label: "wiki", name: "search", arguments: "{}" },
      { type: "mcp_approval_response", approval_request_id: "mcpr_1", approve: false },
    ]);
    expect(out).toHaveLength(2);
    expect(out[1]!.output).toContain("did not approve");
  });

  it("chat history: a stored mcp_call replays as an assistant tool call and a tool message", () => {
    const items: Item[] = [{ type: "message", role: "user", content: "q" }, call, { type: "message", role: "user", content: "next" }];
    const { body } = responsesToChatRequest({ model: "m", input: "next" }, items, { upstreamModel: "m", stream: false, developerRole: "system", hostedTools: "drop" });
    expect(body.messages).toEqual([
      { role: "user", content: "q" },
      { role: "assistant", content: null, tool_calls: [{ id: "mcp_1", type: "function", function: { name: "wiki__search", arguments: '{"q":"x"}' } }] },
      { role: "tool", tool_call_id: "mcp_1", content: "found x" },
      { role: "user", content: "next" },
    ]);
  });
});
