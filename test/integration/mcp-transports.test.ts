/**
 * Hosted MCP through every transport and store: the WebSocket, background mode, the Redis
 * store, the Agents SDK's hostedMcpTool; operator-defined servers on every kind; per-key
 * tool lists; the address guard; the tool metrics.
 */
import { Agent, OpenAIResponsesModel, hostedMcpTool, run, setTracingDisabled } from "@openai/agents";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import OpenAI from "openai";
import { Redis } from "ioredis";
import { until } from "../helpers/background.js";
import { assertResponsesGrammar } from "../helpers/grammar.js";
import { startMcpServer, type TestMcpServer } from "../helpers/mcp-server.js";
import { metricSample } from "../helpers/metrics-text.js";
import { chatCompletion, chatTextChunks, chatToolCallChunks, nativeEvents, nativeResponse, startMockUpstream, type MockUpstream, type RecordedRequest, type Reply } from "../helpers/mock-upstream.js";
import { startRedis, type RedisServerHandle } from "../helpers/redis-server.js";
import { startTestRouter, type TestRouter } from "../helpers/router.js";
import { WsClient } from "../helpers/ws-client.js";

let chat: MockUpstream;
let oai: MockUpstream;
let mcp: TestMcpServer;
let redis: RedisServerHandle;
let memory: TestRouter;
let onRedis: TestRouter;

/** The chat model: calls `wiki__echo` until it sees a tool result, then answers with it. */
function chatModel(rec: RecordedRequest): Reply {
  const messages = rec.body.messages as { role: string; content: unknown }[];
  const result = messages.filter((m) => m.role === "tool").at(-1);
  if (result) {
    const text = `Result: ${String(result.content)}`;
    return rec.body.stream ? { kind: "sse", frames: [...chatTextChunks([text.slice(0, 4), text.slice(4)]), "data: [DONE]\n\n"] } : { kind: "json", body: chatCompletion(text) };
  }
  const name = (rec.body.tools as { function: { name: string } }[] | undefined)?.find((t) => t.function.name.endsWith("__echo"))?.function.name ?? "none";
  if (rec.body.stream) return { kind: "sse", frames: chatToolCallChunks([{ id: "call_1", name, args: ['{"text"', ':"via"}'] }]) };
  return { kind: "json", body: chatCompletion(null, "mock", { tool_calls: [{ id: "call_1", type: "function", function: { name, arguments: '{"text":"via"}' } }] }) };
}

/** The native model (kind: openai): a function_call to the hosted tool, then a message quoting its output. */
function nativeModel(rec: RecordedRequest): Reply {
  const input = rec.body.input as { type?: string; output?: unknown }[];
  const out = input.find((i) => i.type === "function_call_output");
  const resp = out
    ? nativeResponse(`Native: ${String(out.output)}`, rec.body.model, "resp_up2")
    : { ...nativeResponse("", rec.body.model, "resp_up1"), output: [{ id: "fc_up1", type: "function_call", status: "completed", call_id: "call_n", name: "ops__echo", arguments: '{"text":"native"}' }] };
  return rec.body.stream ? { kind: "sse", frames: nativeEvents(resp as ReturnType<typeof nativeResponse>) } : { kind: "json", body: resp };
}

const config = (extra: Record<string, unknown> = {}) => ({
  endpoints: [
    { name: "box", url: chat.url, kind: "chat" },
    { name: "oai", url: oai.url, kind: "openai", api_key: "sk-upstream-secret-0123456789" },
  ],
  models: { local: { endpoints: ["box"] }, "gpt-4.1": { endpoints: ["oai"] } },
  server: {
    api_keys: [
      { name: "all", key: "key-all" },
      { name: "ops-only", key: "key-ops", tools: ["ops"] },
      { name: "none", key: "key-none", tools: [] },
    ],
  },
  tools: {
    mcp: {
      allowed_urls: ["http://127.0.0.1:*/*", "http://*.internal.test/*"],
      servers: [{ label: "ops", url: mcp.url, headers: { "X-Ops-Token": "ops-token-secret-789" } }],
    },
  },
  ...extra,
});

beforeAll(async () => {
  setTracingDisabled(true);
  chat = await startMockUpstream();
  oai = await startMockUpstream();
  mcp = await startMcpServer();
  redis = await startRedis();
  chat.setDefault("/chat/completions", chatModel);
  oai.setDefault("/responses", nativeModel);
  memory = await startTestRouter(config(), { apiKey: "key-all" });
  onRedis = await startTestRouter(config({ storage: { redis_url: redis.url, prefix: `rrmcp:${process.pid}:` } }), { apiKey: "key-all" });
});

afterAll(async () => {
  await memory?.close();
  await onRedis?.close();
  await chat?.close();
  await oai?.close();
  await mcp?.close();
  await redis?.stop();
});

