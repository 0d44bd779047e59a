/**
 * The hosted `file_search` tool run by the router over its vector stores (`runtime.files`, here
 * the in-memory test double of the FileLibrary contract), on chat, anthropic and openai
 * endpoints: real mock upstreams on loopback, the openai SDK as the client; JSON, SSE, the
 * WebSocket and a background job; results only when included, file citations, replay on the
 * next turn, 404s before any upstream call, the key's tool allow-list; `input_file` by `file_id`.
 */
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ApiError } from "../../src/ops/errors.js";
import { message, messageReply, startAnthropicMock, textBlock, toolUseBlock } from "../helpers/anthropic-mock.js";
import { until } from "../helpers/background.js";
import { InMemoryFileLibrary } from "../helpers/file-library.js";
import { assertResponsesGrammar } from "../helpers/grammar.js";
import { metricSample } from "../helpers/metrics-text.js";
import { chatCompletion, chatTextChunks, chatToolCallChunks, nativeEvents, nativeResponse, startMockUpstream, type MockUpstream, type RecordedRequest, type Reply } from "../helpers/mock-upstream.js";
import { parseSse, startTestRouter, type TestRouter } from "../helpers/router.js";
import { waitUntil } from "../helpers/wait.js";
import { WsClient } from "../helpers/ws-client.js";

const TEAM = "sk-team-0123456789abcdef";
const OTHER = "sk-other-0123456789abcdef";
const NARROW = "sk-narrow-0123456789abcdef";
const OPS = "sk-ops-0123456789abcdef";

const RUNBOOK = "# Pump runbook\n\nERR-4711 means the pump stalled. Run pumpctl reset.\n\nERR-5000 means the valve leaks.";
const ANSWER = "Run pumpctl reset [1]. Source: runbook.md.";

let chat: MockUpstream;
let claude: MockUpstream;
let oai: MockUpstream;
let router: TestRouter;
let files: InMemoryFileLibrary;
const client = (key: string) => new OpenAI({ baseURL: `${router.url}/v1`, apiKey: key, maxRetries: 0 });
let team: OpenAI;

/** Searches the files once, then answers citing result 1 by number and the runbook by name. */
function chatModel(rec: RecordedRequest): Reply {
  const messages = rec.body.messages as { role: string; content: unknown }[];
  if (messages.some((m) => m.role === "tool") || !rec.body.tools) {
    return rec.body.stream ? { kind: "sse", frames: [...chatTextChunks([ANSWER.slice(0, 12), ANSWER.slice(12)]), "data: [DONE]\n\n"] } : { kind: "json", body: chatCompletion(ANSWER) };
  }
  if (rec.body.stream) return { kind: "sse", frames: chatToolCallChunks([{ id: "call_f", name: "file_search", args: ['{"query":', '"ERR-4711 pump"}'] }]) };
  return { kind: "json", body: chatCompletion(null, "mock", { tool_calls: [{ id: "call_f", type: "function", function: { name: "file_search", arguments: '{"query":"ERR-4711 pump"}' } }] }) };
}

function claudeModel(rec: RecordedRequest): Reply {
  const blocks = (rec.body.messages as { content: unknown }[]).flatMap((m) => (Array.isArray(m.content) ? (m.content as { type: string }[]) : []));
  if (blocks.some((b) => b.type === "tool_result") || !rec.body.tools) return messageReply(message([textBlock(ANSWER)]), rec);
  return messageReply(message([toolUseBlock("toolu_f", "file_search", { query: "ERR-4711 pump" })], { stop_reason: "tool_use" }), rec);
}

function nativeModel(rec: RecordedRequest): Reply {
  const input = Array.isArray(rec.body.input) ? (rec.body.input as { type?: string }[]) : [];
  const resp =
    input.some((i) => i.type === "function_call_output") || !rec.body.tools
      ? nativeResponse(ANSWER, rec.body.model, "resp_up2")
      : { ...nativeResponse("", rec.body.model, "resp_up1"), output: [{ id: "fc_up1", type: "function_call", status: "completed", call_id: "call_n", name: "file_search", arguments: '{"query":"ERR-4711 pump"}' }] };
  return rec.body.stream ? { kind: "sse", frames: nativeEvents(resp as ReturnType<typeof nativeResponse>) } : { kind: "json", body: resp };
}

