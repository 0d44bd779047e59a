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
    // added, in progress, the arguments as the model writes them, the outcome once the router ran it
    const at = (t: string) => types.indexOf(t);
    expect(at("response.mcp_call.in_progress")).toBeLessThan(at("response.mcp_call_arguments.delta"));
    expect(at("response.mcp_call_arguments.done")).toBeLessThan(at("response.mcp_call.completed"));
    expect(types).not.toContain("response.function_call_arguments.delta");
    expect(types.at(-1)).toBe("response.completed");
    expect(summary.items.map((i) => i.type)).toEqual(["mcp_list_tools", "mcp_call", "message"]);
    expect((summary.items[1] as any).output).toBe("5");
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

describe("approvals, history and limits", () => {
  it("require_approval: the call waits for the client's mcp_approval_response, then runs before the model is called", async () => {
    chat.setDefault("/chat/completions", toolScript([{ name: "wiki__echo", args: '{"text":"ok?"}' }]));
    const listed = mcp.listCount;
    const first = await router.client.responses.create({ model: "local", input: "echo with approval", tools: [mcpTool({ require_approval: "always" })] });
    expect(first.status).toBe("completed");
    expect(first.output.map((i) => i.type)).toEqual(["mcp_list_tools", "mcp_approval_request"]);
    const request = first.output[1] as any;
    expect(request).toMatchObject({ server_label: "wiki", name: "echo", arguments: '{"text":"ok?"}' });
    expect(mcp.calls).toHaveLength(0);
    expect(chatRequests()).toHaveLength(1);

    const second = await router.client.responses.create({
      model: "local",
      previous_response_id: first.id,
      input: [{ type: "mcp_approval_response", approval_request_id: request.id, approve: true }],
      tools: [mcpTool({ require_approval: "always" })],
    });
    expect(second.status).toBe("completed");
    expect(second.output.map((i) => i.type)).toEqual(["mcp_call", "message"]);
    expect(second.output[0]).toMatchObject({ approval_request_id: request.id, output: "echo: ok?", status: "completed" });
    expect(second.output_text).toBe("Tools said: echo: ok?");
    expect(mcp.calls).toEqual([{ name: "echo", args: { text: "ok?" } }]);
    // listed once per conversation: the second turn reused the first turn's mcp_list_tools
    expect(mcp.listCount - listed).toBe(1);
  });

  it("a refused approval is not run, and the model is told", async () => {
    chat.setDefault("/chat/completions", toolScript([{ name: "wiki__echo", args: '{"text":"no"}' }]));
    const first = await router.client.responses.create({ model: "local", input: "x", tools: [mcpTool({ require_approval: "always" })] });
    const request = first.output[1] as any;
    const second = await router.client.responses.create({
      model: "local",
      previous_response_id: first.id,
      input: [{ type: "mcp_approval_response", approval_request_id: request.id, approve: false }],
      tools: [mcpTool({ require_approval: "always" })],
    });
    expect(mcp.calls).toHaveLength(0);
    expect(second.output.map((i) => i.type)).toEqual(["message"]);
    expect(second.output_text).toContain("did not approve");
  });

  it("a later turn replays the stored mcp_call to the model as its tool call and result", async () => {
    chat.setDefault("/chat/completions", toolScript([{ name: "wiki__echo", args: '{"text":"remember"}' }]));
    const first = await router.client.responses.create({ model: "local", input: "x", tools: [mcpTool()] });
    chat.requests.length = 0;
    chat.setDefault("/chat/completions", (rec) => ({ kind: "json", body: chatCompletion("plain") }));
    await router.client.responses.create({ model: "local", previous_response_id: first.id, input: "and now?" });
    const messages = chatRequests()[0]!.body.messages;
    expect(messages).toContainEqual(expect.objectContaining({ role: "assistant", tool_calls: [expect.objectContaining({ function: { name: "wiki__echo", arguments: '{"text":"remember"}' } })] }));
    expect(messages).toContainEqual(expect.objectContaining({ role: "tool", content: "echo: remember" }));
  });

  it("a conversation replays the tool items too, and lists each server once", async () => {
    const conv = await router.client.conversations.create({});
    chat.setDefault("/chat/completions", toolScript([{ name: "wiki__echo", args: '{"text":"c1"}' }]));
    const listed = mcp.listCount;
    await router.client.responses.create({ model: "local", conversation: conv.id, input: "one", tools: [mcpTool()] });
    const items = await router.client.conversations.items.list(conv.id);
    expect(items.data.map((i) => i.type)).toEqual(expect.arrayContaining(["mcp_list_tools", "mcp_call", "message"]));
    chat.requests.length = 0;
    const second = await router.client.responses.create({ model: "local", conversation: conv.id, input: "two", tools: [mcpTool()] });
    expect(second.output.map((i) => i.type)).toEqual(["mcp_call", "message"]);
    expect(mcp.listCount - listed).toBe(1);
    expect(chatRequests()[0]!.body.messages).toContainEqual(expect.objectContaining({ role: "tool", content: "echo: c1" }));
  });

  it("max_tool_calls: calls past it are not run, and the model gets no more tools", async () => {
    chat.setDefault("/chat/completions", toolScript([
      { name: "wiki__echo", args: '{"text":"1"}' },
      { name: "wiki__echo", args: '{"text":"2"}' },
    ]));
    const r = await router.client.responses.create({ model: "local", input: "x", max_tool_calls: 1, tools: [mcpTool()] });
    expect(r.status).toBe("completed");
    expect(r.max_tool_calls).toBe(1);
    const calls = r.output.filter((i) => i.type === "mcp_call") as any[];
    expect(calls.map((c) => c.status)).toEqual(["completed", "incomplete"]);
    expect(mcp.calls).toHaveLength(1);
    expect(chatRequests()[1]!.body.tools).toBeUndefined();
  });

  it("the round bound ends the response incomplete", async () => {
    // a model that never stops calling tools
    chat.setDefault("/chat/completions", (rec) => ({ kind: "json", body: chatCompletion(null, "mock", { tool_calls: [{ id: `c${rec.body.messages.length}`, type: "function", function: { name: "wiki__echo", arguments: '{"text":"again"}' } }] }) }));
    const r = await router.client.responses.create({ model: "local", input: "x", tools: [mcpTool()] });
    expect(r.status).toBe("incomplete");
    expect(chatRequests()).toHaveLength(10);
    const calls = r.output.filter((i) => i.type === "mcp_call") as any[];
    expect(calls).toHaveLength(10);
    expect(calls.at(-1).status).toBe("incomplete");
  });

  it("mixed MCP + function tools: the function call reaches the client, then the loop resumes on its output", async () => {
    chat.setDefault("/chat/completions", (rec) => {
      const msgs = rec.body.messages as any[];
      const tools = msgs.filter((m) => m.role === "tool");
      if (tools.length === 0) return { kind: "json", body: chatCompletion(null, "mock", { tool_calls: [{ id: "c1", type: "function", function: { name: "wiki__echo", arguments: '{"text":"a"}' } }, { id: "c2", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } }] }) };
      return { kind: "json", body: chatCompletion(`final: ${tools.map((t) => t.content).join(",")}`) };
    });
    const fnTool = { type: "function" as const, name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } }, strict: false };
    const first = await router.client.responses.create({ model: "local", input: "x", tools: [mcpTool(), fnTool] });
    expect(first.output.map((i) => i.type)).toEqual(["mcp_list_tools", "mcp_call", "function_call"]);
    const fc = first.output[2] as any;
    expect(fc.name).toBe("get_weather");
    const second = await router.client.responses.create({ model: "local", previous_response_id: first.id, input: [{ type: "function_call_output", call_id: fc.call_id, output: "sunny" }], tools: [mcpTool(), fnTool] });
    expect(second.output_text).toBe("final: echo: a,sunny");
    expect(mcp.calls).toHaveLength(1);
  });
});

