/**
 * What the tools return, on every kind and transport: an MCP tool whose result holds an image
 * or structured content (chat and anthropic), web search citations from an anthropic model and
 * over the WebSocket, an approval answered with the items sent back (store: false), a
 * background tool loop on anthropic, and docs/tools.md's web search example as a config.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { parseConfigText } from "../../src/config/load.js";
import { message, messageReply, sentMessages, startAnthropicMock, streamReply, textBlock, thinkingBlock, toolUseBlock, usage } from "../helpers/anthropic-mock.js";
import { assertResponsesGrammar } from "../helpers/grammar.js";
import { startMcpServer, type TestMcpServer } from "../helpers/mcp-server.js";
import { startMockSearch, type MockSearch } from "../helpers/mock-search.js";
import { chatCompletion, chatTextChunks, chatToolCallChunks, startMockUpstream, type MockUpstream, type RecordedRequest, type Reply } from "../helpers/mock-upstream.js";
import { parseSse, startTestRouter, type TestRouter } from "../helpers/router.js";
import { finalResponse, WsClient } from "../helpers/ws-client.js";

let chat: MockUpstream;
let claude: MockUpstream;
let mcp: TestMcpServer;
let search: MockSearch;
let router: TestRouter;

const RESULTS = [
  { url: "https://example.org/oslo", title: "Oslo weather", content: "Snow in Oslo today." },
  { url: "https://example.net/norway", title: "Norway news", content: "Cold week ahead." },
];

function chatTools(calls: { name: string; args: string }[], answer = (results: string[]) => `chat: ${results.join(" | ")}`) {
  return (rec: RecordedRequest): Reply => {
    const messages = rec.body.messages as { role: string; content: unknown }[];
    if (messages.at(-1)!.role === "tool") {
      const text = answer(messages.filter((m) => m.role === "tool").map((m) => String(m.content)));
      return rec.body.stream ? { kind: "sse", frames: [...chatTextChunks([text.slice(0, 5), text.slice(5)]), "data: [DONE]\n\n"] } : { kind: "json", body: chatCompletion(text) };
    }
    if (rec.body.stream) return { kind: "sse", frames: chatToolCallChunks(calls.map((c, i) => ({ id: `call_${i}`, name: c.name, args: [c.args] }))) };
    return { kind: "json", body: chatCompletion(null, "mock", { tool_calls: calls.map((c, i) => ({ id: `call_${i}`, type: "function", function: { name: c.name, arguments: c.args } })) }) };
  };
}

/** Claude calls `name` with `input` until a tool_result arrives, then answers `answer(result text)`. */
function claudeTool(name: string, input: unknown, answer: (result: string) => string) {
  return (req: RecordedRequest): Reply => {
    const last = (req.body.messages as { role: string; content: unknown }[]).at(-1)!;
    const result = Array.isArray(last.content) ? (last.content as { type: string; content?: unknown }[]).find((b) => b.type === "tool_result") : undefined;
    const msg = result
      ? message([textBlock(answer(typeof result.content === "string" ? result.content : JSON.stringify(result.content)))])
      : message([toolUseBlock("toolu_c1", name, input)], { stop_reason: "tool_use" });
    return req.body.stream ? streamReply(msg) : messageReply(msg, req);
  };
}

const mcpTool = (extra: Record<string, unknown> = {}) => ({ type: "mcp" as const, server_label: "wiki", server_url: mcp.url, require_approval: "never" as const, ...extra });
const claudeRequests = () => claude.requests.filter((r) => r.path === "/messages");

beforeAll(async () => {
  chat = await startMockUpstream();
  claude = await startAnthropicMock();
  mcp = await startMcpServer({ rich: true });
  search = await startMockSearch(() => ({ json: { results: RESULTS } }));
  router = await startTestRouter({
    endpoints: [
      { name: "box", url: chat.url, kind: "chat" },
      { name: "claude", url: claude.url, kind: "anthropic", api_key: "sk-ant-test-0123456789" },
    ],
    models: { local: { endpoints: ["box"] }, claude: { endpoints: ["claude"], upstream_model: "claude-upstream" } },
    tools: { mcp: { allowed_urls: ["http://127.0.0.1:*/*"] }, web_search: { provider: "searxng", url: search.url } },
  });
});

