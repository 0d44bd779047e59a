/**
 * The tool loop where it meets the rest of the router: the response cache, chains that move
 * between backend kinds (chat <-> anthropic, by previous_response_id and by a fallback in a
 * later round), the WebSocket (approval round trip, store false), per-key usage counting every
 * round, and operator servers on kind: openai. Real mock upstreams, a real MCP server, the
 * openai SDK as the client.
 */
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { anthropicError, message, messageReply, startAnthropicMock, streamReply, textBlock, thinkingBlock, toolUseBlock } from "../helpers/anthropic-mock.js";
import { assertResponsesGrammar } from "../helpers/grammar.js";
import { startMcpServer, type TestMcpServer } from "../helpers/mcp-server.js";
import { chatCompletion, chatTextChunks, chatToolCallChunks, nativeEvents, nativeResponse, startMockUpstream, upstreamError, type MockUpstream, type RecordedRequest, type Reply } from "../helpers/mock-upstream.js";
import { startTestRouter, type TestRouter } from "../helpers/router.js";
import { finalResponse, WsClient } from "../helpers/ws-client.js";
import { metricSample } from "../helpers/metrics-text.js";

let chat: MockUpstream;
let claude: MockUpstream;
let oai: MockUpstream;
let mcp: TestMcpServer;
let router: TestRouter;

/** The chat model calls `calls` first; once it sees tool results it answers with them. */
function chatTools(calls: { name: string; args: string }[]) {
  return (rec: RecordedRequest): Reply => {
    const messages = rec.body.messages as { role: string; content: unknown }[];
    if (messages.at(-1)!.role === "tool") {
      const text = `chat: ${messages.filter((m) => m.role === "tool").map((m) => String(m.content)).join(" | ")}`;
      return rec.body.stream ? { kind: "sse", frames: [...chatTextChunks([text]), "data: [DONE]\n\n"] } : { kind: "json", body: chatCompletion(text) };
    }
    if (rec.body.stream) return { kind: "sse", frames: chatToolCallChunks(calls.map((c, i) => ({ id: `call_${i}`, name: c.name, args: [c.args] }))) };
    return { kind: "json", body: chatCompletion(null, "mock", { tool_calls: calls.map((c, i) => ({ id: `call_${i}`, type: "function", function: { name: c.name, arguments: c.args } })) }) };
  };
}

/** Claude answers with what the last tool_result said, or plainly without one. */
function claudePlain(req: RecordedRequest): Reply {
  const last = (req.body.messages as { role: string; content: unknown }[]).at(-1)!;
  const blocks = Array.isArray(last.content) ? (last.content as { type: string; content?: unknown }[]) : [];
  const result = blocks.find((b) => b.type === "tool_result");
  if (result) {
    const text = typeof result.content === "string" ? result.content : (result.content as { text: string }[]).map((p) => p.text).join("");
    return messageReply(message([textBlock(`claude: ${text}`)]), req);
  }
  return messageReply(message([textBlock("claude plain")]), req);
}

const chatRequests = () => chat.requests.filter((r) => r.path === "/chat/completions");
const claudeRequests = () => claude.requests.filter((r) => r.path === "/messages");
const mcpTool = (extra: Record<string, unknown> = {}) => ({ type: "mcp" as const, server_label: "wiki", server_url: mcp.url, require_approval: "never" as const, ...extra });

beforeAll(async () => {
  chat = await startMockUpstream();
  claude = await startAnthropicMock();
  claude.setDefault("/messages", claudePlain);
  oai = await startMockUpstream();
  mcp = await startMcpServer();
  router = await startTestRouter({
    server: { api_keys: [{ name: "team", key: "sk-team-0123456789", role: "admin" }, { name: "narrow", key: "sk-narrow-0123456789", tools: ["ops"] }] },
    endpoints: [
      { name: "box", url: chat.url, kind: "chat" },
      { name: "claude", url: claude.url, kind: "anthropic", api_key: "sk-ant-test-0123456789" },
      { name: "oai", url: oai.url, kind: "openai", api_key: "sk-upstream-0123456789" },
    ],
    models: {
      local: { endpoints: ["box"], cache: { ttl: "1h" } },
      claude: { endpoints: ["claude"], upstream_model: "claude-upstream" },
      "local-fb": { endpoints: ["box"], fallbacks: ["claude"] },
      "gpt-4.1": { endpoints: ["oai"], cache: { ttl: "1h" } },
      mixed: { endpoints: ["box", "oai"] },
      "gpt-run": { endpoints: ["oai"], hosted_tools: "run" },
      "claude-fb": { endpoints: ["claude"], upstream_model: "claude-upstream", fallbacks: ["local"] },
    },
    routing: { retry: { attempts: 2 }, health: { failure_threshold: 100 } },
    tools: { mcp: { allowed_urls: ["http://127.0.0.1:*/*"], servers: [{ label: "ops", url: mcp.url }] } },
  }, { apiKey: "sk-team-0123456789" });
});