beforeEach(() => {
  chat.requests.length = 0;
  oai.requests.length = 0;
  mcp.calls.length = 0;
});

const clientTool = () => ({ type: "mcp" as const, server_label: "wiki", server_url: mcp.url, require_approval: "never" as const });

describe.each([
  { store: "memory", router: () => memory },
  { store: "redis", router: () => onRedis },
])("store: $store", ({ router }) => {
  it("background: the job runs the loop; the stored response holds the tool items", async () => {
    const queued = await router().client.responses.create({ model: "local", input: "x", background: true, tools: [clientTool()] });
    expect(queued.status).toBe("queued");
    const done = await until(async () => {
      const r = await router().client.responses.retrieve(queued.id);
      return r.status === "completed" || r.status === "failed" ? r : null;
    }, "the background response");
    expect(done.status).toBe("completed");
    expect(done.output.map((i) => i.type)).toEqual(["mcp_list_tools", "mcp_call", "message"]);
    expect(done.output_text).toBe("Result: echo: via");
  });

  it("background with MCP credentials: the server gets them, the job store never holds them in clear", async () => {
    const tool = { ...clientTool(), headers: { "X-Bg": "bg-header-secret-111" }, authorization: "bg-token-secret-222" };
    // a slow model keeps the job (and its payload) in the store while the store is read
    chat.setDefault("/chat/completions", (rec) => {
      const reply = chatModel(rec);
      return reply.kind === "sse" ? { ...reply, delayMs: 60 } : reply;
    });
    try {
      const queued = await router().client.responses.create({ model: "local", input: "x", background: true, tools: [tool] });
      let dump = "";
      if (router() === onRedis) {
        const r = new Redis(redis.url);
        try {
          await until(async () => (await router().client.responses.retrieve(queued.id)).status === "in_progress", "the job to start");
          for (const key of await r.keys("*")) {
            const type = await r.type(key);
            if (type === "string") dump += await r.get(key);
            else if (type === "hash") dump += JSON.stringify(await r.hgetall(key));
            else if (type === "list") dump += JSON.stringify(await r.lrange(key, 0, -1));
            else if (type === "zset") dump += JSON.stringify(await r.zrange(key, 0, -1));
            else if (type === "stream") dump += JSON.stringify(await r.xrange(key, "-", "+"));
          }
        } finally {
          r.disconnect();
        }
        expect(dump).toContain("router_sealed_credentials");
        expect(dump).not.toContain("bg-header-secret-111");
        expect(dump).not.toContain("bg-token-secret-222");
      }
      const done = await until(async () => {
        const r = await router().client.responses.retrieve(queued.id);
        return r.status === "completed" || r.status === "failed" ? r : null;
      }, "the background response");
      expect(done.status).toBe("completed");
      expect(mcp.headers.some((h) => h["x-bg"] === "bg-header-secret-111" && h.authorization === "Bearer bg-token-secret-222")).toBe(true);
      expect(JSON.stringify(done)).not.toContain("secret-");
    } finally {
      chat.setDefault("/chat/completions", chatModel);
    }
  });

  it("a previous_response_id chain and a conversation replay the tool items", async () => {
    const first = await router().client.responses.create({ model: "local", input: "x", tools: [clientTool()] });
    chat.requests.length = 0;
    const second = await router().client.responses.create({ model: "local", input: "again", previous_response_id: first.id, tools: [clientTool()] });
    // the model already sees the earlier call and its result (replayed), so it answers at once; no new listing
    expect(second.output.map((i) => i.type)).toEqual(["message"]);
    expect(chat.requests[0]!.body.messages).toContainEqual(expect.objectContaining({ role: "tool", content: "echo: via" }));
    const conv = await router().client.conversations.create({});
    await router().client.responses.create({ model: "local", input: "c", conversation: conv.id, tools: [clientTool()] });
    const items = await router().client.conversations.items.list(conv.id, { order: "asc" });
    expect(items.data.map((i) => i.type)).toEqual(["message", "mcp_list_tools", "mcp_call", "message"]);
  });
});