afterAll(async () => {
  await router?.close();
  await Promise.all([chat?.close(), claude?.close(), mcp?.close(), search?.close()]);
});

beforeEach(() => {
  chat.requests.length = 0;
  claude.requests.length = 0;
  mcp.calls.length = 0;
  search.requests.length = 0;
});

describe("MCP results that are not plain text", () => {
  it("an image part: the mcp_call output keeps the caption, chat and anthropic models get a valid tool result", async () => {
    chat.setDefault("/chat/completions", chatTools([{ name: "wiki__picture", args: "{}" }]));
    const r = await router.client.responses.create({ model: "local", input: "draw", tools: [mcpTool()] });
    expect(r.status).toBe("completed");
    const call = r.output[1] as any;
    expect(call).toMatchObject({ type: "mcp_call", name: "picture", status: "completed", error: null });
    expect(typeof call.output).toBe("string");
    expect(call.output).toContain("a red pixel");
    const tool = chat.requests.filter((q) => q.path === "/chat/completions")[1]!.body.messages.at(-1);
    expect(tool.role).toBe("tool");
    expect(String(tool.content)).toContain("a red pixel");

    claude.setDefault("/messages", claudeTool("wiki__picture", {}, (t) => `saw ${t.includes("a red pixel")}`));
    const c = await router.client.responses.create({ model: "claude", input: "draw", tools: [mcpTool()] });
    expect(c.output_text).toBe("saw true");
  });

  it("structured content: the output is the tool's JSON, on chat and on anthropic (streamed)", async () => {
    chat.setDefault("/chat/completions", chatTools([{ name: "wiki__weather", args: '{"city":"Oslo"}' }]));
    const r = await router.client.responses.create({ model: "local", input: "weather", tools: [mcpTool()] });
    expect(JSON.parse((r.output[1] as any).output)).toEqual({ city: "Oslo", celsius: -3 });
    claude.setDefault("/messages", claudeTool("wiki__weather", { city: "Oslo" }, (t) => `claude ${t}`));
    const res = await router.fetch("/v1/responses", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "claude", input: "weather", stream: true, tools: [mcpTool()] }) });
    const s = assertResponsesGrammar(parseSse(await res.text()).map((f) => f.data));
    expect(s.items.map((i) => i.type)).toEqual(["mcp_list_tools", "mcp_call", "message"]);
    expect((s.items[2] as any).content[0].text).toContain('"celsius":-3');
  });
});

describe("web search citations across kinds and transports", () => {
  it("anthropic, JSON and SSE: the web_search_call, then the cited answer with url_citation annotations", async () => {
    claude.setDefault("/messages", claudeTool("web_search", { query: "oslo weather" }, () => "It snows [1]. See https://example.net/norway."));
    const r = await router.client.responses.create({ model: "claude", input: "weather in Oslo?", tools: [{ type: "web_search" }], include: ["web_search_call.action.sources"] });
    expect(r.output.map((i) => i.type)).toEqual(["web_search_call", "message"]);
    expect((r.output[0] as any).action.sources.map((s: any) => s.url)).toEqual(RESULTS.map((x) => x.url));
    const part = (r.output[1] as any).content[0];
    expect(part.annotations.map((a: any) => a.url)).toEqual(["https://example.org/oslo", "https://example.net/norway"]);
    const sent = claudeRequests()[0]!.body;
    expect(sent.tools.map((t: any) => t.name)).toEqual(["web_search"]);

    const res = await router.fetch("/v1/responses", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "claude", input: "x", stream: true, tools: [{ type: "web_search" }] }) });
    const events = parseSse(await res.text()).map((f) => f.data);
    const s = assertResponsesGrammar(events as any);
    expect(events.filter((e) => e.type === "response.output_text.annotation.added")).toHaveLength(2);
    expect(events.map((e) => e.type)).toContain("response.web_search_call.searching");
    expect((s.items[1] as any).content[0].annotations).toHaveLength(2);
  });

  it("over the WebSocket on chat: search events, annotation events, the grammar holds", async () => {
    chat.setDefault("/chat/completions", chatTools([{ name: "web_search", args: '{"query":"oslo"}' }], () => "It snows [1]. See https://example.net/norway."));
    const ws = new WsClient(router.url);
    try {
      const events = await ws.create({ model: "local", input: "weather", tools: [{ type: "web_search" }] });
      const s = assertResponsesGrammar(events as any);
      expect(events.map((e) => e.type)).toContain("response.web_search_call.completed");
      expect(events.filter((e) => e.type === "response.output_text.annotation.added")).toHaveLength(2);
      expect(finalResponse(events).output[1].content[0].annotations).toHaveLength(2);
      expect(s.items.map((i) => i.type)).toEqual(["web_search_call", "message"]);
    } finally {
      ws.close();
    }
  });
});