afterAll(async () => {
  await router?.close();
  await Promise.all([chat?.close(), claude?.close(), oai?.close(), mcp?.close()]);
});

beforeEach(() => {
  chat.requests.length = 0;
  claude.requests.length = 0;
  oai.requests.length = 0;
  mcp.calls.length = 0;
});

describe("the response cache and hosted tools", () => {
  it("a cached chat model runs the tool again on an identical request (never a stale tool answer)", async () => {
    chat.setDefault("/chat/completions", chatTools([{ name: "wiki__echo", args: '{"text":"c"}' }]));
    const body = { model: "local", input: "cache me", tools: [mcpTool()] };
    await router.client.responses.create(body);
    await router.client.responses.create(body);
    expect(mcp.calls).toHaveLength(2);
    expect(chatRequests()).toHaveLength(4);
  });

  it("a cached openai model does not serve a pass-through MCP or web search answer from the cache", async () => {
    const withCall = [{ id: "mcp_up1", type: "mcp_call", server_label: "wiki", name: "echo", arguments: "{}", output: "upstream ran it", error: null, status: "completed" }];
    const searched = [{ id: "ws_up1", type: "web_search_call", status: "completed", action: { type: "search", query: "q" } }];
    oai.setDefault("/responses", (rec) => ({ kind: "json", body: nativeResponse("from the tool", rec.body.model, "resp_up", rec.body.tools[0].type === "mcp" ? withCall : searched) }));
    const body = { model: "gpt-4.1", input: "pass through", tools: [{ type: "mcp" as const, server_label: "wiki", server_url: "https://mcp.example.com/mcp", require_approval: "never" as const }] };
    await router.client.responses.create(body);
    await router.client.responses.create(body);
    expect(oai.requests.filter((r) => r.path === "/responses")).toHaveLength(2);
    const search = { model: "gpt-4.1", input: "search", tools: [{ type: "web_search" as const }] };
    await router.client.responses.create(search);
    await router.client.responses.create(search);
    expect(oai.requests.filter((r) => r.path === "/responses")).toHaveLength(4);
  });
});

