/**
 * Hosted web search run by the router on a chat model: a SearXNG-shaped search API on loopback,
 * a scripted chat upstream that asks for `web_search`, the openai SDK as the client.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { assertResponsesGrammar } from "../helpers/grammar.js";
import { startMockSearch, type MockSearch } from "../helpers/mock-search.js";
import { chatCompletion, chatTextChunks, chatToolCallChunks, nativeEvents, nativeResponse, startMockUpstream, type MockUpstream, type RecordedRequest, type Reply } from "../helpers/mock-upstream.js";
import { parseSse, startTestRouter, type TestRouter } from "../helpers/router.js";

let chat: MockUpstream;
let oai: MockUpstream;
let search: MockSearch;
let router: TestRouter;
let bare: TestRouter;

const RESULTS = [
  { url: "https://example.org/oslo", title: "Oslo weather", content: "Snow in Oslo today." },
  { url: "https://example.net/norway", title: "Norway news", content: "Cold week ahead." },
];

/** Searches once, then answers citing result 1 by number and result 2 by URL. */
function model(rec: RecordedRequest): Reply {
  const messages = rec.body.messages as { role: string; content: unknown }[];
  const tool = messages.find((m) => m.role === "tool");
  if (tool) {
    const text = `It snows [1]. See https://example.net/norway for more.`;
    return rec.body.stream ? { kind: "sse", frames: [...chatTextChunks([text.slice(0, 10), text.slice(10)]), "data: [DONE]\n\n"] } : { kind: "json", body: chatCompletion(text) };
  }
  if (rec.body.stream) return { kind: "sse", frames: chatToolCallChunks([{ id: "call_s", name: "web_search", args: ['{"query":', '"oslo weather"}'] }]) };
  return { kind: "json", body: chatCompletion(null, "mock", { tool_calls: [{ id: "call_s", type: "function", function: { name: "web_search", arguments: '{"query":"oslo weather"}' } }] }) };
}

/** The native model: a web_search function call, then (given its output) an answer citing [2]. */
function nativeModel(rec: RecordedRequest): Reply {
  const input = rec.body.input as { type?: string; output?: unknown }[];
  const out = input.find((i) => i.type === "function_call_output");
  const resp = out
    ? nativeResponse("Cold week [2].", rec.body.model, "resp_up2")
    : { ...nativeResponse("", rec.body.model, "resp_up1"), output: [{ id: "fc_up1", type: "function_call", status: "completed", call_id: "call_w", name: "web_search", arguments: '{"query":"norway"}' }] };
  return rec.body.stream ? { kind: "sse", frames: nativeEvents(resp as ReturnType<typeof nativeResponse>) } : { kind: "json", body: resp };
}

beforeAll(async () => {
  chat = await startMockUpstream();
  chat.setDefault("/chat/completions", model);
  oai = await startMockUpstream();
  oai.setDefault("/responses", nativeModel);
  search = await startMockSearch(() => ({ json: { results: RESULTS } }));
  const base = { endpoints: [{ name: "box", url: chat.url, kind: "chat" }, { name: "oai", url: oai.url, kind: "openai", api_key: "sk-x-0123456789" }], models: { local: { endpoints: ["box"] }, native: { endpoints: ["oai"] }, "native-run": { endpoints: ["oai"], hosted_tools: "run" } } };
  router = await startTestRouter({ ...base, tools: { web_search: { provider: "searxng", url: search.url } } });
  bare = await startTestRouter(base);
});
afterAll(async () => {
  await router?.close();
  await bare?.close();
  await chat?.close();
  await oai?.close();
  await search?.close();
});
beforeEach(() => {
  chat.requests.length = 0;
  oai.requests.length = 0;
  search.requests.length = 0;
});