describe("transports and clients", () => {
  it("WebSocket: one response over several rounds, the stream grammar intact", async () => {
    const ws = new WsClient(memory.url, "key-all");
    try {
      const events = await ws.create({ model: "local", input: "x", tools: [clientTool()] });
      const summary = assertResponsesGrammar(events as any);
      expect(events.filter((e) => e.type === "response.created")).toHaveLength(1);
      expect(summary.terminal?.type).toBe("response.completed");
      expect(summary.items.map((i) => i.type)).toEqual(["mcp_list_tools", "mcp_call", "message"]);
    } finally {
      ws.close();
    }
  });

  it("the Agents SDK runs an agent with a hostedMcpTool on a chat model, end to end (streamed and not)", async () => {
    const agent = new Agent({
      name: "Wiki",
      instructions: "Use the wiki.",
      model: new OpenAIResponsesModel(memory.client, "local"),
      tools: [hostedMcpTool({ serverLabel: "wiki", serverUrl: mcp.url, requireApproval: "never" })],
    });
    const result = await run(agent, "Echo via the wiki");
    expect(result.finalOutput).toBe("Result: echo: via");
    expect(mcp.calls).toEqual([{ name: "echo", args: { text: "via" } }]);
    expect(result.newItems.map((i) => i.type)).toContain("tool_call_item");

    mcp.calls.length = 0;
    const streamed = await run(agent, "Echo via the wiki", { stream: true });
    for await (const _ of streamed) void _;
    await streamed.completed;
    expect(streamed.error).toBeNull();
    expect(streamed.finalOutput).toBe("Result: echo: via");
    expect(mcp.calls).toHaveLength(1);
  });
});

describe("the Agents SDK's approval flow", () => {
  it("a hostedMcpTool that needs approval: onApproval approves, the SDK answers the request, the router runs the call", async () => {
    const asked: string[] = [];
    const agent = new Agent({
      name: "Wiki",
      instructions: "Use the wiki.",
      model: new OpenAIResponsesModel(memory.client, "local"),
      tools: [
        hostedMcpTool({
          serverLabel: "wiki",
          serverUrl: mcp.url,
          requireApproval: "always",
          onApproval: async (_ctx, item) => {
            asked.push((item.rawItem as { name?: string }).name ?? "?");
            return { approve: true };
          },
        }),
      ],
    });
    const result = await run(agent, "Echo via the wiki");
    expect(asked).toEqual(["echo"]);
    expect(mcp.calls).toEqual([{ name: "echo", args: { text: "via" } }]);
    expect(result.finalOutput).toBe("Result: echo: via");
  });
});

describe("the Agents SDK's interruptions", () => {
  it("without onApproval the run stops at the approval; state.approve() and run again finish it", async () => {
    const agent = new Agent({
      name: "Wiki",
      instructions: "Use the wiki.",
      model: new OpenAIResponsesModel(memory.client, "local"),
      tools: [hostedMcpTool({ serverLabel: "wiki", serverUrl: mcp.url, requireApproval: "always" })],
    });
    const first = await run(agent, "Echo via the wiki");
    expect(first.interruptions).toHaveLength(1);
    expect(mcp.calls).toHaveLength(0);
    for (const item of first.interruptions) first.state.approve(item);
    const second = await run(agent, first.state);
    expect(second.interruptions ?? []).toHaveLength(0);
    expect(mcp.calls).toEqual([{ name: "echo", args: { text: "via" } }]);
    expect(second.finalOutput).toBe("Result: echo: via");
  });
});

describe("which backend runs what", () => {
  it("an operator-defined server is run by the router on a kind: openai model too, with its headers", async () => {
    const r = await memory.client.responses.create({ model: "gpt-4.1", input: "x", tools: [{ type: "mcp", server_label: "ops", require_approval: "never" }] as any });
    expect(r.output.map((i) => i.type)).toEqual(["mcp_list_tools", "mcp_call", "message"]);
    expect(r.output_text).toBe("Native: echo: native");
    const sent = oai.requests.map((q) => q.body);
    expect(sent).toHaveLength(2);
    expect(sent[0].tools.map((t: any) => [t.type, t.name])).toContainEqual(["function", "ops__echo"]);
    expect(sent[0].tools.some((t: any) => t.type === "mcp")).toBe(false);
    expect(mcp.headers.some((h) => h["x-ops-token"] === "ops-token-secret-789")).toBe(true);
    expect(JSON.stringify(r)).not.toContain("ops-token-secret-789");
  });

  it("an operator server's session is shared across responses, and opened again after the server restarts", async () => {
    const opsTool = [{ type: "mcp", server_label: "ops", require_approval: "never" }] as any;
    await memory.client.responses.create({ model: "local", input: "x", tools: opsTool });
    const inits = mcp.inits;
    const r = await memory.client.responses.create({ model: "local", input: "x", tools: opsTool });
    expect(r.output_text).toBe("Result: echo: via");
    expect(mcp.inits).toBe(inits); // no new handshake: the shared session served it
    // a client that adds headers of its own gets a session of its own
    await memory.client.responses.create({ model: "local", input: "x", tools: [{ ...opsTool[0], headers: { "X-Mine": "1" } }] });
    expect(mcp.inits).toBe(inits + 1);

    const port = mcp.port;
    await mcp.close();
    mcp = await startMcpServer({ port });
    const again = await memory.client.responses.create({ model: "local", input: "x", tools: opsTool });
    expect(again.output_text).toBe("Result: echo: via");
    expect(mcp.calls).toHaveLength(1);
  });

  it("a client-named server on a kind: openai model passes through to the upstream", async () => {
    oai.setDefault("/responses", (rec) => ({ kind: "json", body: nativeResponse("passed", rec.body.model) }));
    try {
      await memory.client.responses.create({ model: "gpt-4.1", input: "x", tools: [clientTool()] });
      expect(oai.requests[0]!.body.tools[0]).toMatchObject({ type: "mcp", server_label: "wiki", server_url: mcp.url });
      expect(mcp.calls).toHaveLength(0);
    } finally {
      oai.setDefault("/responses", nativeModel);
    }
  });
});