describe("chains across backend kinds", () => {
  it("a chat turn's mcp_call replays to anthropic as tool_use/tool_result, and back to chat", async () => {
    chat.setDefault("/chat/completions", chatTools([{ name: "wiki__echo", args: '{"text":"x-kind"}' }]));
    const first = await router.client.responses.create({ model: "local", input: "one", tools: [mcpTool()] });
    expect(first.output.map((i) => i.type)).toEqual(["mcp_list_tools", "mcp_call", "message"]);
    const second = await router.client.responses.create({ model: "claude", previous_response_id: first.id, input: "two" });
    expect(second.output_text).toBe("claude plain");
    const sent = claudeRequests()[0]!.body.messages as { role: string; content: any }[];
    const blocks = sent.flatMap((m) => (Array.isArray(m.content) ? m.content : []));
    const use = blocks.find((b: any) => b.type === "tool_use");
    expect(use).toMatchObject({ name: "wiki__echo", input: { text: "x-kind" } });
    const result = blocks.find((b: any) => b.type === "tool_result");
    expect(result.tool_use_id).toBe(use.id);
    expect(JSON.stringify(result.content)).toContain("echo: x-kind");
    chat.requests.length = 0;
    chat.setDefault("/chat/completions", () => ({ kind: "json", body: chatCompletion("chat plain") }));
    await router.client.responses.create({ model: "local", previous_response_id: second.id, input: "three" });
    const msgs = chatRequests()[0]!.body.messages;
    expect(msgs).toContainEqual(expect.objectContaining({ role: "tool", content: "echo: x-kind" }));
  });

  it("an anthropic turn's mcp_call replays to chat", async () => {
    claude.setDefault("/messages", (req) => {
      const last = (req.body.messages as { role: string; content: unknown }[]).at(-1)!;
      if (Array.isArray(last.content) && (last.content as { type: string }[]).some((b) => b.type === "tool_result")) return claudePlain(req);
      return messageReply(message([toolUseBlock("toolu_9", "wiki__echo", { text: "from-claude" })], { stop_reason: "tool_use" }), req);
    });
    try {
      const first = await router.client.responses.create({ model: "claude", input: "one", tools: [mcpTool()] });
      expect(first.output_text).toBe("claude: echo: from-claude");
      chat.setDefault("/chat/completions", () => ({ kind: "json", body: chatCompletion("chat plain") }));
      await router.client.responses.create({ model: "local", previous_response_id: first.id, input: "two" });
      const msgs = chatRequests()[0]!.body.messages;
      expect(msgs).toContainEqual(expect.objectContaining({ role: "assistant", tool_calls: [expect.objectContaining({ function: { name: "wiki__echo", arguments: '{"text":"from-claude"}' } })] }));
      expect(msgs).toContainEqual(expect.objectContaining({ role: "tool", content: "echo: from-claude" }));
    } finally {
      claude.setDefault("/messages", claudePlain);
    }
  });

  it("a later round that fails on chat falls back to anthropic, which sees the chat round's tool call and result", async () => {
    let n = 0;
    const script = chatTools([{ name: "wiki__echo", args: '{"text":"fb"}' }]);
    chat.setDefault("/chat/completions", (rec) => (n++ === 0 ? script(rec) : upstreamError(503, "down", null, "server_error")));
    const r = await router.client.responses.create({ model: "local-fb", input: "x", tools: [mcpTool()] });
    expect(r.status).toBe("completed");
    expect(r.model).toBe("local-fb");
    expect(r.output.map((i) => i.type)).toEqual(["mcp_list_tools", "mcp_call", "message"]);
    expect(r.output_text).toBe("claude: echo: fb");
    const sent = claudeRequests()[0]!.body;
    expect(sent.tools.map((t: { name: string }) => t.name)).toContain("wiki__echo");
  });

  it("the same over SSE: one response, the grammar holds across the fallback", async () => {
    let n = 0;
    const script = chatTools([{ name: "wiki__echo", args: '{"text":"fbs"}' }]);
    chat.setDefault("/chat/completions", (rec) => (n++ === 0 ? script(rec) : upstreamError(503, "down", null, "server_error")));
    const stream = await router.client.responses.create({ model: "local-fb", input: "x", stream: true, tools: [mcpTool()] });
    const events: any[] = [];
    for await (const e of stream) events.push(e);
    const s = assertResponsesGrammar(events as any);
    expect(s.terminal?.type).toBe("response.completed");
    expect(s.items.map((i) => i.type)).toEqual(["mcp_list_tools", "mcp_call", "message"]);
    expect(events.every((e) => !("response" in e) || e.response.model === "local-fb")).toBe(true);
  });
});

describe("per-key usage counts every round", () => {
  it("GET /v1/usage sums both rounds' tokens and counts one request", async () => {
    const before = await (await router.fetch("/v1/usage?key=team", { headers: { authorization: "Bearer sk-team-0123456789" } })).json();
    chat.setDefault("/chat/completions", chatTools([{ name: "wiki__echo", args: '{"text":"u"}' }]));
    const r = await router.client.responses.create({ model: "local", input: "usage", tools: [mcpTool()] });
    const after = await (await router.fetch("/v1/usage?key=team", { headers: { authorization: "Bearer sk-team-0123456789" } })).json();
    const tot = (u: any) => u.totals.find((t: any) => t.model === "local") ?? { requests: 0, input_tokens: 0, output_tokens: 0 };
    expect(tot(after).input_tokens - tot(before).input_tokens).toBe(r.usage!.input_tokens);
    expect(tot(after).output_tokens - tot(before).output_tokens).toBe(r.usage!.output_tokens);
    expect(r.usage!.input_tokens).toBe(10);
  });
});

describe("tokens spent by a response that then failed", () => {
  it("JSON: a later round that fails still charges the earlier rounds' tokens (tokens_total, the key's limits)", async () => {
    const tokens = async () => metricSample(await (await router.fetch("/metrics")).text(), "responses_router_tokens_total", { model: "local", type: "input", key: "team" }) ?? 0;
    const before = await tokens();
    let n = 0;
    const script = chatTools([{ name: "wiki__echo", args: '{"text":"spent"}' }]);
    chat.setDefault("/chat/completions", (rec) => (n++ === 0 ? script(rec) : upstreamError(503, "down", null, "server_error")));
    const err = await router.client.responses.create({ model: "local", input: "x", tools: [mcpTool()] }).catch((e) => e);
    expect(err.status).toBeGreaterThanOrEqual(500);
    expect(mcp.calls).toHaveLength(1);
    // round 1 (5 input tokens) was spent upstream: it is counted
    expect((await tokens()) - before).toBe(5);
  });
});

