/** The pure parts of the file_search tool and of `input_file` by `file_id`: the tool's checks, citations, the replay on each kind, the client's view. */
import { describe, expect, it } from "vitest";
import { ApiError, toApiError } from "../../src/ops/errors.js";
import { checkFileSearchTool, fileCitations, fileSearchCallItem, fileSearchQueryFor, type FileSearchHit } from "../../src/tools/file-search/index.js";
import { responsesToMessagesRequest } from "../../src/translate/anthropic/request.js";
import { versionTraits } from "../../src/translate/anthropic/version.js";
import { normalizeInput, responsesToChatRequest } from "../../src/translate/chat/request.js";
import type { FileOptions } from "../../src/translate/chat/files.js";
import { fileSearchResultsText, hostedItemAsCall } from "../../src/translate/hosted-calls.js";
import { storedFilesInline } from "../../src/translate/openai/files.js";
import { HIDE_FILE_RESULTS, HIDE_WEB_SOURCES, clientText, nativeRequestBody } from "../../src/translate/openai/rewrite.js";
import type { CreateResponseRequest, Item } from "../../src/wire/types.js";

/** The Messages request kind: anthropic would send for these items. */
function messagesRequest(input: Item[], files?: FileOptions) {
  const opts = { upstreamModel: "c", stream: false, version: versionTraits(undefined), defaultMaxTokens: 100, thinkingBudget: { minimal: 1024, low: 2048, medium: 4096, high: 8192, xhigh: 16000 }, promptCaching: false, structuredOutput: "tool" as const, hostedTools: "drop" as const, files };
  return responsesToMessagesRequest({ model: "m", input } as CreateResponseRequest, normalizeInput(input), opts);
}

const hit = (file_id: string, filename: string, text = "passage", score = 0.9): FileSearchHit => ({ file_id, filename, score, attributes: null, content: [{ type: "text", text }], vector_store_id: "vs_1" });
const HITS = [hit("file-a", "a.md", "alpha"), hit("file-b", "guide.pdf", "beta")];

describe("fileCitations", () => {
  it("cites [n] markers at their start and file names at their end, in text order", () => {
    const text = "Alpha [1], beta [2, 1]. See guide.pdf.";
    expect(fileCitations(text, HITS)).toEqual([
      { type: "file_citation", file_id: "file-a", filename: "a.md", index: 6 },
      { type: "file_citation", file_id: "file-b", filename: "guide.pdf", index: text.indexOf("[2, 1]") },
      { type: "file_citation", file_id: "file-a", filename: "a.md", index: text.indexOf("[2, 1]") },
      { type: "file_citation", file_id: "file-b", filename: "guide.pdf", index: text.indexOf("guide.pdf") + 9 },
    ]);
  });

  it("leaves out numbers no result has, markers inside code, links, and names inside longer names", () => {
    expect(fileCitations("[3] `items[1]` [see](https://x.org) data.md a.mdx", HITS)).toEqual([]);
    expect(fileCitations("anything [1]", [])).toEqual([]);
  });

  it("counts the index in code points", () => {
    expect(fileCitations("😀 [1]", HITS)[0]!.index).toBe(2);
  });
});