describe("security", () => {
  const as = (key: string) => new OpenAI({ baseURL: `${memory.url}/v1`, apiKey: key, maxRetries: 0 });

  it("a key's tools list: server labels and types it names, nothing else", async () => {
    const ok = await as("key-ops").responses.create({ model: "local", input: "x", tools: [{ type: "mcp", server_label: "ops", require_approval: "never" }] as any });
    expect(ok.status).toBe("completed");
    const refused = await as("key-ops").responses.create({ model: "local", input: "x", tools: [clientTool()] }).catch((e) => e);
    expect(refused.status).toBe(403);
    expect(refused.message).toContain("'wiki'");
    expect(refused.error.param).toBe("tools[0]");
    const none = await as("key-none").responses.create({ model: "local", input: "x", tools: [{ type: "web_search" }] }).catch((e) => e);
    expect(none.status).toBe(403);
    expect(none.message).toContain("web_search");
  });

  it("a host that resolves to a private address is refused unless a pattern names it", async () => {
    // matches the wildcard pattern, but no DNS name resolves here; a literal private IP shows the rule
    const err = await memory.client.responses.create({ model: "local", input: "x", tools: [{ type: "mcp", server_label: "lan", server_url: "http://10.1.2.3/mcp", require_approval: "never" }] }).catch((e) => e);
    expect(err.status).toBe(400);
    expect(err.error.param).toBe("tools[0].server_url");
  });

  it("a streamed two-round response counts one time to first token, and its dropped tools once", async () => {
    const read = async () => {
      const text = await (await memory.fetch("/metrics")).text();
      return {
        ttft: metricSample(text, "responses_router_time_to_first_token_seconds_count", { model: "local", upstream: "box" }) ?? 0,
        dropped: metricSample(text, "responses_router_dropped_tools_total", { model: "local", tool_type: "code_interpreter" }) ?? 0,
      };
    };
    const before = await read();
    const final = await memory.client.responses.stream({ model: "local", input: "x", tools: [clientTool(), { type: "code_interpreter", container: { type: "auto" } }] }).finalResponse();
    expect(final.output.map((i) => i.type)).toEqual(["mcp_list_tools", "mcp_call", "message"]);
    expect(chat.requests).toHaveLength(2);
    const after = await read();
    expect(after.ttft - before.ttft).toBe(1);
    expect(after.dropped - before.dropped).toBe(1);
  });

  it("tokens: every round counts, under its own model and endpoint, and the response's usage is their sum", async () => {
    const tokens = async () => metricSample(await (await memory.fetch("/metrics")).text(), "responses_router_tokens_total", { model: "local", upstream: "box", type: "input", key: "all" }) ?? 0;
    const before = await tokens();
    const r = await memory.client.responses.create({ model: "local", input: "x", tools: [clientTool()] });
    expect(r.usage?.input_tokens).toBe(10); // 5 per round, two rounds
    expect((await tokens()) - before).toBe(10);
  });

  it("tool metrics: calls by type, server and outcome; duration", async () => {
    await memory.client.responses.create({ model: "local", input: "x", tools: [clientTool()] });
    const text = await (await memory.fetch("/metrics")).text();
    const host = new URL(mcp.url).host; // a client's server is counted by host, never by the label it chose
    expect(metricSample(text, "responses_router_tool_calls_total", { type: "mcp_call", server: host, outcome: "ok" })).toBeGreaterThanOrEqual(1);
    expect(metricSample(text, "responses_router_tool_call_duration_seconds_count", { type: "mcp_call", server: host })).toBeGreaterThanOrEqual(1);
    expect(metricSample(text, "responses_router_tool_calls_total", { type: "mcp_call", server: "wiki", outcome: "ok" })).toBeUndefined();
    await memory.client.responses.create({ model: "local", input: "x", tools: [{ type: "mcp", server_label: "ops", require_approval: "never" }] as any });
    const after = await (await memory.fetch("/metrics")).text();
    expect(metricSample(after, "responses_router_tool_calls_total", { type: "mcp_call", server: "ops", outcome: "ok" })).toBeGreaterThanOrEqual(1);
  });
});