describe("a key allowed one operator server", () => {
  it("may use that server by its label, not a server of its own that it gives the same label (HTTP and WebSocket)", async () => {
    const narrow = new OpenAI({ baseURL: `${router.url}/v1`, apiKey: "sk-narrow-0123456789", maxRetries: 0 });
    chat.setDefault("/chat/completions", chatTools([{ name: "ops__echo", args: '{"text":"op"}' }]));
    const ok = await narrow.responses.create({ model: "local", input: "x", tools: [{ type: "mcp", server_label: "ops" } as any] });
    expect(ok.output_text).toBe("chat: echo: op");
    const own = { type: "mcp" as const, server_label: "ops", server_url: mcp.url, require_approval: "never" as const };
    const err = await narrow.responses.create({ model: "local", input: "x", tools: [own] }).catch((e) => e);
    expect(err.status).toBe(403);
    expect(err.error).toMatchObject({ code: "tool_not_allowed", param: "tools[0]" });
    // passed through to OpenAI, the label would name whatever server the client likes
    const passed = await narrow.responses.create({ model: "gpt-4.1", input: "x", tools: [{ ...own, server_url: "https://mcp.example.com/mcp" }] }).catch((e) => e);
    expect(passed.status).toBe(403);
    // nor by sending the tool in an additional_tools input item (passed through to OpenAI as it is)
    const extra = await narrow.responses.create({ model: "gpt-4.1", input: [{ type: "additional_tools", role: "developer", tools: [{ ...own, server_url: "https://mcp.example.com/mcp" }] } as any, { role: "user", content: "x" }] }).catch((e) => e);
    expect(extra.status).toBe(403);
    expect(extra.error).toMatchObject({ code: "tool_not_allowed", param: "input[0].tools[0]" });
    const search = await narrow.responses.create({ model: "gpt-4.1", input: [{ type: "additional_tools", role: "developer", tools: [{ type: "web_search" }] } as any, { role: "user", content: "x" }] }).catch((e) => e);
    expect(search.status).toBe(403);
    const ws = new WsClient(router.url, "sk-narrow-0123456789");
    try {
      const events = await ws.create({ model: "local", input: "x", tools: [own] });
      expect(events.at(-1)).toMatchObject({ type: "error", status: 403, error: { code: "tool_not_allowed" } });
    } finally {
      ws.close();
    }
  });
});

describe("over the WebSocket", () => {
  it("the approval round trip with store: false: the approved call runs on the next response.create", async () => {
    chat.setDefault("/chat/completions", chatTools([{ name: "wiki__echo", args: '{"text":"ws"}' }]));
    const ws = new WsClient(router.url, "sk-team-0123456789");
    try {
      const tools = [mcpTool({ require_approval: "always" })];
      const first = finalResponse(await ws.create({ model: "local", input: "approve me", store: false, tools }));
      expect(first.output.map((i: any) => i.type)).toEqual(["mcp_list_tools", "mcp_approval_request"]);
      expect(mcp.calls).toHaveLength(0);
      const request = first.output[1];
      const events = await ws.create({ model: "local", store: false, previous_response_id: first.id, input: [{ type: "mcp_approval_response", approval_request_id: request.id, approve: true }], tools });
      const second = finalResponse(events);
      expect(second.status).toBe("completed");
      expect(second.output.map((i: any) => i.type)).toEqual(["mcp_call", "message"]);
      expect(second.output[0]).toMatchObject({ approval_request_id: request.id, output: "echo: ws" });
      expect(second.output_text ?? second.output[1].content[0].text).toBe("chat: echo: ws");
      expect(mcp.calls).toEqual([{ name: "echo", args: { text: "ws" } }]);
      assertResponsesGrammar(events as any);
    } finally {
      ws.close();
    }
  });

  it("an anthropic tool loop streams over the socket as one response", async () => {
    claude.setDefault("/messages", (req) => {
      const last = (req.body.messages as { role: string; content: unknown }[]).at(-1)!;
      if (Array.isArray(last.content) && (last.content as { type: string }[]).some((b) => b.type === "tool_result")) return claudePlain(req);
      return messageReply(message([toolUseBlock("toolu_w", "wiki__add", { a: 1, b: 2 })], { stop_reason: "tool_use" }), req);
    });
    const ws = new WsClient(router.url, "sk-team-0123456789");
    try {
      const events = await ws.create({ model: "claude", input: "add", tools: [mcpTool()] });
      const s = assertResponsesGrammar(events as any);
      expect(s.items.map((i) => i.type)).toEqual(["mcp_list_tools", "mcp_call", "message"]);
      expect(finalResponse(events).output.at(-1).content[0].text).toBe("claude: 3");
    } finally {
      ws.close();
      claude.setDefault("/messages", claudePlain);
    }
  });
});