describe("failures", () => {
  it("a server_url no pattern allows is a 400 naming it", async () => {
    const err = await router.client.responses.create({ model: "local", input: "x", tools: [{ type: "mcp", server_label: "evil", server_url: "https://mcp.example.com/mcp", require_approval: "never" }] }).catch((e) => e);
    expect(err.status).toBe(400);
    expect(err.error.param).toBe("tools[0].server_url");
    expect(err.message).toContain("https://mcp.example.com/mcp");
    expect(chatRequests()).toHaveLength(0);
  });

  it("a server whose tools cannot be listed: 424 external_connector_error (JSON), mcp_list_tools.failed then response.failed (stream)", async () => {
    const down = { type: "mcp" as const, server_label: "down", server_url: "http://127.0.0.1:9/mcp", require_approval: "never" as const };
    const err = await router.client.responses.create({ model: "local", input: "x", tools: [down] }).catch((e) => e);
    expect(err.status).toBe(424);
    expect(err.error.type).toBe("external_connector_error");
    expect(err.message).toContain("Error retrieving tool list from MCP server: 'down'");
    const res = await router.fetch("/v1/responses", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "local", input: "x", stream: true, tools: [down] }) });
    const events = parseSse(await res.text()).map((f) => f.data);
    assertResponsesGrammar(events);
    const types = events.map((e) => e.type);
    expect(types).toContain("response.mcp_list_tools.failed");
    expect(types.at(-1)).toBe("response.failed");
    expect(events.at(-1).response.error.message).toContain("'down'");
    expect(chatRequests()).toHaveLength(0);
  });

  it("a server that never answers (neither transport) ends in 424 at tools.mcp.call_timeout, not a hang", async () => {
    const { createServer } = await import("node:http");
    const held: import("node:http").ServerResponse[] = [];
    const silent = createServer((req, res) => {
      req.resume();
      if (req.method === "GET") res.writeHead(200, { "content-type": "text/event-stream" }); // SSE opened, no endpoint event ever
      held.push(res);
    });
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
    const port = (silent.address() as import("node:net").AddressInfo).port;
    try {
      const err = await router.client.responses.create({ model: "local", input: "x", tools: [{ type: "mcp", server_label: "mute", server_url: `http://127.0.0.1:${port}/mcp`, require_approval: "never" }] }).catch((e) => e);
      expect(err.status).toBe(424);
      expect(err.message).toContain("'mute'");
    } finally {
      for (const r of held) r.destroy();
      silent.closeAllConnections();
      silent.close();
    }
  });

  it("a redirect to another origin is not followed (the listing fails: 424), even to a server the patterns allow", async () => {
    const { createServer } = await import("node:http");
    const hop = createServer((req, res) => {
      req.resume();
      res.writeHead(307, { location: mcp.url }).end();
    });
    await new Promise<void>((r) => hop.listen(0, "127.0.0.1", r));
    const port = (hop.address() as import("node:net").AddressInfo).port;
    const calls = mcp.headers.length;
    try {
      const err = await router.client.responses.create({ model: "local", input: "x", tools: [{ type: "mcp", server_label: "hop", server_url: `http://127.0.0.1:${port}/mcp`, require_approval: "never" }] }).catch((e) => e);
      expect(err.status).toBe(424);
      expect(mcp.headers.length).toBe(calls); // the target never saw a request
    } finally {
      hop.closeAllConnections();
      hop.close();
    }
  });

  it("a tool error, a timeout and an oversized result are mcp_call errors the model is told about", async () => {
    chat.setDefault("/chat/completions", toolScript([
      { name: "wiki__fail", args: "{}" },
      { name: "wiki__slow", args: '{"ms":5000}' },
      { name: "wiki__big", args: '{"bytes":50000}' },
    ]));
    const r = await router.client.responses.create({ model: "local", input: "x", tools: [mcpTool()] });
    const calls = r.output.filter((i) => i.type === "mcp_call") as any[];
    expect(calls.map((c) => c.status)).toEqual(["failed", "failed", "failed"]);
    expect(calls[0].error.type).toBe("mcp_tool_execution_error");
    expect(calls[1].error).toMatchObject({ type: "mcp_protocol_error", code: -32001 }); // the 2 s call_timeout, not the tool's 5 s
    expect(calls[2].error.message).toContain("max_result_bytes");
    expect(r.status).toBe("completed");
    const toolMessages = chatRequests()[1]!.body.messages.filter((m: any) => m.role === "tool");
    expect(toolMessages).toHaveLength(3);
    expect(toolMessages[0].content).toContain("the tool broke");
    expect(toolMessages[2].content).toContain("max_result_bytes");
  });
});