describe("the file_search tool", () => {
  it("is checked field by field (400 naming the field)", () => {
    const param = (tool: Record<string, unknown>) => {
      try {
        checkFileSearchTool(tool, "tools[1]");
      } catch (e) {
        expect((e as ApiError).status).toBe(400);
        return (e as ApiError).param;
      }
      return null;
    };
    expect(param({ type: "file_search", vector_store_ids: ["vs_1"], max_num_results: 50, filters: { type: "and", filters: [{ type: "in", key: "k", value: ["a", 1] }, { type: "gte", key: "n", value: 2 }] }, ranking_options: { ranker: "auto", score_threshold: 0 } })).toBeNull();
    expect(param({ type: "file_search" })).toBe("tools[1].vector_store_ids");
    expect(param({ type: "file_search", vector_store_ids: ["vs_1", 3] })).toBe("tools[1].vector_store_ids");
    expect(param({ type: "file_search", vector_store_ids: ["vs_1"], max_num_results: 0 })).toBe("tools[1].max_num_results");
    expect(param({ type: "file_search", vector_store_ids: ["vs_1"], filters: { type: "or", filters: [{ type: "eq", key: "", value: 1 }] } })).toBe("tools[1].filters.filters[0].key");
    expect(param({ type: "file_search", vector_store_ids: ["vs_1"], filters: { type: "in", key: "k", value: "a" } })).toBe("tools[1].filters.value");
    expect(param({ type: "file_search", vector_store_ids: ["vs_1"], ranking_options: { score_threshold: -0.1 } })).toBe("tools[1].ranking_options.score_threshold");
    expect(param({ type: "file_search", vector_store_ids: ["vs_1"], ranking_options: { hybrid_search: { embedding_weight: 0.2, text_weight: 0.8 } } })).toBeNull();
    expect(param({ type: "file_search", vector_store_ids: ["vs_1"], ranking_options: { hybrid_search: { embedding_weight: 0, text_weight: 0 } } })).toBe("tools[1].ranking_options.hybrid_search");
    expect(param({ type: "file_search", vector_store_ids: ["vs_1"], ranking_options: { hybrid_search: { embedding_weight: 1 } } })).toBe("tools[1].ranking_options.hybrid_search.text_weight");
    expect(param({ type: "file_search", vector_store_ids: ["vs_1"], ranking_options: { hybrid_search: { embedding_weight: "1", text_weight: 1 } } })).toBe("tools[1].ranking_options.hybrid_search.embedding_weight");
    expect(param({ type: "file_search", vector_store_ids: ["vs_1"], ranking_options: { hybrid_search: [1, 2] } })).toBe("tools[1].ranking_options.hybrid_search");
  });

  it("becomes the library's query: stores, count (default 10), filters, ranking", () => {
    expect(fileSearchQueryFor({ type: "file_search", vector_store_ids: ["vs_1"] }, "team", "q")).toEqual({ owner: "team", vectorStoreIds: ["vs_1"], query: "q", maxNumResults: 10 });
    const filters = { type: "eq" as const, key: "k", value: "v" };
    expect(fileSearchQueryFor({ type: "file_search", vector_store_ids: ["vs_1", "vs_2"], max_num_results: 3, filters, ranking_options: { score_threshold: 0.5 } }, "team", "q")).toEqual({
      owner: "team",
      vectorStoreIds: ["vs_1", "vs_2"],
      query: "q",
      maxNumResults: 3,
      filters,
      rankingOptions: { score_threshold: 0.5 },
    });
    const hybrid_search = { embedding_weight: 1, text_weight: 3 };
    expect(fileSearchQueryFor({ type: "file_search", vector_store_ids: ["vs_1"], ranking_options: { ranker: "auto", hybrid_search } }, "team", "q").rankingOptions).toEqual({ ranker: "auto", hybrid_search });
  });

  it("its item is OpenAI's ResponseFileSearchToolCall", () => {
    expect(fileSearchCallItem("fs_1", ["q"], "completed", [hit("file-a", "a.md", "alpha", 0.5)])).toEqual({
      id: "fs_1",
      type: "file_search_call",
      status: "completed",
      queries: ["q"],
      results: [{ file_id: "file-a", filename: "a.md", score: 0.5, text: "alpha", attributes: null }],
    });
    expect(fileSearchCallItem("fs_1", [], "failed", null).results).toBeNull();
  });
});

const searched: Item = { id: "fs_1", type: "file_search_call", status: "completed", queries: ["pump error"], results: [{ file_id: "file-a", filename: "a.md", score: 1, text: "ERR-1 means stop." }] };
const turn: Item[] = [{ type: "message", role: "user", content: [{ type: "input_text", text: "what is ERR-1?" }] }, searched, { type: "message", role: "assistant", content: [{ type: "output_text", text: "Stop [1]." }] }];