describe("kind: openai with the router's tools", () => {
  it("an operator server is run by the router; OpenAI gets a function and sees the result", async () => {
    oai.setDefault("/responses", (rec) => {
      const input = rec.body.input as { type?: string; output?: unknown }[];
      const out = input.find((i) => i.type === "function_call_output");
      const resp = out
        ? nativeResponse(`native: ${String(out.output)}`, rec.body.model, "resp_o2")
        : { ...nativeResponse("", rec.body.model, "resp_o1"), output: [{ id: "fc_o1", type: "function_call", status: "completed", call_id: "call_o", name: "ops__echo", arguments: '{"text":"op"}' }] };
      return rec.body.stream ? { kind: "sse", frames: nativeEvents(resp as ReturnType<typeof nativeResponse>) } : { kind: "json", body: resp };
    });
    const r = await router.client.responses.create({ model: "gpt-4.1", input: "ops", tools: [{ type: "mcp", server_label: "ops" } as any] });
    expect(r.output.map((i) => i.type)).toEqual(["mcp_list_tools", "mcp_call", "message"]);
    expect(r.output_text).toBe("native: echo: op");
    const sent = oai.requests.filter((q) => q.path === "/responses").map((q) => q.body);
    expect(sent).toHaveLength(2);
    expect(sent[0].tools.some((t: any) => t.type === "function" && t.name === "ops__echo")).toBe(true);
    expect(sent[0].tools.some((t: any) => t.type === "mcp")).toBe(false);
  });
});

/** The native model: calls `name` first; given its output, answers with it. */
function nativeTool(name: string, args: string) {
  return (rec: RecordedRequest): Reply => {
    const input = rec.body.input as { type?: string; output?: unknown }[];
    const out = input.find((i) => i.type === "function_call_output");
    const resp = out
      ? nativeResponse(`native: ${String(out.output)}`, rec.body.model, "resp_n2")
      : { ...nativeResponse("", rec.body.model, "resp_n1"), output: [{ id: "fc_n1", type: "function_call", status: "completed", call_id: "call_n", name, arguments: args }] };
    return rec.body.stream ? { kind: "sse", frames: nativeEvents(resp as ReturnType<typeof nativeResponse>) } : { kind: "json", body: resp };
  };
}