beforeAll(async () => {
  chat = await startMockUpstream();
  chat.setDefault("/chat/completions", chatModel);
  claude = await startAnthropicMock();
  claude.setDefault("/messages", claudeModel);
  oai = await startMockUpstream();
  oai.setDefault("/responses", nativeModel);
  oai.setDefault("/responses/input_tokens", { kind: "json", body: { object: "response.input_tokens", input_tokens: 42 } });
  files = new InMemoryFileLibrary()
    .addFile({ id: "file-runbook", owner: "team", filename: "runbook.md", text: RUNBOOK, attributes: { team: "ops" } })
    .addFile({ id: "file-faq", owner: "team", filename: "faq.txt", text: "Office hours are 9 to 5.\n\nThe pump room is in the basement.", attributes: { team: "hr" } })
    .addFile({ id: "file-notes", owner: "team", filename: "notes.md", mime: "text/markdown", text: "The door code is 1234." })
    .addFile({ id: "file-pdf", owner: "team", filename: "spec.pdf", mime: "application/pdf", bytes: Buffer.from("%PDF-1.4 fake") })
    .addFile({ id: "file-theirs", owner: "other", filename: "theirs.md", text: "not yours" })
    .addStore({ id: "vs_team", owner: "team", fileIds: ["file-runbook", "file-faq"] })
    .addStore({ id: "vs_other", owner: "other", fileIds: ["file-theirs"] });
  router = await startTestRouter(
    {
      endpoints: [
        { name: "box", url: chat.url, kind: "chat" },
        { name: "claude", url: claude.url, kind: "anthropic", api_key: "sk-ant-test-0123456789" },
        { name: "oai", url: oai.url, kind: "openai", api_key: "sk-up-0123456789" },
      ],
      models: { local: { endpoints: ["box"] }, claude: { endpoints: ["claude"], upstream_model: "claude-upstream" }, native: { endpoints: ["oai"] }, "native-drop": { endpoints: ["oai"], hosted_tools: "drop" } },
      server: {
        api_keys: [
          { name: "team", key: TEAM },
          { name: "other", key: OTHER },
          { name: "narrow", key: NARROW, tools: ["web_search"] },
          { name: "ops", key: OPS, role: "admin" },
        ],
      },
    },
    { fileLibrary: files },
  );
  team = client(TEAM);
});
afterAll(async () => {
  await router?.close();
  await Promise.all([chat?.close(), claude?.close(), oai?.close()]);
});
beforeEach(() => {
  chat.requests.length = 0;
  claude.requests.length = 0;
  oai.requests.length = 0;
  files.searches.length = 0;
  files.reads.length = 0;
  files.failWith = null;
});

const tool = (extra: Record<string, unknown> = {}) => ({ type: "file_search" as const, vector_store_ids: ["vs_team"], ...extra });