describe("approvals and background with other features", () => {
  it("store: false, the items sent back: the approved call runs, then the model answers (chat and anthropic)", async () => {
    for (const model of ["local", "claude"]) {
      chat.setDefault("/chat/completions", chatTools([{ name: "wiki__echo", args: '{"text":"back"}' }]));
      claude.setDefault("/messages", claudeTool("wiki__echo", { text: "back" }, (t) => `chat: ${t}`));
      mcp.calls.length = 0;
      const tools = [mcpTool({ require_approval: "always" })];
      const first = await router.client.responses.create({ model, input: "echo back", store: false, tools });
      expect(first.output.map((i) => i.type)).toEqual(["mcp_list_tools", "mcp_approval_request"]);
      const request = first.output[1] as any;
      const second = await router.client.responses.create({
        model,
        store: false,
        tools,
        input: [{ role: "user", content: "echo back" }, ...(first.output as any[]), { type: "mcp_approval_response", approval_request_id: request.id, approve: true }],
      });
      expect(second.output.map((i) => i.type)).toEqual(["mcp_call", "message"]);
      expect(second.output_text).toBe("chat: echo: back");
      expect(mcp.calls).toEqual([{ name: "echo", args: { text: "back" } }]);
    }
  });

  it("a background tool loop on anthropic: queued, then completed with the tool items; its stream replays one response", async () => {
    claude.setDefault("/messages", claudeTool("wiki__add", { a: 20, b: 22 }, (t) => `sum ${t}`));
    const queued = await router.client.responses.create({ model: "claude", input: "add", background: true, tools: [mcpTool()] });
    expect(queued.status).toBe("queued");
    let done = queued;
    const deadline = Date.now() + 10_000;
    while (!["completed", "failed", "cancelled", "incomplete"].includes(done.status as string) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      done = await router.client.responses.retrieve(queued.id);
    }
    expect(done.status).toBe("completed");
    expect(done.output.map((i) => i.type)).toEqual(["mcp_list_tools", "mcp_call", "message"]);
    expect(done.output_text).toBe("sum 42");
    const res = await router.fetch(`/v1/responses/${queued.id}?stream=true`);
    const s = assertResponsesGrammar(parseSse(await res.text()).map((f) => f.data));
    expect(s.items.map((i) => i.type)).toEqual(["mcp_list_tools", "mcp_call", "message"]);
  });
});

describe("docs/tools.md", () => {
  it("the web search example is a valid config", () => {
    const readme = readFileSync(new URL("../../docs/tools.md", import.meta.url), "utf8");
    const section = readme.slice(readme.indexOf("## Web search"));
    const example = section.slice(section.indexOf("```yaml") + 7, section.indexOf("```", section.indexOf("```yaml") + 7));
    const base = "endpoints:\n  - { name: box, url: http://127.0.0.1:11434/v1, kind: chat }\nmodels:\n  local: { endpoints: [box] }\n";
    const cfg = parseConfigText(base + example, "docs/tools.md", { SEARCH_KEY: "k3y" });
    expect(cfg.tools.web_search).toMatchObject({ provider: "searxng", url: "http://127.0.0.1:8888", api_key: "k3y" });
  });
});