describe("more seams", () => {
  it("a pool that mixes chat and openai: a round that fails on chat fails over to openai, which gets function tools and the tool output", async () => {
    let n = 0;
    const script = chatTools([{ name: "wiki__echo", args: '{"text":"mix"}' }]);
    chat.setDefault("/chat/completions", (rec) => (n++ === 0 ? script(rec) : upstreamError(503, "down", null, "server_error")));
    oai.setDefault("/responses", nativeTool("wiki__echo", '{"text":"mix"}'));
    for (const stream of [false, true]) {
      n = 0;
      oai.requests.length = 0;
      mcp.calls.length = 0;
      const body = { model: "mixed", input: "x", tools: [mcpTool()] };
      let r: any;
      if (stream) {
        const events: any[] = [];
        for await (const e of await router.client.responses.create({ ...body, stream: true })) events.push(e);
        const s = assertResponsesGrammar(events);
        r = (s.terminal as any).response;
      } else r = await router.client.responses.create(body);
      expect(r.status).toBe("completed");
      expect(r.output.map((i: any) => i.type)).toEqual(["mcp_list_tools", "mcp_call", "message"]);
      expect(mcp.calls).toHaveLength(1);
      const sent = oai.requests.filter((q) => q.path === "/responses").map((q) => q.body);
      expect(sent.length).toBeGreaterThan(0);
      for (const b of sent) {
        expect(b.tools.some((t: any) => t.type === "mcp")).toBe(false);
        expect(b.tools.some((t: any) => t.type === "function" && t.name === "wiki__echo")).toBe(true);
        expect(JSON.stringify(b.input)).not.toContain("mcp_list_tools");
      }
      expect(r.tools).toEqual([expect.objectContaining({ type: "mcp", server_label: "wiki" })]);
    }
  });

  it("a conversation moves from chat to anthropic: Claude sees the tool call, and the server is listed once", async () => {
    const conv = await router.client.conversations.create({});
    chat.setDefault("/chat/completions", chatTools([{ name: "wiki__echo", args: '{"text":"conv"}' }]));
    const listed = mcp.listCount;
    await router.client.responses.create({ model: "local", conversation: conv.id, input: "one", tools: [mcpTool()] });
    claude.setDefault("/messages", (req) => {
      const last = (req.body.messages as { role: string; content: unknown }[]).at(-1)!;
      if (Array.isArray(last.content) && (last.content as { type: string }[]).some((b) => b.type === "tool_result")) return claudePlain(req);
      return messageReply(message([toolUseBlock("toolu_c", "wiki__echo", { text: "again" })], { stop_reason: "tool_use" }), req);
    });
    try {
      const second = await router.client.responses.create({ model: "claude", conversation: conv.id, input: "two", tools: [mcpTool()] });
      expect(second.output.map((i) => i.type)).toEqual(["mcp_call", "message"]);
      expect(mcp.listCount - listed).toBe(1);
      const first = claudeRequests()[0]!.body.messages as { role: string; content: any }[];
      const blocks = first.flatMap((m) => (Array.isArray(m.content) ? m.content : []));
      expect(blocks.find((b: any) => b.type === "tool_use")).toMatchObject({ name: "wiki__echo", input: { text: "conv" } });
    } finally {
      claude.setDefault("/messages", claudePlain);
    }
  });

  it("over the WebSocket with store: false, a chat tool turn continues on anthropic by previous_response_id", async () => {
    chat.setDefault("/chat/completions", chatTools([{ name: "wiki__echo", args: '{"text":"wsx"}' }]));
    const ws = new WsClient(router.url, "sk-team-0123456789");
    try {
      const first = finalResponse(await ws.create({ model: "local", input: "one", store: false, tools: [mcpTool()] }));
      expect(first.output.map((i: any) => i.type)).toEqual(["mcp_list_tools", "mcp_call", "message"]);
      const second = finalResponse(await ws.create({ model: "claude", input: "two", store: false, previous_response_id: first.id }));
      expect(second.status).toBe("completed");
      const blocks = (claudeRequests()[0]!.body.messages as { content: any }[]).flatMap((m) => (Array.isArray(m.content) ? m.content : []));
      expect(blocks.find((b: any) => b.type === "tool_result")).toBeDefined();
    } finally {
      ws.close();
    }
  });

  it("a background tool loop keeps the MCP credentials out of the stored response", async () => {
    chat.setDefault("/chat/completions", chatTools([{ name: "wiki__echo", args: '{"text":"bg"}' }]));
    const queued = await router.client.responses.create({ model: "local", input: "x", background: true, tools: [mcpTool({ headers: { "X-Secret": "bg-secret-hdr-1" }, authorization: "bg-secret-auth-2" })] });
    expect(JSON.stringify(queued)).not.toContain("bg-secret");
    let done: any = queued;
    const deadline = Date.now() + 10_000;
    while (!["completed", "failed"].includes(done.status) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      done = await router.client.responses.retrieve(queued.id);
    }
    expect(done.status).toBe("completed");
    expect(done.output_text).toBe("chat: echo: bg");
    expect(mcp.headers.some((h) => h["x-secret"] === "bg-secret-hdr-1" && h.authorization === "Bearer bg-secret-auth-2")).toBe(true);
    expect(JSON.stringify(done)).not.toContain("bg-secret");
    const streamed = await (await router.fetch(`/v1/responses/${queued.id}?stream=true`, { headers: { authorization: "Bearer sk-team-0123456789" } })).text();
    expect(streamed).not.toContain("bg-secret");
    const items = await router.client.responses.inputItems.list(queued.id);
    expect(JSON.stringify(items)).not.toContain("bg-secret");
  });
});

describe("fallback from anthropic to chat mid-loop", () => {
  it("Claude thinks and calls the tool, then is overloaded: chat finishes the response, seeing the call and its result (JSON and SSE)", async () => {
    for (const stream of [false, true]) {
      let n = 0;
      claude.setDefault("/messages", (req) => {
        if (n++ > 0) return anthropicError(529, "overloaded_error", "Overloaded");
        const msg = message([thinkingBlock("Use the tool.", "sig-fb"), toolUseBlock("toolu_fb", "wiki__echo", { text: "fb2" })], { stop_reason: "tool_use" });
        return req.body.stream ? streamReply(msg) : messageReply(msg, req);
      });
      chat.setDefault("/chat/completions", chatTools([]));
      chat.requests.length = 0;
      const body = { model: "claude-fb", input: "x", reasoning: { effort: "low" as const }, tools: [mcpTool()] };
      let r: any;
      if (stream) {
        const events: any[] = [];
        for await (const e of await router.client.responses.create({ ...body, stream: true })) events.push(e);
        r = (assertResponsesGrammar(events).terminal as any).response;
      } else r = await router.client.responses.create(body);
      expect(r.status).toBe("completed");
      expect(r.model).toBe("claude-fb");
      expect(r.output.map((i: any) => i.type)).toEqual(["mcp_list_tools", "reasoning", "mcp_call", "message"]);
      expect(r.output.at(-1).content[0].text).toBe("chat: echo: fb2");
      // Claude's signature was not asked for (include reasoning.encrypted_content): hidden in the whole answer, whichever kind ended it
      expect(r.output[1].encrypted_content).toBeUndefined();
      const msgs = chatRequests()[0]!.body.messages;
      expect(msgs).toContainEqual(expect.objectContaining({ role: "assistant", tool_calls: [expect.objectContaining({ function: { name: "wiki__echo", arguments: '{"text":"fb2"}' } })] }));
    }
    claude.setDefault("/messages", claudePlain);
  });
});