describe("servers", () => {
  it("two servers in one request, one over the legacy SSE transport; allowed_tools filters what the model sees", async () => {
    chat.setDefault("/chat/completions", toolScript([
      { name: "wiki__echo", args: '{"text":"w"}' },
      { name: "dict__lookup", args: '{"word":"sse"}' },
    ]));
    const r = await router.client.responses.create({
      model: "local",
      input: "x",
      tools: [mcpTool({ allowed_tools: ["echo"] }), { type: "mcp", server_label: "dict", server_url: sseMcp.url, require_approval: "never", allowed_tools: { read_only: true } }],
    });
    expect(r.output.map((i) => i.type)).toEqual(["mcp_list_tools", "mcp_list_tools", "mcp_call", "mcp_call", "message"]);
    expect(r.output_text).toBe("Tools said: echo: w | sse: a word");
    expect((r.output[0] as any).tools.map((t: any) => t.name)).toEqual(["echo"]);
    expect((r.output[1] as any).tools.map((t: any) => t.name)).toEqual(["lookup"]);
    const names = chatRequests()[0]!.body.tools.map((t: any) => t.function.name).sort();
    expect(names).toEqual(["dict__lookup", "wiki__echo"]);
    expect(sseMcp.calls).toEqual([{ name: "lookup", args: { word: "sse" } }]);
  });
});