describe("anthropic with thinking and parallel hosted calls", () => {
  it("the next round sends the thinking, both tool_use blocks in one assistant turn, and both results in one user turn", async () => {
    claude.setDefault("/messages", (req) => {
      const last = (req.body.messages as { role: string; content: unknown }[]).at(-1)!;
      const done = Array.isArray(last.content) && (last.content as { type: string }[]).some((b) => b.type === "tool_result");
      const msg = done
        ? message([textBlock("both done")])
        : message([thinkingBlock("I will call both.", "sig-abc"), toolUseBlock("toolu_a", "wiki__echo", { text: "a" }), toolUseBlock("toolu_b", "wiki__add", { a: 1, b: 1 })], { stop_reason: "tool_use" });
      return req.body.stream ? streamReply(msg) : messageReply(msg, req);
    });
    for (const stream of [false, true]) {
      claude.requests.length = 0;
      const body = { model: "claude", input: "both", reasoning: { effort: "low" as const }, tools: [mcpTool()] };
      if (stream) {
        const events: any[] = [];
        for await (const e of await router.client.responses.create({ ...body, stream: true })) events.push(e);
        assertResponsesGrammar(events);
      } else {
        const r = await router.client.responses.create(body);
        expect(r.output.map((i) => i.type)).toEqual(["mcp_list_tools", "reasoning", "mcp_call", "mcp_call", "message"]);
      }
      const sent = sentMessages(claude);
      expect(sent).toHaveLength(2);
      const messages = sent[1].messages as { role: string; content: any[] }[];
      const assistant = messages.filter((m) => m.role === "assistant");
      expect(assistant).toHaveLength(1);
      expect(assistant[0]!.content.map((b) => b.type)).toEqual(["thinking", "tool_use", "tool_use"]);
      expect(assistant[0]!.content[0]).toMatchObject({ thinking: "I will call both.", signature: "sig-abc" });
      expect(messages.at(-1)!.content.map((b) => b.type)).toEqual(["tool_result", "tool_result"]);
    }
  });

  it("a hosted call next to a client function call: the next turn (function output sent back) keeps them in one assistant turn", async () => {
    claude.setDefault("/messages", (req) => {
      const msgs = req.body.messages as { role: string; content: any[] }[];
      const results = msgs.at(-1)!.content.filter((b: any) => b.type === "tool_result");
      const msg = results.length
        ? message([textBlock("all done")])
        : message([thinkingBlock("Two calls.", "sig-mix"), toolUseBlock("toolu_m", "wiki__echo", { text: "m" }), toolUseBlock("toolu_f", "get_time", {})], { stop_reason: "tool_use" });
      return messageReply(msg, req);
    });
    claude.requests.length = 0;
    const tools = [mcpTool(), { type: "function" as const, name: "get_time", parameters: { type: "object", properties: {} }, strict: false }];
    const first = await router.client.responses.create({ model: "claude", input: "mix", reasoning: { effort: "low" }, tools });
    expect(first.output.map((i) => i.type)).toEqual(["mcp_list_tools", "reasoning", "mcp_call", "function_call"]);
    const fc = first.output[3] as any;
    const second = await router.client.responses.create({ model: "claude", previous_response_id: first.id, reasoning: { effort: "low" }, tools, input: [{ type: "function_call_output", call_id: fc.call_id, output: "noon" }] });
    expect(second.output_text).toBe("all done");
    const sent = sentMessages(claude);
    const messages = sent.at(-1).messages as { role: string; content: any[] }[];
    const assistant = messages.filter((m) => m.role === "assistant");
    expect(assistant).toHaveLength(1);
    expect(assistant[0]!.content.map((b) => b.type)).toEqual(["thinking", "tool_use", "tool_use"]);
    expect(messages.at(-1)!.content.map((b) => b.type)).toEqual(["tool_result", "tool_result"]);
  });
});