describe("tool items replayed to kind: openai", () => {
  it("mcp items keep the id the Responses input schema requires (a chat turn's, and OpenAI's own from a passed-through turn)", async () => {
    chat.setDefault("/chat/completions", chatTools([{ name: "wiki__echo", args: '{"text":"to-oai"}' }]));
    const first = await router.client.responses.create({ model: "local", input: "one", tools: [mcpTool()] });
    const withCall = [
      { id: "mcpl_up1", type: "mcp_list_tools", server_label: "web", tools: [{ name: "t", input_schema: {} }] },
      { id: "mcp_up1", type: "mcp_call", server_label: "web", name: "t", arguments: "{}", output: "upstream ran it", error: null, status: "completed" },
    ];
    oai.setDefault("/responses", (rec) => ({ kind: "json", body: nativeResponse("native", rec.body.model, "resp_up", rec.body.tools?.length ? withCall : []) }));
    const second = await router.client.responses.create({ model: "gpt-4.1", previous_response_id: first.id, input: "two", tools: [{ type: "mcp", server_label: "web", server_url: "https://mcp.example.com/mcp", require_approval: "never" }] });
    await router.client.responses.create({ model: "gpt-4.1", previous_response_id: second.id, input: "three" });
    const sent = oai.requests.filter((q) => q.path === "/responses").map((q) => q.body.input as any[]);
    for (const input of sent) {
      for (const item of input.filter((i) => ["mcp_list_tools", "mcp_call", "mcp_approval_request"].includes(i.type))) {
        expect(typeof item.id, `${item.type} has its id`).toBe("string");
      }
    }
    const types = sent.at(-1)!.map((i) => i.type);
    expect(types.filter((t) => t === "mcp_call")).toHaveLength(2);
  });
});

describe("an approval OpenAI asked for, answered on another kind", () => {
  it("the client approves OpenAI's mcp_approval_request on a chat model: the router runs the call, then chat answers", async () => {
    const asked = [
      { id: "mcpl_oa1", type: "mcp_list_tools", server_label: "wiki", tools: [{ name: "echo", input_schema: { type: "object", properties: { text: { type: "string" } } } }] },
      { id: "mcpr_oa1", type: "mcp_approval_request", server_label: "wiki", name: "echo", arguments: '{"text":"from-openai"}' },
    ];
    oai.setDefault("/responses", (rec) => ({ kind: "json", body: { ...nativeResponse("", rec.body.model, "resp_up"), output: asked } }));
    const tools = [mcpTool({ require_approval: "always" })];
    const first = await router.client.responses.create({ model: "gpt-4.1", input: "one", tools });
    expect(first.output.map((i) => i.type)).toEqual(["mcp_list_tools", "mcp_approval_request"]);
    const request = first.output[1] as any;
    chat.setDefault("/chat/completions", chatTools([]));
    const second = await router.client.responses.create({ model: "local", previous_response_id: first.id, tools, input: [{ type: "mcp_approval_response", approval_request_id: request.id, approve: true }] });
    expect(second.output.map((i) => i.type)).toEqual(["mcp_call", "message"]);
    expect(second.output[0]).toMatchObject({ approval_request_id: request.id, output: "echo: from-openai", status: "completed" });
    expect(second.output_text).toBe("chat: echo: from-openai");
    expect(mcp.calls).toEqual([{ name: "echo", args: { text: "from-openai" } }]);
  });
});

