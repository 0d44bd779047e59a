/** Hosted MCP on a kind: anthropic model: the tool is a Messages API tool, its call a tool_use, the result a tool_result; JSON and streamed. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { message, messageReply, startAnthropicMock, textBlock, toolUseBlock } from "../helpers/anthropic-mock.js";
import { assertResponsesGrammar } from "../helpers/grammar.js";
import { startMcpServer, type TestMcpServer } from "../helpers/mcp-server.js";
import type { MockUpstream, RecordedRequest } from "../helpers/mock-upstream.js";
import { parseSse, startTestRouter, type TestRouter } from "../helpers/router.js";

let claude: MockUpstream;
let mcp: TestMcpServer;
let router: TestRouter;

/** Calls wiki__echo until a tool_result comes back, then answers with it. */
function model(req: RecordedRequest) {
  const messages = req.body.messages as { role: string; content: unknown }[];
  const result = messages.flatMap((m) => (Array.isArray(m.content) ? (m.content as { type: string; content?: unknown }[]) : [])).find((b) => b.type === "tool_result");
  if (result) {
    const text = typeof result.content === "string" ? result.content : (result.content as { text: string }[]).map((p) => p.text).join("");
    return messageReply(message([textBlock(`Claude: ${text}`)]), req);
  }
  return messageReply(message([toolUseBlock("toolu_1", "wiki__echo", { text: "claude" })], { stop_reason: "tool_use" }), req);
}

beforeAll(async () => {
  claude = await startAnthropicMock();
  claude.setDefault("/messages", model);
  mcp = await startMcpServer();
  router = await startTestRouter({
    endpoints: [{ name: "claude", url: claude.url, kind: "anthropic", api_key: "sk-ant-test-0123456789" }],
    models: { claude: { endpoints: ["claude"], upstream_model: "claude-upstream" } },
    tools: { mcp: { allowed_urls: ["http://127.0.0.1:*/*"] } },
  });
});
afterAll(async () => {
  await router?.close();
  await Promise.all([claude?.close(), mcp?.close()]);
});

describe("MCP on kind: anthropic", () => {
  const tool = () => ({ type: "mcp" as const, server_label: "wiki", server_url: mcp.url, require_approval: "never" as const, allowed_tools: ["echo"] });

  it("JSON: the router runs the model's tool_use and answers in one response", async () => {
    claude.requests.length = 0;
    const r = await router.client.responses.create({ model: "claude", input: "echo", tools: [tool()] });
    expect(r.output.map((i) => i.type)).toEqual(["mcp_list_tools", "mcp_call", "message"]);
    expect(r.output_text).toBe("Claude: echo: claude");
    const sent = claude.requests.filter((q) => q.path === "/messages").map((q) => q.body);
    expect(sent).toHaveLength(2);
    expect(sent[0].tools.map((t: { name: string }) => t.name)).toEqual(["wiki__echo"]);
  });

  it("SSE: one response over both rounds, the grammar holds", async () => {
    const res = await router.fetch("/v1/responses", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "claude", input: "echo", stream: true, tools: [tool()] }) });
    const s = assertResponsesGrammar(parseSse(await res.text()).map((f) => f.data));
    expect(s.items.map((i) => i.type)).toEqual(["mcp_list_tools", "mcp_call", "message"]);
    expect(s.terminal?.type).toBe("response.completed");
  });
});