describe("credentials and clients on anthropic", () => {
  it("MCP headers and authorization never appear in any streamed event (SSE and WebSocket)", async () => {
    claude.setDefault("/messages", claudeTool("wiki__echo", { text: "s" }, (t) => `ok ${t}`));
    const tool = mcpTool({ headers: { "X-Secret": "evt-secret-hdr-1" }, authorization: "evt-secret-auth-2" });
    const res = await router.fetch("/v1/responses", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "claude", input: "x", stream: true, tools: [tool] }) });
    const text = await res.text();
    expect(text).toContain("response.completed");
    expect(text).not.toContain("evt-secret");
    const ws = new WsClient(router.url);
    try {
      const events = await ws.create({ model: "claude", input: "x", tools: [tool] });
      expect(events.at(-1)!.type).toBe("response.completed");
      expect(JSON.stringify(events)).not.toContain("evt-secret");
    } finally {
      ws.close();
    }
    expect(mcp.headers.some((h) => h.authorization === "Bearer evt-secret-auth-2")).toBe(true);
  });

  it("the Agents SDK runs a hostedMcpTool agent on an anthropic model", async () => {
    const { Agent, OpenAIResponsesModel, hostedMcpTool, run, setTracingDisabled } = await import("@openai/agents");
    setTracingDisabled(true);
    claude.setDefault("/messages", claudeTool("wiki__echo", { text: "agent" }, (t) => `Agent saw ${t}`));
    const agent = new Agent({ name: "Wiki", instructions: "Use the wiki.", model: new OpenAIResponsesModel(router.client, "claude"), tools: [hostedMcpTool({ serverLabel: "wiki", serverUrl: mcp.url, requireApproval: "never" })] });
    const result = await run(agent, "Echo via the wiki");
    expect(result.finalOutput).toBe("Agent saw echo: agent");
    const streamed = await run(agent, "Echo via the wiki", { stream: true });
    for await (const _ of streamed) void _;
    await streamed.completed;
    expect(streamed.error).toBeNull();
    expect(streamed.finalOutput).toBe("Agent saw echo: agent");
  });
});

describe("tool_choice naming a hosted tool", () => {
  it("{type: mcp, server_label, name} forces that tool in the first round, then auto (chat and anthropic)", async () => {
    chat.setDefault("/chat/completions", chatTools([{ name: "wiki__add", args: '{"a":1,"b":2}' }]));
    const r = await router.client.responses.create({ model: "local", input: "x", tools: [mcpTool()], tool_choice: { type: "mcp", server_label: "wiki", name: "add" } });
    expect(r.output_text).toBe("chat: 3");
    expect(r.tool_choice).toEqual({ type: "mcp", server_label: "wiki", name: "add" });
    const sent = chat.requests.filter((q) => q.path === "/chat/completions").map((q) => q.body);
    expect(sent[0].tool_choice).toEqual({ type: "function", function: { name: "wiki__add" } });
    expect(sent[1].tool_choice).toBe("auto");

    claude.setDefault("/messages", claudeTool("wiki__add", { a: 2, b: 2 }, (t) => `claude ${t}`));
    const c = await router.client.responses.create({ model: "claude", input: "x", tools: [mcpTool()], tool_choice: { type: "mcp", server_label: "wiki", name: "add" } });
    expect(c.output_text).toBe("claude 4");
    const msgs = sentMessages(claude);
    expect(msgs[0].tool_choice).toEqual({ type: "tool", name: "wiki__add" });
    expect(msgs[1].tool_choice?.type ?? "auto").toBe("auto");
  });

  it("{type: web_search} forces the search, not a client function beside it", async () => {
    chat.setDefault("/chat/completions", chatTools([{ name: "web_search", args: '{"query":"q"}' }], () => "done"));
    const fn = { type: "function" as const, name: "get_time", parameters: { type: "object", properties: {} }, strict: false };
    await router.client.responses.create({ model: "local", input: "x", tools: [{ type: "web_search" }, fn], tool_choice: { type: "web_search" } as any });
    const sent = chat.requests.filter((q) => q.path === "/chat/completions").map((q) => q.body);
    expect(sent[0].tool_choice).toEqual({ type: "function", function: { name: "web_search" } });
  });
});