describe("web search on a chat model", () => {
  it("JSON: web_search_call with sources only when included, url_citation annotations on the answer", async () => {
    const r = await router.client.responses.create({ model: "local", input: "weather in Oslo?", tools: [{ type: "web_search" }], include: ["web_search_call.action.sources"] });
    expect(r.output.map((i) => i.type)).toEqual(["web_search_call", "message"]);
    expect(r.output[0]).toMatchObject({ type: "web_search_call", status: "completed", action: { type: "search", query: "oslo weather", sources: [{ type: "url", url: "https://example.org/oslo" }, { type: "url", url: "https://example.net/norway" }] } });
    const part = (r.output[1] as any).content[0];
    expect(part.annotations.map((a: any) => [a.type, a.url])).toEqual([
      ["url_citation", "https://example.org/oslo"],
      ["url_citation", "https://example.net/norway"],
    ]);
    expect(part.text.slice(part.annotations[0].start_index, part.annotations[0].end_index)).toBe("[1]");
    expect(search.requests).toHaveLength(1);
    expect(search.requests[0]!.query.get("q")).toBe("oslo weather");
    // the model read the numbered results
    const toolMsg = chat.requests[1]!.body.messages.find((m: any) => m.role === "tool");
    expect(toolMsg.content).toContain("[1] Oslo weather");
    expect(chat.requests[0]!.body.tools.map((t: any) => t.function.name)).toEqual(["web_search"]);

    const plain = await router.client.responses.create({ model: "local", input: "weather in Oslo?", tools: [{ type: "web_search_preview" }] });
    expect((plain.output[0] as any).action.sources).toBeUndefined();
  });

  it("SSE: in_progress, searching, completed; annotation events; the grammar holds", async () => {
    const res = await router.fetch("/v1/responses", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "local", input: "x", stream: true, tools: [{ type: "web_search" }] }) });
    const events = parseSse(await res.text()).map((f) => f.data);
    const summary = assertResponsesGrammar(events);
    const types = events.map((e) => e.type);
    const at = (t: string) => types.indexOf(t);
    expect(at("response.web_search_call.in_progress")).toBeGreaterThan(0);
    expect(at("response.web_search_call.searching")).toBeGreaterThan(at("response.web_search_call.in_progress"));
    expect(at("response.web_search_call.completed")).toBeGreaterThan(at("response.web_search_call.searching"));
    expect(types.filter((t) => t === "response.output_text.annotation.added")).toHaveLength(2);
    expect(summary.items.map((i) => i.type)).toEqual(["web_search_call", "message"]);
    expect((summary.items[1] as any).content[0].annotations).toHaveLength(2);
  });

  it("the openai SDK's stream builds the cited answer", async () => {
    const final = await router.client.responses.stream({ model: "local", input: "x", tools: [{ type: "web_search" }] }).finalResponse();
    expect(final.output_text).toBe("It snows [1]. See https://example.net/norway for more.");
    expect((final.output[1] as any).content[0].annotations).toHaveLength(2);
  });

  it("a failing provider: the call is failed, the model is told, the response completes", async () => {
    search.reply = () => ({ status: 500, text: "boom" });
    try {
      const r = await router.client.responses.create({ model: "local", input: "x", tools: [{ type: "web_search" }] });
      expect(r.status).toBe("completed");
      expect(r.output[0]).toMatchObject({ type: "web_search_call", status: "failed" });
      expect(chat.requests[1]!.body.messages.find((m: any) => m.role === "tool").content).toContain("failed");
    } finally {
      search.reply = () => ({ json: { results: RESULTS } });
    }
  });

  it("without a provider configured, web search keeps today's behaviour (dropped on chat)", async () => {
    chat.setDefault("/chat/completions", (rec) => ({ kind: "json", body: chatCompletion("no tools") }));
    try {
      const r = await bare.client.responses.create({ model: "local", input: "x", tools: [{ type: "web_search" }] });
      expect(r.output_text).toBe("no tools");
      expect(chat.requests[0]!.body.tools).toBeUndefined();
    } finally {
      chat.setDefault("/chat/completions", model);
    }
  });

  it("kind: openai passes web_search through; with hosted_tools: run the router searches and the native model gets a function (streamed, cited)", async () => {
    oai.setDefault("/responses", (rec) => ({ kind: "json", body: nativeResponse("native search", rec.body.model) }));
    await router.client.responses.create({ model: "native", input: "x", tools: [{ type: "web_search" }] });
    expect(oai.requests[0]!.body.tools).toEqual([{ type: "web_search" }]);
    expect(search.requests).toHaveLength(0);

    oai.setDefault("/responses", nativeModel);
    oai.requests.length = 0;
    const res = await router.fetch("/v1/responses", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "native-run", input: "x", stream: true, tools: [{ type: "web_search" }] }) });
    const events = parseSse(await res.text()).map((f) => f.data);
    const s = assertResponsesGrammar(events);
    expect(s.items.map((i) => i.type)).toEqual(["web_search_call", "message"]);
    expect((s.items[1] as any).content[0].annotations).toEqual([expect.objectContaining({ type: "url_citation", url: "https://example.net/norway" })]);
    expect(oai.requests[0]!.body.tools).toEqual([expect.objectContaining({ type: "function", name: "web_search" })]);
    const replay = oai.requests[1]!.body.input as any[];
    expect(replay.find((i) => i.type === "function_call_output").output).toContain("[2] Norway news");
  });
});
