/** The Vercel AI SDK (ai 7 + @ai-sdk/openai) with its hosted `openai.tools.mcp` and `webSearch` tools, through the router on a chat model. */
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, streamText } from "ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMcpServer, type TestMcpServer } from "../helpers/mcp-server.js";
import { startMockSearch, type MockSearch } from "../helpers/mock-search.js";
import { chatCompletion, chatTextChunks, chatToolCallChunks, startMockUpstream, type MockUpstream, type RecordedRequest, type Reply } from "../helpers/mock-upstream.js";
import { startTestRouter, type TestRouter } from "../helpers/router.js";

let chat: MockUpstream;
let mcp: TestMcpServer;
let search: MockSearch;
let router: TestRouter;

/** Calls the one hosted function it is offered, then answers with what it returned. */
function model(rec: RecordedRequest): Reply {
  const messages = rec.body.messages as { role: string; content: unknown }[];
  const result = messages.find((m) => m.role === "tool");
  if (result) {
    const text = `Answer: ${String(result.content).split("\n")[0]}`;
    return rec.body.stream ? { kind: "sse", frames: [...chatTextChunks([text]), "data: [DONE]\n\n"] } : { kind: "json", body: chatCompletion(text) };
  }
  const fn = (rec.body.tools as { function: { name: string } }[])[0]!.function.name;
  const args = fn === "web_search" ? '{"query":"q"}' : '{"text":"ai"}';
  if (rec.body.stream) return { kind: "sse", frames: chatToolCallChunks([{ id: "c1", name: fn, args: [args] }]) };
  return { kind: "json", body: chatCompletion(null, "mock", { tool_calls: [{ id: "c1", type: "function", function: { name: fn, arguments: args } }] }) };
}

beforeAll(async () => {
  chat = await startMockUpstream();
  chat.setDefault("/chat/completions", model);
  mcp = await startMcpServer();
  search = await startMockSearch(() => ({ json: { results: [{ url: "https://example.org/a", title: "A", content: "a" }] } }));
  router = await startTestRouter({
    endpoints: [{ name: "box", url: chat.url, kind: "chat" }],
    models: { local: { endpoints: ["box"] } },
    tools: { mcp: { allowed_urls: ["http://127.0.0.1:*/*"] }, web_search: { provider: "searxng", url: search.url } },
  });
});
afterAll(async () => {
  await router?.close();
  await Promise.all([chat?.close(), mcp?.close(), search?.close()]);
});

const provider = () => createOpenAI({ baseURL: `${router.url}/v1`, apiKey: "test" });

describe("AI SDK hosted tools through the router", () => {
  it("generateText with openai.tools.mcp: the router ran the call; the SDK parsed every item", async () => {
    const openai = provider();
    const r = await generateText({ model: openai.responses("local"), prompt: "echo", tools: { wiki: openai.tools.mcp({ serverLabel: "wiki", serverUrl: mcp.url, requireApproval: "never", allowedTools: ["echo"] }) } });
    expect(r.text).toBe("Answer: echo: ai");
    expect(mcp.calls).toContainEqual({ name: "echo", args: { text: "ai" } });
    expect(r.content.some((p) => p.type === "tool-result")).toBe(true);
  });

  it("streamText with openai.tools.mcp", async () => {
    const openai = provider();
    const r = streamText({ model: openai.responses("local"), prompt: "echo", tools: { wiki: openai.tools.mcp({ serverLabel: "wiki", serverUrl: mcp.url, requireApproval: "never", allowedTools: ["echo"] }) } });
    expect(await r.text).toBe("Answer: echo: ai");
  });

  it("generateText with openai.tools.webSearch: sources come back", async () => {
    const openai = provider();
    const r = await generateText({ model: openai.responses("local"), prompt: "search", tools: { web_search: openai.tools.webSearch({}) } });
    expect(r.text).toContain("Answer:");
    expect(r.sources.map((s) => (s as { url?: string }).url)).toContain("https://example.org/a");
  });
});