describe("bounds on anthropic", () => {
  it("max_tool_calls with two parallel calls: one runs, one is not run, and the next round is a valid Messages request without hosted tools", async () => {
    claude.setDefault("/messages", (req) => {
      const last = (req.body.messages as { role: string; content: any[] }[]).at(-1)!;
      const done = last.content.some((b: any) => b.type === "tool_result");
      const msg = done ? message([textBlock("bounded")]) : message([toolUseBlock("toolu_1", "wiki__echo", { text: "1" }), toolUseBlock("toolu_2", "wiki__echo", { text: "2" })], { stop_reason: "tool_use" });
      return messageReply(msg, req);
    });
    claude.requests.length = 0;
    const r = await router.client.responses.create({ model: "claude", input: "x", max_tool_calls: 1, tools: [mcpTool()] });
    expect(r.output.map((i) => [i.type, (i as any).status])).toEqual([["mcp_list_tools", undefined], ["mcp_call", "completed"], ["mcp_call", "incomplete"], ["message", "completed"]]);
    expect(mcp.calls).toHaveLength(1);
    const sent = sentMessages(claude);
    expect(sent).toHaveLength(2);
    expect(sent[1].messages.at(-1).content.map((b: any) => b.type)).toEqual(["tool_result", "tool_result"]);
    expect(sent[1].tool_choice?.type).toBe("none");
  });

  it("the round bound over the WebSocket: incomplete, the grammar holds", async () => {
    claude.setDefault("/messages", (req) => streamReply(message([toolUseBlock(`toolu_${req.body.messages.length}`, "wiki__echo", { text: "again" })], { stop_reason: "tool_use" })));
    const ws = new WsClient(router.url);
    try {
      const events = await ws.create({ model: "claude", input: "loop", tools: [mcpTool()] });
      const s = assertResponsesGrammar(events as any);
      expect(events.at(-1)!.type).toBe("response.incomplete");
      expect(finalResponse(events).incomplete_details).toEqual({ reason: "max_output_tokens" });
      expect(s.items.filter((i) => i.type === "mcp_call").length).toBeGreaterThan(1);
    } finally {
      ws.close();
    }
  });
});

describe("web search sources on retrieval", () => {
  it("GET with include[]=web_search_call.action.sources shows the sources of a response created without it", async () => {
    chat.setDefault("/chat/completions", chatTools([{ name: "web_search", args: '{"query":"oslo"}' }], () => "It snows [1]."));
    const r = await router.client.responses.create({ model: "local", input: "weather", tools: [{ type: "web_search" }] });
    expect((r.output[0] as any).action.sources).toBeUndefined();
    const plain = await router.client.responses.retrieve(r.id);
    expect((plain.output[0] as any).action.sources).toBeUndefined();
    const withSources = await router.client.responses.retrieve(r.id, { include: ["web_search_call.action.sources"] });
    expect((withSources.output[0] as any).action.sources?.map((s: any) => s.url)).toEqual(RESULTS.map((x) => x.url));
    const items = await router.client.responses.inputItems.list(r.id);
    expect(items.data.length).toBeGreaterThan(0);

    // streamed (SSE and WebSocket) without include: no sources in any event; retrieval with include has them
    const res = await router.fetch("/v1/responses", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "local", input: "weather", stream: true, tools: [{ type: "web_search" }] }) });
    const events = parseSse(await res.text()).map((f) => f.data);
    assertResponsesGrammar(events);
    expect(JSON.stringify(events)).not.toContain('"sources"');
    const id = events[0].response.id;
    const later = await router.client.responses.retrieve(id, { include: ["web_search_call.action.sources"] });
    expect((later.output[0] as any).action.sources).toHaveLength(2);
    const ws = new WsClient(router.url);
    try {
      const wsEvents = await ws.create({ model: "local", input: "weather", tools: [{ type: "web_search" }] });
      expect(wsEvents.at(-1)!.type).toBe("response.completed");
      expect(JSON.stringify(wsEvents)).not.toContain('"sources"');
      const included = await ws.create({ model: "local", input: "weather", tools: [{ type: "web_search" }], include: ["web_search_call.action.sources"] });
      expect(finalResponse(included).output[0].action.sources).toHaveLength(2);
    } finally {
      ws.close();
    }
  });
});