function post(key: string, body: Record<string, unknown>): Promise<Response> {
  return router.fetch("/v1/responses", { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${key}` }, body: JSON.stringify(body) });
}

describe("file_search on a chat model", () => {
  it("JSON: a file_search_call (results null unless included), file citations, the model read numbered passages", async () => {
    const r = await team.responses.create({ model: "local", input: "What does ERR-4711 mean?", tools: [tool({ max_num_results: 3, filters: { type: "eq", key: "team", value: "ops" }, ranking_options: { score_threshold: 0.2 } })] });
    expect(r.output.map((i) => i.type)).toEqual(["file_search_call", "message"]);
    expect(r.output[0]).toEqual({ id: expect.stringMatching(/^fs_/), type: "file_search_call", status: "completed", queries: ["ERR-4711 pump"], results: null });
    expect(r.output_text).toBe(ANSWER);
    const annotations = (r.output[1] as any).content[0].annotations;
    expect(annotations).toEqual([
      { type: "file_citation", file_id: "file-runbook", filename: "runbook.md", index: ANSWER.indexOf("[1]") },
      { type: "file_citation", file_id: "file-runbook", filename: "runbook.md", index: ANSWER.indexOf("runbook.md") + "runbook.md".length },
    ]);
    // the request's settings reached the library, scoped by the key
    expect(files.searches).toEqual([expect.objectContaining({ owner: "team", vectorStoreIds: ["vs_team"], query: "ERR-4711 pump", maxNumResults: 3, filters: { type: "eq", key: "team", value: "ops" }, rankingOptions: { score_threshold: 0.2 } })]);
    // the model saw one function with one query parameter, then the numbered passages
    const first = chat.requests[0]!.body;
    expect(first.tools).toEqual([{ type: "function", function: expect.objectContaining({ name: "file_search", parameters: expect.objectContaining({ required: ["query"], properties: { query: expect.objectContaining({ type: "string" }) } }) }) }]);
    const toolMsg = chat.requests[1]!.body.messages.find((m: any) => m.role === "tool");
    expect(toolMsg.content).toContain("[1] runbook.md (file_id: file-runbook)\nERR-4711 means the pump stalled. Run pumpctl reset.");
    expect(toolMsg.content).not.toContain("Office hours");

    // the stored response keeps the results: GET with include shows them, without it they are null
    const kept = await team.responses.retrieve(r.id, { include: ["file_search_call.results"] });
    expect((kept.output[0] as any).results[0]).toEqual({ file_id: "file-runbook", filename: "runbook.md", score: 1, text: "ERR-4711 means the pump stalled. Run pumpctl reset.", attributes: { team: "ops" } });
    expect(((await team.responses.retrieve(r.id)).output[0] as any).results).toBeNull();
  });

  it("include: file_search_call.results shows the hits on the answer", async () => {
    const r = await team.responses.create({ model: "local", input: "x", tools: [tool()], include: ["file_search_call.results"] });
    const call = r.output[0] as any;
    expect(call.results.map((h: any) => [h.file_id, h.score])).toEqual([
      ["file-runbook", 1],
      ["file-runbook", 0.5],
      ["file-faq", 0.5],
    ]);
  });

  it("SSE: added, in_progress, searching, completed, done in OpenAI's order; annotation events; the grammar holds", async () => {
    const res = await post(TEAM, { model: "local", input: "x", stream: true, tools: [tool()] });
    const events = parseSse(await res.text()).map((f) => f.data);
    const s = assertResponsesGrammar(events);
    const call = events.filter((e) => e.item_id === s.items[0]!.id || e.item?.id === s.items[0]!.id).map((e) => e.type);
    expect(call).toEqual(["response.output_item.added", "response.file_search_call.in_progress", "response.file_search_call.searching", "response.file_search_call.completed", "response.output_item.done"]);
    expect(events.find((e) => e.type === "response.output_item.added" && e.item.type === "file_search_call").item).toMatchObject({ status: "in_progress", queries: [] });
    expect(events.filter((e) => e.type === "response.output_text.annotation.added").map((e) => e.annotation.type)).toEqual(["file_citation", "file_citation"]);
    expect(s.items[0]).toMatchObject({ type: "file_search_call", status: "completed", queries: ["ERR-4711 pump"], results: null });
    expect((s.terminal as any).response.output[0].results).toBeNull();

    const included = parseSse(await (await post(TEAM, { model: "local", input: "x", stream: true, tools: [tool()], include: ["file_search_call.results"] })).text()).map((f) => f.data);
    const done = assertResponsesGrammar(included);
    expect((done.items[0] as any).results).toHaveLength(3);
    expect((done.terminal as any).response.output[0].results).toHaveLength(3);
  });

  it("tool_choice {type: file_search} forces the function in the first round", async () => {
    const r = await team.responses.create({ model: "local", input: "x", tools: [tool()], tool_choice: { type: "file_search" } });
    expect(r.output.map((i) => i.type)).toEqual(["file_search_call", "message"]);
    expect(r.tool_choice).toEqual({ type: "file_search" });
    expect(chat.requests[0]!.body.tool_choice).toEqual({ type: "function", function: { name: "file_search" } });
    expect(chat.requests[1]!.body.tool_choice).toBe("auto");
  });

  it("the openai SDK's stream builds the cited answer", async () => {
    const final = await team.responses.stream({ model: "local", input: "x", tools: [tool()] }).finalResponse();
    expect(final.output_text).toBe(ANSWER);
    expect((final.output[1] as any).content[0].annotations.map((a: any) => a.file_id)).toEqual(["file-runbook", "file-runbook"]);
  });

  it("over the WebSocket", async () => {
    const ws = new WsClient(router.url, TEAM);
    try {
      const events = await ws.create({ model: "local", input: "x", tools: [tool()] } as any);
      const s = assertResponsesGrammar(events as any);
      expect(s.terminal?.type).toBe("response.completed");
      expect(s.items.map((i) => i.type)).toEqual(["file_search_call", "message"]);
      expect(events.map((e) => e.type)).toContain("response.file_search_call.searching");
    } finally {
      ws.ws.close();
    }
  });

  it("as a background job", async () => {
    const queued = await team.responses.create({ model: "local", input: "x", tools: [tool()], background: true });
    const done = await until(async () => {
      const r = await team.responses.retrieve(queued.id);
      return r.status === "completed" ? r : null;
    }, "the background response");
    expect(done.output.map((i) => i.type)).toEqual(["file_search_call", "message"]);
    expect((done.output[1] as any).content[0].annotations).toHaveLength(2);
  });

  it("a failing library: the call is failed, the model is told, the response completes; metrics count it", async () => {
    const before = metricSample(await (await router.fetch("/metrics")).text(), "responses_router_file_search_calls_total", { outcome: "error" }) ?? 0;
    files.failWith = new ApiError(503, "the index is down", { type: "server_error" });
    const r = await team.responses.create({ model: "local", input: "x", tools: [tool()] });
    expect(r.status).toBe("completed");
    expect(r.output[0]).toMatchObject({ type: "file_search_call", status: "failed", results: null });
    expect(chat.requests[1]!.body.messages.find((m: any) => m.role === "tool").content).toBe("The file search failed: the index is down");
    const after = metricSample(await (await router.fetch("/metrics")).text(), "responses_router_file_search_calls_total", { outcome: "error" });
    expect(after).toBe(before + 1);
  });

  it("searches and their embedding tokens are counted (metrics and the key's usage)", async () => {
    const metrics = async () => {
      const text = await (await router.fetch("/metrics")).text();
      return { ok: metricSample(text, "responses_router_file_search_calls_total", { outcome: "ok" }) ?? 0, tokens: metricSample(text, "responses_router_file_search_embedding_tokens_total", { key: "team" }) ?? 0 };
    };
    // Without tools.file_search.embedding_model the key's usage names the tool itself.
    const used = async () => {
      const body = (await (await router.fetch("/v1/usage", { headers: { authorization: `Bearer ${OPS}` } })).json()) as { totals: { key: string; model: string; requests: number; input_tokens: number }[] };
      return body.totals.find((t) => t.key === "team" && t.model === "file_search") ?? { requests: 0, input_tokens: 0 };
    };
    const before = await metrics();
    const usedBefore = await used();
    await team.responses.create({ model: "local", input: "x", tools: [tool()] });
    const after = await metrics();
    expect(after.ok).toBe(before.ok + 1);
    expect(after.tokens).toBe(before.tokens + 2); // "ERR-4711 pump": two words, as the double reports
    await waitUntil("the embedding tokens in the key's usage", async () => (await used()).input_tokens === usedBefore.input_tokens + 2);
    expect((await used()).requests).toBe(0); // the request itself is counted under its model
  });
});

describe("file_search on anthropic and openai endpoints", () => {
  it("kind: anthropic, JSON and stream: a tool_use the router runs, a tool_result with the passages", async () => {
    const r = await team.responses.create({ model: "claude", input: "x", tools: [tool()] });
    expect(r.output.map((i) => i.type)).toEqual(["file_search_call", "message"]);
    expect((r.output[1] as any).content[0].annotations).toHaveLength(2);
    const sent = claude.requests.filter((q) => q.path === "/messages").map((q) => q.body);
    expect(sent[0].tools.map((t: any) => t.name)).toEqual(["file_search"]);
    const result = sent[1].messages.flatMap((m: any) => (Array.isArray(m.content) ? m.content : [])).find((b: any) => b.type === "tool_result");
    expect(JSON.stringify(result.content)).toContain("[1] runbook.md");

    const events = parseSse(await (await post(TEAM, { model: "claude", input: "x", stream: true, tools: [tool()] })).text()).map((f) => f.data);
    const s = assertResponsesGrammar(events);
    expect(s.items.map((i) => i.type)).toEqual(["file_search_call", "message"]);
    expect(events.map((e) => e.type)).toContain("response.file_search_call.completed");
  });

  it("kind: openai: the router runs it whatever hosted_tools says (OpenAI cannot see the router's stores), JSON and stream", async () => {
    for (const model of ["native", "native-drop"]) {
      oai.requests.length = 0;
      const r = await team.responses.create({ model, input: "x", tools: [tool()] });
      expect(r.output.map((i) => i.type)).toEqual(["file_search_call", "message"]);
      expect(oai.requests[0]!.body.tools).toEqual([expect.objectContaining({ type: "function", name: "file_search" })]);
      const out = (oai.requests[1]!.body.input as any[]).find((i) => i.type === "function_call_output");
      expect(out.output).toContain("[1] runbook.md");
    }
    const s = assertResponsesGrammar(parseSse(await (await post(TEAM, { model: "native", input: "x", stream: true, tools: [tool()] })).text()).map((f) => f.data));
    expect(s.items.map((i) => i.type)).toEqual(["file_search_call", "message"]);
    expect((s.items[1] as any).content[0].annotations[0]).toEqual({ type: "file_citation", file_id: "file-runbook", filename: "runbook.md", index: ANSWER.indexOf("[1]") });
  });

  it("a later turn replays the file_search_call as the call and the passages it found, on every kind", async () => {
    for (const model of ["local", "claude", "native"]) {
      const first = await team.responses.create({ model, input: "What does ERR-4711 mean?", tools: [tool()] });
      chat.requests.length = 0;
      claude.requests.length = 0;
      oai.requests.length = 0;
      const next = await team.responses.create({ model, input: "And then?", previous_response_id: first.id });
      expect(next.status).toBe("completed");
      if (model === "local") {
        const messages = chat.requests[0]!.body.messages;
        expect(messages.find((m: any) => m.tool_calls)?.tool_calls[0].function).toEqual({ name: "file_search", arguments: '{"query":"ERR-4711 pump"}' });
        expect(messages.find((m: any) => m.role === "tool").content).toContain("[1] runbook.md");
      } else if (model === "claude") {
        const blocks = claude.requests[0]!.body.messages.flatMap((m: any) => (Array.isArray(m.content) ? m.content : []));
        expect(blocks.find((b: any) => b.type === "tool_use")).toMatchObject({ name: "file_search", input: { query: "ERR-4711 pump" } });
        expect(JSON.stringify(blocks.find((b: any) => b.type === "tool_result").content)).toContain("[1] runbook.md");
      } else {
        const input = oai.requests[0]!.body.input as any[];
        expect(input.some((i) => i.type === "file_search_call")).toBe(false);
        expect(input.find((i) => i.type === "function_call")).toMatchObject({ name: "file_search", arguments: '{"query":"ERR-4711 pump"}' });
        expect(input.find((i) => i.type === "function_call_output").output).toContain("[1] runbook.md");
      }
    }
  });
});

describe("refusals", () => {
  it("an unknown or another key's vector store: 404 before any upstream call", async () => {
    for (const ids of [["vs_nope"], ["vs_team", "vs_other"]]) {
      for (const model of ["local", "native"]) {
        const err = await team.responses.create({ model, input: "x", tools: [tool({ vector_store_ids: ids })] }).catch((e) => e);
        expect(err.status).toBe(404);
        expect(err.error.message).toMatch(/^Vector store with id 'vs_(nope|other)' not found\.$/);
      }
    }
    // over a stream and as a background job alike: refused before anything starts
    expect((await post(TEAM, { model: "local", input: "x", stream: true, tools: [tool({ vector_store_ids: ["vs_other"] })] })).status).toBe(404);
    expect((await post(TEAM, { model: "local", input: "x", background: true, tools: [tool({ vector_store_ids: ["vs_other"] })] })).status).toBe(404);
    expect(chat.requests.length + oai.requests.length).toBe(0);
    // the store's owner may use it
    expect((await client(OTHER).responses.create({ model: "local", input: "x", tools: [tool({ vector_store_ids: ["vs_other"] })] })).status).toBe("completed");
  });

  it("a bad tool: 400 naming the field", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ type: "file_search" }, "tools[0].vector_store_ids"],
      [tool({ vector_store_ids: [] }), "tools[0].vector_store_ids"],
      [tool({ max_num_results: 51 }), "tools[0].max_num_results"],
      [tool({ filters: { type: "near", key: "a", value: 1 } }), "tools[0].filters.type"],
      [tool({ ranking_options: { score_threshold: 2 } }), "tools[0].ranking_options.score_threshold"],
    ];
    for (const [t, param] of cases) {
      const err = await team.responses.create({ model: "local", input: "x", tools: [t as any] }).catch((e) => e);
      expect([err.status, err.error.param]).toEqual([400, param]);
    }
    expect(chat.requests).toHaveLength(0);
  });

  it("a key whose tools allow-list leaves file_search out: 403", async () => {
    const err = await client(NARROW).responses.create({ model: "local", input: "x", tools: [tool()] }).catch((e) => e);
    expect(err.status).toBe(403);
    expect(err.error).toMatchObject({ code: "tool_not_allowed", param: "tools[0]" });
    expect(chat.requests).toHaveLength(0);
  });
});

describe("input_file by file_id", () => {
  const withFile = (file_id: string) => [{ role: "user" as const, content: [{ type: "input_text" as const, text: "read this" }, { type: "input_file" as const, file_id }] }];

  it("kind: chat gets the file's contents, never the id", async () => {
    await team.responses.create({ model: "local", input: withFile("file-notes") });
    const parts = chat.requests[0]!.body.messages[0].content;
    expect(parts[1]).toEqual({ type: "file", file: { file_data: `data:text/markdown;base64,${Buffer.from("The door code is 1234.").toString("base64")}`, filename: "notes.md" } });
    expect(JSON.stringify(chat.requests[0]!.body)).not.toContain("file-notes");
    expect(files.reads).toEqual([["team", "file-notes"]]);
  });

  it("kind: anthropic gets a document block; kind: openai gets file_data (OpenAI cannot see the router's id)", async () => {
    await team.responses.create({ model: "claude", input: withFile("file-pdf") });
    const block = claude.requests[0]!.body.messages[0].content[1];
    expect(block).toEqual({ type: "document", source: { type: "base64", media_type: "application/pdf", data: Buffer.from("%PDF-1.4 fake").toString("base64") }, title: "spec.pdf" });

    await team.responses.create({ model: "native", input: withFile("file-notes") });
    const part = (oai.requests[0]!.body.input as any[])[0].content[1];
    expect(part).toEqual({ type: "input_file", file_data: `data:text/markdown;base64,${Buffer.from("The door code is 1234.").toString("base64")}`, filename: "notes.md" });
  });

  it("a later turn reads the file again from the history (the stored input keeps the id)", async () => {
    const first = await team.responses.create({ model: "local", input: withFile("file-notes") });
    chat.requests.length = 0;
    await team.responses.create({ model: "local", input: "and?", previous_response_id: first.id });
    expect(chat.requests[0]!.body.messages[0].content[1].type).toBe("file");
    const items = await team.responses.inputItems.list(first.id);
    expect(JSON.stringify(items.data)).toContain('"file_id":"file-notes"');
  });

  it("POST /v1/responses/input_tokens counts the file's contents (and 404s an unknown one)", async () => {
    for (const model of ["local", "native"]) {
      const count = await team.responses.inputTokens.count({ model, input: withFile("file-notes") });
      expect(count.input_tokens).toBeGreaterThan(0);
    }
    expect(files.reads).toEqual([["team", "file-notes"], ["team", "file-notes"]]);
    const sent = oai.requests.find((q) => q.path === "/responses/input_tokens")!.body;
    expect(sent.input[0].content[1]).toMatchObject({ type: "input_file", filename: "notes.md", file_data: expect.stringMatching(/^data:text\/markdown;base64,/) });
    const err = await team.responses.inputTokens.count({ model: "local", input: withFile("file-missing") }).catch((e) => e);
    expect(err.status).toBe(404);
  });

  it("another key's file: 404 before any upstream call, on every kind; an id that is not the library's: 404 on chat and anthropic", async () => {
    for (const model of ["local", "claude", "native"]) {
      for (const id of ["file-missing", "file-theirs"]) {
        if (model === "native" && id === "file-missing") continue; // not the library's: OpenAI's to resolve (test/integration/stored-file-ids.test.ts)
        const err = await team.responses.create({ model, input: withFile(id) }).catch((e) => e);
        expect([err.status, err.error.message, err.error.param]).toEqual([404, `No such File object: ${id}`, "input[0].content[1].file_id"]);
      }
    }
    expect(chat.requests.length + claude.requests.length + oai.requests.length).toBe(0);
    expect(files.reads).toEqual([["team", "file-theirs"], ["team", "file-theirs"], ["team", "file-theirs"]]);
  });
});