describe("a file_search_call replayed", () => {
  it("is the file_search call and the passages it found (what the model read)", () => {
    const [call, output] = hostedItemAsCall(searched, new Set());
    expect(call).toEqual({ type: "function_call", id: "fs_1_call", call_id: "fs_1", name: "file_search", arguments: '{"query":"pump error"}', status: "completed" });
    expect(output!.output).toBe(fileSearchResultsText([{ file_id: "file-a", filename: "a.md", text: "ERR-1 means stop." }]));
    expect(output!.output).toContain("[1] a.md (file_id: file-a)\nERR-1 means stop.");
    expect(hostedItemAsCall({ ...searched, results: null }, new Set())[1]!.output).toBe("Searched the files for: pump error");
    expect(hostedItemAsCall({ ...searched, status: "failed" }, new Set())[1]!.output).toBe("The file search failed.");
  });

  it("kind: chat: an assistant tool call and its tool message", () => {
    const body = responsesToChatRequest({ model: "m", input: turn } as CreateResponseRequest, normalizeInput(turn), { upstreamModel: "u", stream: false, developerRole: "system", hostedTools: "drop" }).body;
    const msgs = body.messages as any[];
    expect(msgs.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
    expect(msgs[1].tool_calls[0]).toMatchObject({ id: "fs_1", function: { name: "file_search", arguments: '{"query":"pump error"}' } });
    expect(msgs[2]).toMatchObject({ tool_call_id: "fs_1", content: expect.stringContaining("ERR-1 means stop.") });
  });

  it("kind: anthropic: a tool_use and its tool_result", () => {
    const t = messagesRequest(turn);
    const blocks = (t.body.messages as any[]).flatMap((m) => (Array.isArray(m.content) ? m.content : []));
    expect(blocks.find((b) => b.type === "tool_use")).toMatchObject({ name: "file_search", input: { query: "pump error" } });
    expect(JSON.stringify(blocks.find((b) => b.type === "tool_result"))).toContain("ERR-1 means stop.");
  });

  it("kind: openai: the function call and output without ids, in history and in the input", () => {
    const fromHistory = nativeRequestBody({ model: "m", input: "next" } as CreateResponseRequest, { upstreamModel: "u", history: turn, stream: false, wantEncryptedReasoning: false });
    const fromInput = nativeRequestBody({ model: "m", input: turn } as CreateResponseRequest, { upstreamModel: "u", history: [], stream: false, wantEncryptedReasoning: false });
    for (const body of [fromHistory, fromInput]) {
      const input = body.input as Item[];
      expect(input.some((i) => i.type === "file_search_call")).toBe(false);
      expect(input.find((i) => i.type === "function_call")).toEqual({ type: "function_call", call_id: "fs_1", name: "file_search", arguments: '{"query":"pump error"}', status: "completed" });
      expect(input.find((i) => i.type === "function_call_output")).toMatchObject({ call_id: "fs_1", output: expect.stringContaining("ERR-1 means stop.") });
    }
    // an input with none is sent as it came
    const plain = [{ type: "message", role: "user", content: "hi" }] as Item[];
    expect(nativeRequestBody({ model: "m", input: plain } as CreateResponseRequest, { upstreamModel: "u", history: [], stream: false, wantEncryptedReasoning: false }).input).toBe(plain);
  });
});

describe("a file search's results as the client sees them", () => {
  const response = { output: [searched, { type: "web_search_call", action: { type: "search", query: "q", sources: [{ type: "url", url: "https://x.org" }] } }] };
  it("null unless included; web sources hidden on their own bit", () => {
    expect(JSON.parse(clientText(response, false, HIDE_FILE_RESULTS)).output[0].results).toBeNull();
    expect(JSON.parse(clientText(response, false, HIDE_FILE_RESULTS)).output[1].action.sources).toHaveLength(1);
    const both = JSON.parse(clientText(response, false, HIDE_FILE_RESULTS | HIDE_WEB_SOURCES));
    expect([both.output[0].results, both.output[1].action.sources]).toEqual([null, undefined]);
    expect(JSON.parse(clientText(response, false, HIDE_WEB_SOURCES)).output[0].results).toHaveLength(1);
    expect(JSON.parse(clientText(response, false, true)).output[1].action.sources).toBeUndefined();
    // the stored object itself keeps them
    expect((response.output[0] as Item).results).toHaveLength(1);
  });
});

describe("input_file by file_id", () => {
  const stored = { "file-1": { file_data: "data:text/plain;base64,aGk=", filename: "hi.txt" } };
  const input = [{ type: "message", role: "user", content: [{ type: "input_text", text: "read" }, { type: "input_file", file_id: "file-1" }] }] as Item[];

  it("kind: openai: sent as file_data and filename, the request's own arrays untouched", () => {
    const out = storedFilesInline(input, stored) as Item[];
    expect((out[0]!.content as Item[])[1]).toEqual({ type: "input_file", file_data: "data:text/plain;base64,aGk=", filename: "hi.txt" });
    expect((input[0]!.content as Item[])[1]).toEqual({ type: "input_file", file_id: "file-1" });
    expect(storedFilesInline(input, undefined)).toBe(input);
    expect(storedFilesInline([{ type: "message", role: "user", content: "x" }], stored)).toEqual([{ type: "message", role: "user", content: "x" }]);
  });

  it("kind: chat: a file part with the contents; without them, the 400 it always was", () => {
    const req = { model: "m", input } as CreateResponseRequest;
    const opts = { upstreamModel: "u", stream: false, developerRole: "system" as const, hostedTools: "drop" as const };
    const body = responsesToChatRequest(req, normalizeInput(input), { ...opts, files: { stored } }).body;
    expect((body.messages as any[])[0].content[1]).toEqual({ type: "file", file: { file_data: "data:text/plain;base64,aGk=", filename: "hi.txt" } });
    const inlined = responsesToChatRequest(req, normalizeInput(input), { ...opts, files: { stored, inlineText: true } }).body;
    expect((inlined.messages as any[])[0].content[1]).toEqual({ type: "text", text: '<file name="hi.txt">\nhi\n</file>' });
    let err: unknown;
    try {
      responsesToChatRequest(req, normalizeInput(input), opts);
    } catch (e) {
      err = e;
    }
    expect(toApiError(err)).toMatchObject({ status: 400, param: "input[0].content[1].file_id" });
  });

  it("kind: anthropic: a document block", () => {
    const t = messagesRequest(input, { stored });
    expect((t.body.messages as any[])[0].content[1]).toEqual({ type: "document", source: { type: "text", media_type: "text/plain", data: "hi" }, title: "hi.txt" });
  });
});