describe("usage summed over an anthropic tool loop", () => {
  it("keeps the prompt-cache figures: cached_tokens and cache_write_tokens are the rounds' sums", async () => {
    claude.setDefault("/messages", (req) => {
      const last = (req.body.messages as { role: string; content: any[] }[]).at(-1)!;
      const done = last.content.some((b: any) => b.type === "tool_result");
      const u = usage({ input_tokens: 10, cache_creation_input_tokens: done ? 0 : 100, cache_read_input_tokens: done ? 100 : 0, output_tokens: 5 });
      return messageReply(done ? message([textBlock("cached")], { usage: u }) : message([toolUseBlock("toolu_u", "wiki__echo", { text: "u" })], { stop_reason: "tool_use", usage: u }), req);
    });
    const r = await router.client.responses.create({ model: "claude", input: "x", tools: [mcpTool()] });
    expect(r.usage).toMatchObject({ input_tokens: 220, output_tokens: 10, total_tokens: 230, input_tokens_details: { cached_tokens: 100, cache_write_tokens: 100 } });
  });
});

describe("structured output with a tool loop on anthropic", () => {
  it("the model calls the MCP tool, then answers through the answer tool: output_text is the JSON (JSON and SSE)", async () => {
    claude.setDefault("/messages", (req) => {
      const last = (req.body.messages as { role: string; content: any[] }[]).at(-1)!;
      const result = last.content.find((b: any) => b.type === "tool_result");
      const answerTool = (req.body.tools as { name: string }[]).find((t) => !t.name.startsWith("wiki__"))!.name;
      const msg = result
        ? message([toolUseBlock("toolu_ans", answerTool, { said: result.content })], { stop_reason: "tool_use" })
        : message([toolUseBlock("toolu_s", "wiki__echo", { text: "json" })], { stop_reason: "tool_use" });
      return req.body.stream ? streamReply(msg) : messageReply(msg, req);
    });
    const text = { format: { type: "json_schema" as const, name: "out", schema: { type: "object", properties: { said: { type: "string" } }, required: ["said"], additionalProperties: false }, strict: true } };
    const r = await router.client.responses.create({ model: "claude", input: "x", text, tools: [mcpTool()] });
    expect(r.output.map((i) => i.type)).toEqual(["mcp_list_tools", "mcp_call", "message"]);
    expect(JSON.parse(r.output_text)).toEqual({ said: "echo: json" });
    const events: any[] = [];
    for await (const e of await router.client.responses.create({ model: "claude", input: "x", text, tools: [mcpTool()], stream: true })) events.push(e);
    const s = assertResponsesGrammar(events);
    expect(JSON.parse((s.items.at(-1) as any).content[0].text)).toEqual({ said: "echo: json" });
  });
});

describe("input_tokens with hosted tools", () => {
  it("counts a request that names an MCP server and web search on chat and anthropic (200, not an error)", async () => {
    claude.setDefault("/messages/count_tokens", () => ({ kind: "json", body: { input_tokens: 42 } }));
    for (const model of ["local", "claude"]) {
      const res = await router.fetch("/v1/responses/input_tokens", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model, input: "hello", tools: [mcpTool(), { type: "web_search" }] }) });
      const body: any = await res.json();
      expect(res.status, JSON.stringify(body)).toBe(200);
      expect(body.object).toBe("response.input_tokens");
      expect(body.input_tokens).toBeGreaterThan(0);
    }
  });
});

describe("approvals on anthropic", () => {
  it("streamed approval request, then approved by conversation: the call runs and Claude answers", async () => {
    claude.setDefault("/messages", claudeTool("wiki__echo", { text: "conv-ok" }, (t) => `claude ${t}`));
    const conv = await router.client.conversations.create({});
    const tools = [mcpTool({ require_approval: "always" })];
    const events: any[] = [];
    for await (const e of await router.client.responses.create({ model: "claude", conversation: conv.id, input: "x", tools, stream: true })) events.push(e);
    const s = assertResponsesGrammar(events);
    expect(s.items.map((i) => i.type)).toEqual(["mcp_list_tools", "mcp_approval_request"]);
    const request = s.items[1] as any;
    expect(request.arguments).toBe('{"text":"conv-ok"}');
    const second = await router.client.responses.create({ model: "claude", conversation: conv.id, tools, input: [{ type: "mcp_approval_response", approval_request_id: request.id, approve: true }] });
    expect(second.output.map((i) => i.type)).toEqual(["mcp_call", "message"]);
    expect(second.output_text).toBe("claude echo: conv-ok");
    expect(mcp.calls).toEqual([{ name: "echo", args: { text: "conv-ok" } }]);
    sentMessages(claude);
  });
});

