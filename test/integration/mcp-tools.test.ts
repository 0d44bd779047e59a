/**
 * Hosted MCP tools run by the router on a chat model: a real MCP server (the SDK's own, over
 * Streamable HTTP and over SSE), a scripted chat upstream that asks for the tool, the openai
 * SDK as the client.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { assertResponsesGrammar } from "../helpers/grammar.js";
import { startMcpServer, type TestMcpServer } from "../helpers/mcp-server.js";
import { chatCompletion, chatTextChunks, chatToolCallChunks, startMockUpstream, type MockUpstream, type RecordedRequest, type Reply } from "../helpers/mock-upstream.js";
import { parseSse, startTestRouter, type TestRouter } from "../helpers/router.js";

let chat: MockUpstream;
let mcp: TestMcpServer;
let sseMcp: TestMcpServer;
let router: TestRouter;

/** The model calls `calls` (chat names) first; once it sees tool results it answers with them. */
function toolScript(calls: { name: string; args: string }[]) {
  return (rec: RecordedRequest): Reply => {
    const messages = rec.body.messages as { role: string; content: unknown }[];
    const last = messages[messages.length - 1]!;
    if (last.role === "tool") {
      const results = messages.filter((m) => m.role === "tool").map((m) => String(m.content));
      const text = `Tools said: ${results.join(" | ")}`;
      return rec.body.stream ? { kind: "sse", frames: [...chatTextChunks([text]), "data: [DONE]\n\n"] } : { kind: "json", body: chatCompletion(text) };
    }
    if (rec.body.stream) return { kind: "sse", frames: chatToolCallChunks(calls.map((c, i) => ({ id: `call_${i}`, name: c.name, args: [c.args.slice(0, 3), c.args.slice(3)] }))) };
    return { kind: "json", body: chatCompletion(null, "mock", { tool_calls: calls.map((c, i) => ({ id: `call_${i}`, type: "function", function: { name: c.name, arguments: c.args } })) }) };
  };
}

const chatRequests = () => chat.requests.filter((r) => r.path === "/chat/completions");

beforeAll(async () => {
  chat = await startMockUpstream();
  mcp = await startMcpServer();
  sseMcp = await startMcpServer({ transport: "sse" });
  router = await startTestRouter({
    endpoints: [{ name: "box", url: chat.url, kind: "chat" }],
    models: { local: { endpoints: ["box"] } },
    tools: { mcp: { allowed_urls: ["http://127.0.0.1:*/*"], call_timeout: "2s", max_result_bytes: 10_000 } },
  });
});

afterAll(async () => {
  await router?.close();
  await chat?.close();
  await mcp?.close();
  await sseMcp?.close();
});

beforeEach(() => {
  chat.requests.length = 0;
  mcp.calls.length = 0;
});

const mcpTool = (extra: Record<string, unknown> = {}) => ({ type: "mcp" as const, server_label: "wiki", server_url: mcp.url, require_approval: "never" as const, ...extra });

describe("MCP on a chat model", () => {
  it("JSON: lists the tools, runs the call, answers with its result in one response", async () => {
    chat.setDefault("/chat/completions", toolScript([{ name: "wiki__echo", args: '{"text":"hi"}' }]));
    const r = await router.client.responses.create({ model: "local", input: "say hi through the tool", tools: [mcpTool({ headers: { "X-Secret": "hdr-secret-123" }, authorization: "tok-secret-456" })] });
    expect(r.status).toBe("completed");
    expect(r.output.map((i) => i.type)).toEqual(["mcp_list_tools", "mcp_call", "message"]);
    const list = r.output[0] as any;
    expect(list.server_label).toBe("wiki");
    expect(list.tools.map((t: any) => t.name)).toContain("echo");
    const call = r.output[1] as any;
    expect(call).toMatchObject({ type: "mcp_call", server_label: "wiki", name: "echo", arguments: '{"text":"hi"}', output: "echo: hi", status: "completed", error: null });
    expect(r.output_text).toBe("Tools said: echo: hi");
    expect(mcp.calls).toEqual([{ name: "echo", args: { text: "hi" } }]);
    // Two rounds: the model saw the MCP tools as functions, then its call and the result.
    const reqs = chatRequests();
    expect(reqs).toHaveLength(2);
    expect(reqs[0]!.body.tools.map((t: any) => t.function.name)).toContain("wiki__echo");
    const second = reqs[1]!.body.messages;
    expect(second.at(-2)).toMatchObject({ role: "assistant", tool_calls: [{ function: { name: "wiki__echo", arguments: '{"text":"hi"}' } }] });
    expect(second.at(-1)).toMatchObject({ role: "tool", content: "echo: hi" });
    // usage is the sum of both rounds (the mock reports 5+2 per JSON round)
    expect(r.usage?.input_tokens).toBe(10);
    // the server got the credentials; the client never sees them again
    expect(mcp.headers.some((h) => h["x-secret"] === "hdr-secret-123" && h.authorization === "Bearer tok-secret-456")).toBe(true);
    const text = JSON.stringify(r);
    expect(text).not.toContain("hdr-secret-123");
    expect(text).not.toContain("tok-secret-456");
    const stored = JSON.stringify(await router.client.responses.retrieve(r.id));
    expect(stored).not.toContain("tok-secret-456");
    expect(stored).not.toContain("hdr-secret-123");
  });

  it("SSE: one response.created, continuous sequence numbers and output indexes, MCP events, one terminal", async () => {
    chat.setDefault("/chat/completions", toolScript([{ name: "wiki__add", args: '{"a":2,"b":3}' }]));
    const res = await router.fetch("/v1/responses", { method: "POST", headers: { "content-type": "application/json", authorization: "Bearer x" }, body: JSON.stringify({ model: "local", input: "add", stream: true, tools: [mcpTool()] }) });
    expect(res.status).toBe(200);
    const events = parseSse(await res.text()).map((f) => f.data);
    const summary = assertResponsesGrammar(events);
    const types = events.map((e) => e.type);
    expect(types.filter((t) => t === "response.created")).toHaveLength(1);
    expect(types).toContain("response.mcp_list_tools.in_progress");
    expect(types).toContain("response.mcp_list_tools.completed");
    expect(types).toContain("response.mcp_call.in_progress");
    expect(types).toContain("response.mcp_call_arguments.delta");
    expect(types).toContain("response.mcp_call_arguments.done");
    expect(types).toContain("response.mcp_call.completed");
    expect(types).not.toContain("response.function_call_arguments.delta");
    expect(types.at(-1)).toBe("response.completed");
    expect(summary.items.map((i) => i.type)).toEqual(["mcp_list_tools", "mcp_call", "message"]);
    expect((summary.items[1] as any).output).toBe("5");
    expect(summary.terminal!.response.output_text ?? "").toBe("");
    expect((summary.items[2] as any).content[0].text).toBe("Tools said: 5");
  });

  it("the openai SDK's responses.stream() builds the same final response", async () => {
    chat.setDefault("/chat/completions", toolScript([{ name: "wiki__echo", args: '{"text":"sdk"}' }]));
    const stream = router.client.responses.stream({ model: "local", input: "x", tools: [mcpTool()] });
    const seen: string[] = [];
    stream.on("event", (e) => seen.push(e.type));
    const final = await stream.finalResponse();
    expect(final.output.map((i) => i.type)).toEqual(["mcp_list_tools", "mcp_call", "message"]);
    expect(final.output_text).toBe("Tools said: echo: sdk");
    expect(seen).toContain("response.mcp_call.completed");
  });
});