describe("streams across rounds", () => {
  const post = (body: Record<string, unknown>) => router.fetch("/v1/responses", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ stream: true, ...body }) });

  it("an approval request streams as its own item; the approved call streams whole in the next turn", async () => {
    chat.setDefault("/chat/completions", toolScript([{ name: "wiki__echo", args: '{"text":"s"}' }]));
    const first = parseSse(await (await post({ model: "local", input: "x", tools: [mcpTool({ require_approval: "always" })] })).text()).map((f) => f.data);
    const s1 = assertResponsesGrammar(first);
    expect(s1.items.map((i) => i.type)).toEqual(["mcp_list_tools", "mcp_approval_request"]);
    expect((s1.items[1] as any).arguments).toBe('{"text":"s"}');
    const second = parseSse(
      await (await post({ model: "local", previous_response_id: (s1.terminal as any).response.id, input: [{ type: "mcp_approval_response", approval_request_id: s1.items[1]!.id, approve: true }], tools: [mcpTool({ require_approval: "always" })] })).text(),
    ).map((f) => f.data);
    const s2 = assertResponsesGrammar(second);
    expect(s2.items.map((i) => i.type)).toEqual(["mcp_call", "message"]);
    expect(second.map((e) => e.type)).toContain("response.mcp_call_arguments.done");
  });

  it("parallel calls in one streamed round: both run, each item closes with its outcome, the grammar holds", async () => {
    chat.setDefault("/chat/completions", toolScript([
      { name: "wiki__echo", args: '{"text":"p1"}' },
      { name: "wiki__add", args: '{"a":1,"b":1}' },
    ]));
    const events = parseSse(await (await post({ model: "local", input: "x", tools: [mcpTool()] })).text()).map((f) => f.data);
    const s = assertResponsesGrammar(events);
    expect(s.items.map((i) => [i.type, (i as any).status ?? null])).toEqual([
      ["mcp_list_tools", null],
      ["mcp_call", "completed"],
      ["mcp_call", "completed"],
      ["message", "completed"],
    ]);
    expect((s.items[3] as any).content[0].text).toBe("Tools said: echo: p1 | 2");
    expect(events.filter((e) => e.type === "response.mcp_call.completed")).toHaveLength(2);
  });

  it("a model that fails in a later round ends the one response failed, keeping the tool items", async () => {
    let n = 0;
    chat.setDefault("/chat/completions", (rec) => (++n === 1 ? toolScript([{ name: "wiki__echo", args: '{"text":"f"}' }])(rec) : { kind: "json", status: 400, body: { error: { message: "context too long", type: "invalid_request_error", param: null, code: null } } }));
    const events = parseSse(await (await post({ model: "local", input: "x", tools: [mcpTool()] })).text()).map((f) => f.data);
    const s = assertResponsesGrammar(events);
    expect(s.terminal!.type).toBe("response.failed");
    expect((s.terminal as any).response.error.message).toContain("context too long");
    expect(s.items.map((i) => i.type)).toEqual(["mcp_list_tools", "mcp_call"]);
    // JSON: the upstream's 4xx is the answer
    n = 0;
    const err = await router.client.responses.create({ model: "local", input: "x", tools: [mcpTool()] }).catch((e) => e);
    expect(err.status).toBe(400);
  });

  it("a background response cancelled while a tool runs ends cancelled, keeping what was done", async () => {
    chat.setDefault("/chat/completions", toolScript([{ name: "wiki__slow", args: '{"ms":1500}' }]));
    const queued = await router.client.responses.create({ model: "local", input: "x", background: true, tools: [mcpTool()] });
    const deadline = Date.now() + 5000;
    while (!mcp.calls.some((c) => c.name === "slow") && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const cancelled = await router.client.responses.cancel(queued.id);
    expect(cancelled.status).toBe("cancelled");
    const stored = await router.client.responses.retrieve(queued.id);
    expect(stored.status).toBe("cancelled");
    expect(stored.output.map((i) => i.type)).toContain("mcp_list_tools");
    expect(chatRequests()).toHaveLength(1);
  });
});