describe("item references to tool items", () => {
  it("a turn that references the stored mcp items by id (as the AI SDK sends them) replays them on anthropic and openai", async () => {
    chat.setDefault("/chat/completions", chatTools([{ name: "wiki__echo", args: '{"text":"ref"}' }]));
    const first = await router.client.responses.create({ model: "local", input: "one", tools: [mcpTool()] });
    const refs = first.output.map((i) => ({ type: "item_reference" as const, id: i.id! }));
    const input = [{ role: "user" as const, content: "one" }, ...refs, { role: "user" as const, content: "two" }];
    const second = await router.client.responses.create({ model: "claude", input });
    expect(second.output_text).toBe("claude plain");
    const blocks = (claudeRequests()[0]!.body.messages as { content: any }[]).flatMap((m) => (Array.isArray(m.content) ? m.content : []));
    expect(blocks.find((b: any) => b.type === "tool_use")).toMatchObject({ name: "wiki__echo", input: { text: "ref" } });
    oai.setDefault("/responses", (rec) => ({ kind: "json", body: nativeResponse("native", rec.body.model) }));
    await router.client.responses.create({ model: "gpt-4.1", input });
    const sent = oai.requests.filter((q) => q.path === "/responses").at(-1)!.body.input as any[];
    expect(sent.map((i) => i.type ?? "message")).toEqual(["message", "mcp_list_tools", "mcp_call", "message", "message"]);
    expect(sent[2]).toMatchObject({ id: first.output[1]!.id, output: "echo: ref" });
  });
});

describe("rounds replayed as the model made them", () => {
  it("two rounds of one call each reach round 3 as two assistant turns, each followed by its result", async () => {
    chat.setDefault("/chat/completions", (rec) => {
      const tools = (rec.body.messages as { role: string }[]).filter((m) => m.role === "tool").length;
      if (tools >= 2) return { kind: "json", body: chatCompletion("two rounds") };
      return { kind: "json", body: chatCompletion(null, "mock", { tool_calls: [{ id: `call_r${tools}`, type: "function", function: { name: "wiki__echo", arguments: `{"text":"r${tools}"}` } }] }) };
    });
    const r = await router.client.responses.create({ model: "local", input: "x", tools: [mcpTool()] });
    expect(r.output_text).toBe("two rounds");
    const third = chatRequests().at(-1)!.body.messages.slice(1).map((m: any) => (m.role === "assistant" ? `assistant:${m.tool_calls.length}` : m.role));
    expect(third).toEqual(["assistant:1", "tool", "assistant:1", "tool"]);
  });
});

describe("kind: openai with hosted_tools: run and a client server", () => {
  it("streamed: the router lists and runs the client's server, OpenAI sees a function and its output", async () => {
    oai.setDefault("/responses", nativeTool("wiki__echo", '{"text":"run"}'));
    oai.requests.length = 0;
    const events: any[] = [];
    for await (const e of await router.client.responses.create({ model: "gpt-run", input: "x", stream: true, tools: [mcpTool()] })) events.push(e);
    const s = assertResponsesGrammar(events);
    expect(s.items.map((i) => i.type)).toEqual(["mcp_list_tools", "mcp_call", "message"]);
    expect((s.items[2] as any).content[0].text).toBe("native: echo: run");
    const sent = oai.requests.filter((q) => q.path === "/responses").map((q) => q.body);
    expect(sent).toHaveLength(2);
    expect(sent.every((b) => b.tools.every((t: any) => t.type === "function"))).toBe(true);
    expect(sent[1].input.at(-1)).toMatchObject({ type: "function_call_output", output: "echo: run" });
  });
});

describe("usage rows after a fallback mid-loop", () => {
  it("count each round's tokens under the model that produced them, the request once", async () => {
    const usageOf = async () => (await (await router.fetch("/v1/usage?key=team", { headers: { authorization: "Bearer sk-team-0123456789" } })).json()) as any;
    const row = (u: any, model: string) => u.totals.find((t: any) => t.model === model) ?? { requests: 0, input_tokens: 0, output_tokens: 0 };
    const before = await usageOf();
    let n = 0;
    const script = chatTools([{ name: "wiki__echo", args: '{"text":"rows"}' }]);
    chat.setDefault("/chat/completions", (rec) => (n++ === 0 ? script(rec) : upstreamError(503, "down", null, "server_error")));
    claude.setDefault("/messages", claudePlain);
    const r = await router.client.responses.create({ model: "local-fb", input: "x", tools: [mcpTool()] });
    expect(r.output_text).toBe("claude: echo: rows");
    const after = await usageOf();
    const d = (model: string) => ({ requests: row(after, model).requests - row(before, model).requests, input: row(after, model).input_tokens - row(before, model).input_tokens });
    // round 1 on local-fb's chat endpoint (5 input tokens), round 2 on the claude fallback (12)
    expect(d("local-fb")).toEqual({ requests: 1, input: 5 });
    expect(d("claude")).toEqual({ requests: 0, input: 12 });
  });
});