describe("cancel on anthropic", () => {
  it("a background loop cancelled while Claude streams round 2 ends cancelled with the tool items kept", async () => {
    claude.setDefault("/messages", (req) => {
      const last = (req.body.messages as { role: string; content: any[] }[]).at(-1)!;
      if (!last.content.some((b: any) => b.type === "tool_result")) return streamReply(message([toolUseBlock("toolu_cx", "wiki__echo", { text: "cx" })], { stop_reason: "tool_use" }));
      const slow = streamReply(message([textBlock("a slow answer that will be cut")])) as Extract<Reply, { kind: "sse" }>;
      return { ...slow, delayMs: 400 };
    });
    const queued = await router.client.responses.create({ model: "claude", input: "x", background: true, tools: [mcpTool()] });
    const deadline = Date.now() + 8000;
    while (claudeRequests().length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(claudeRequests()).toHaveLength(2);
    const cancelled = await router.client.responses.cancel(queued.id);
    expect(cancelled.status).toBe("cancelled");
    const stored = await router.client.responses.retrieve(queued.id);
    expect(stored.status).toBe("cancelled");
    expect(stored.output.slice(0, 2).map((i) => [i.type, (i as any).status])).toEqual([["mcp_list_tools", undefined], ["mcp_call", "completed"]]);
    const replay = await (await router.fetch(`/v1/responses/${queued.id}?stream=true`)).text();
    const events = parseSse(replay).map((f) => f.data);
    expect(events.filter((e) => e.type === "response.created")).toHaveLength(1);
  });
});

describe("MCP failures over the WebSocket", () => {
  it("a refused server_url is an error event with status 400 naming it; an unreachable server ends with mcp_list_tools.failed then response.failed", async () => {
    const ws = new WsClient(router.url);
    try {
      const refused = await ws.create({ model: "claude", input: "x", tools: [{ type: "mcp", server_label: "evil", server_url: "http://10.1.2.3/mcp", require_approval: "never" }] });
      expect(refused.at(-1)).toMatchObject({ type: "error", status: 400, error: { param: "tools[0].server_url" } });
      const down = await ws.create({ model: "claude", input: "x", tools: [{ type: "mcp", server_label: "down", server_url: "http://127.0.0.1:9/mcp", require_approval: "never" }] });
      const types = down.map((e) => e.type);
      expect(types).toContain("response.mcp_list_tools.failed");
      expect(types.at(-1)).toBe("response.failed");
      expect(finalResponse(down).error).toMatchObject({ code: "external_connector_error" });
      expect(finalResponse(down).error.message).toContain("'down'");
      // the socket is still usable
      claude.setDefault("/messages", (req) => messageReply(message([textBlock("still here")]), req));
      expect(finalResponse(await ws.create({ model: "claude", input: "y" })).output[0].content[0].text).toBe("still here");
    } finally {
      ws.close();
    }
  });
});

describe("MCP and web search in one round", () => {
  it("both run, the answer cites the search, the grammar holds (SSE)", async () => {
    chat.setDefault("/chat/completions", chatTools([{ name: "wiki__echo", args: '{"text":"both"}' }, { name: "web_search", args: '{"query":"oslo"}' }], () => "Both done, see https://example.org/oslo."));
    const events: any[] = [];
    for await (const e of await router.client.responses.create({ model: "local", input: "x", stream: true, tools: [mcpTool(), { type: "web_search" }] })) events.push(e);
    const s = assertResponsesGrammar(events);
    expect(s.items.map((i) => i.type)).toEqual(["mcp_list_tools", "mcp_call", "web_search_call", "message"]);
    const ann = events.filter((e) => e.type === "response.output_text.annotation.added");
    expect(ann).toHaveLength(1);
    expect(ann[0].output_index).toBe(3);
    expect(ann[0].annotation).toMatchObject({ type: "url_citation", url: "https://example.org/oslo" });
    expect(mcp.calls).toEqual([{ name: "echo", args: { text: "both" } }]);
    expect(search.requests).toHaveLength(1);
  });
});