describe("a stream waiting on a tool call", () => {
  it("gets keepalive comments while the call runs, between the call's events, and its events stay whole", async () => {
    const kept = await startTestRouter({
      server: { sse_keepalive: "200ms" },
      endpoints: [{ name: "box", url: chat.url, kind: "chat" }],
      models: { local: { endpoints: ["box"] } },
      tools: { mcp: { allowed_urls: ["http://127.0.0.1:*/*"], call_timeout: "5s" } },
    });
    try {
      chat.setDefault("/chat/completions", toolScript([{ name: "wiki__slow", args: '{"ms":900}' }]));
      const res = await kept.fetch("/v1/responses", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "local", input: "x", stream: true, tools: [mcpTool()] }) });
      const text = await res.text();
      // Frames in order, a comment as ":".
      const frames = text.split("\n\n").filter(Boolean).map((f) => (f.startsWith(":") ? ":" : /"type":"([^"]+)"/.exec(f)![1]!));
      const inProgress = frames.indexOf("response.mcp_call.in_progress");
      const completed = frames.indexOf("response.mcp_call.completed");
      expect(inProgress).toBeGreaterThan(-1);
      expect(completed).toBeGreaterThan(inProgress);
      expect(frames.slice(inProgress, completed).filter((f) => f === ":").length).toBeGreaterThanOrEqual(2);
      const s = assertResponsesGrammar(parseSse(text).map((f) => f.data));
      expect(s.terminal!.type).toBe("response.completed");
    } finally {
      await kept.close(1000);
    }
  });
});
