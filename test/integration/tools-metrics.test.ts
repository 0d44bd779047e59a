/** The tool metrics tell the truth about a web search that timed out (outcome "timeout", as for an MCP call). */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { metricSample } from "../helpers/metrics-text.js";
import { startMockSearch, type MockSearch } from "../helpers/mock-search.js";
import { chatCompletion, startMockUpstream, type MockUpstream, type RecordedRequest, type Reply } from "../helpers/mock-upstream.js";
import { startTestRouter, type TestRouter } from "../helpers/router.js";

let chat: MockUpstream;
let search: MockSearch;
let router: TestRouter;

function model(rec: RecordedRequest): Reply {
  const messages = rec.body.messages as { role: string; content: unknown }[];
  if (messages.at(-1)!.role === "tool") return { kind: "json", body: chatCompletion(`told: ${String(messages.at(-1)!.content)}`) };
  return { kind: "json", body: chatCompletion(null, "mock", { tool_calls: [{ id: "call_s", type: "function", function: { name: "web_search", arguments: '{"query":"q"}' } }] }) };
}

beforeAll(async () => {
  chat = await startMockUpstream();
  chat.setDefault("/chat/completions", model);
  search = await startMockSearch(() => ({ hang: "headers" }));
  router = await startTestRouter({
    endpoints: [{ name: "box", url: chat.url, kind: "chat" }],
    models: { local: { endpoints: ["box"] } },
    tools: { web_search: { provider: "searxng", url: search.url, timeout: "150ms" }, mcp: { allowed_urls: ["http://127.0.0.1:*/*"], call_timeout: "300ms" } },
  });
});
afterAll(async () => {
  await router?.close();
  await chat?.close();
  await search?.close();
});

describe("tool_calls_total for web search", () => {
  it("a search that times out is counted with outcome timeout, and the model is told", async () => {
    const r = await router.client.responses.create({ model: "local", input: "x", tools: [{ type: "web_search" }] });
    expect(r.output[0]).toMatchObject({ type: "web_search_call", status: "failed" });
    expect(r.output_text).toContain("did not answer");
    const text = await (await router.fetch("/metrics")).text();
    expect(metricSample(text, "responses_router_tool_calls_total", { type: "web_search_call", server: "searxng", outcome: "timeout" })).toBe(1);
    expect(metricSample(text, "responses_router_tool_calls_total", { type: "web_search_call", server: "searxng", outcome: "error" })).toBeUndefined();
  });
});

describe("tool_calls_total for an MCP listing", () => {
  it("a server that never answers is counted with outcome timeout (the request is a 424)", async () => {
    const { createServer } = await import("node:http");
    const held: import("node:http").ServerResponse[] = [];
    const silent = createServer((req, res) => {
      req.resume();
      if (req.method === "GET") res.writeHead(200, { "content-type": "text/event-stream" });
      held.push(res);
    });
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
    const port = (silent.address() as import("node:net").AddressInfo).port;
    try {
      const err = await router.client.responses.create({ model: "local", input: "x", tools: [{ type: "mcp", server_label: "mute", server_url: `http://127.0.0.1:${port}/mcp`, require_approval: "never" }] }).catch((e) => e);
      expect(err.status).toBe(424);
      const text = await (await router.fetch("/metrics")).text();
      expect(metricSample(text, "responses_router_tool_calls_total", { type: "mcp_list_tools", server: `127.0.0.1:${port}`, outcome: "timeout" })).toBe(1);
    } finally {
      for (const r of held) r.destroy();
      silent.closeAllConnections();
      silent.close();
    }
  });
});
