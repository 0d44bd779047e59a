import { describe, expect, it } from "vitest";
import { ApiError, toApiError } from "../../src/ops/errors.js";
import { normalizeInput, responsesToChatRequest } from "../../src/translate/chat/request.js";
import type { ChatRequestOptions } from "../../src/translate/chat/request.js";
import { chatCompletionToResponse, wantsReasoningSummary } from "../../src/translate/chat/response.js";
import { ChatStreamTranslator } from "../../src/translate/chat/stream.js";
import { customInputFromArguments } from "../../src/translate/custom-tools.js";
import { responseToEvents } from "../../src/translate/replay.js";
import { responseSkeleton } from "../../src/translate/skeleton.js";
import { fitContext, itemTokens } from "../../src/translate/truncation.js";
import { sequentialIds } from "../../src/wire/ids.js";
import type { ChatChunkLike, ToolNameMap } from "../../src/translate/chat/chat-types.js";
import type { CreateResponseRequest, Item, ResponseObject, StreamEvent } from "../../src/wire/types.js";
import { assertResponsesGrammar, runThroughOpenAISdk } from "../helpers/grammar.js";

/** The translators' clock: when a response completes (`completed_at`). */
const CLOCK = () => 1_700_000_100;

const OPTS: ChatRequestOptions = { upstreamModel: "llama3:8b", stream: false, developerRole: "system", hostedTools: "drop" };
const translate = (req: Partial<CreateResponseRequest>, opts: Partial<ChatRequestOptions> = {}) => {
  const full = { model: "m", ...req } as CreateResponseRequest;
  return responsesToChatRequest(full, normalizeInput(full.input), { ...OPTS, ...opts });
};
function apiError(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (err) {
    const e = toApiError(err);
    expect(e.status).toBe(400);
    return e;
  }
  throw new Error("expected an error");
}

const APPLY_PATCH = {
  type: "custom",
  name: "apply_patch",
  description: "Use the `apply_patch` tool to edit files.",
  format: { type: "grammar", syntax: "lark", definition: 'start: begin_patch hunk+ end_patch\nbegin_patch: "*** Begin Patch" LF' },
};
const skeleton = (req: Partial<CreateResponseRequest> = {}) => responseSkeleton({ model: "m", ...req }, { id: "resp_1", createdAt: 1, model: "m", status: "in_progress" });

function stream(chunks: ChatChunkLike[], toolNames?: ToolNameMap, opts: { reasoningSummary?: boolean } = {}) {
  const t = new ChatStreamTranslator(skeleton(), sequentialIds(), CLOCK, toolNames, opts);
  const events: StreamEvent[] = [...t.start()];
  for (const c of chunks) events.push(...t.push(c));
  events.push(...t.finish());
  const summary = assertResponsesGrammar(events);
  return { events, types: events.map((e) => e.type), summary, terminal: events.at(-1)! };
}

describe("custom (freeform) tools on chat", () => {
  it("sends a custom tool as a function with one string parameter whose description carries the grammar", () => {
    const { body, droppedTools, toolNames } = translate({ input: "x", tools: [APPLY_PATCH], tool_choice: { type: "custom", name: "apply_patch" } });
    expect(droppedTools).toEqual([]);
    const tool = (body.tools as any[])[0];
    expect(tool.type).toBe("function");
    expect(tool.function.name).toBe("apply_patch");
    expect(tool.function.parameters).toEqual({
      type: "object",
      properties: { input: { type: "string", description: expect.any(String) } },
      required: ["input"],
      additionalProperties: false,
    });
    expect(tool.function.description).toContain("Use the `apply_patch` tool to edit files.");
    expect(tool.function.description).toContain("lark grammar");
    expect(tool.function.description).toContain('begin_patch: "*** Begin Patch" LF');
    expect(body.tool_choice).toEqual({ type: "function", function: { name: "apply_patch" } });
    expect(toolNames.fromChat.apply_patch).toEqual({ name: "apply_patch", custom: true });
  });

  it("a custom tool inside a namespace is flattened and still maps back as custom", () => {
    const { body, toolNames } = translate({ input: "x", tools: [{ type: "namespace", name: "fs", description: "", tools: [{ type: "custom", name: "patch" }] }] });
    const name = (body.tools as any[])[0].function.name;
    expect(name).toBe("fs__patch");
    expect(toolNames.fromChat[name]).toEqual({ name: "patch", namespace: "fs", custom: true });
  });

  it("replays custom_tool_call / custom_tool_call_output history as a tool call and a tool message", () => {
    const { body } = translate({
      tools: [APPLY_PATCH],
      input: [
        { role: "user", content: "edit" },
        { type: "custom_tool_call", call_id: "call_p", name: "apply_patch", input: "*** Begin Patch\n*** End Patch" },
        { type: "custom_tool_call_output", call_id: "call_p", output: "Done!" },
      ] as Item[],
    });
    expect(body.messages).toEqual([
      { role: "user", content: "edit" },
      { role: "assistant", content: null, tool_calls: [{ id: "call_p", type: "function", function: { name: "apply_patch", arguments: JSON.stringify({ input: "*** Begin Patch\n*** End Patch" }) } }] },
      { role: "tool", tool_call_id: "call_p", content: "Done!" },
    ]);
  });

  it("reads the input from the call's arguments, keeping text a model sent without the JSON wrapper", () => {
    expect(customInputFromArguments('{"input":"a\\nb"}')).toBe("a\nb");
    expect(customInputFromArguments('{"patch":"p"}')).toBe("p");
    expect(customInputFromArguments("*** Begin Patch")).toBe("*** Begin Patch");
    expect(customInputFromArguments('{"a":1,"b":2}')).toBe('{"a":1,"b":2}');
  });

  it("a JSON answer's call of a custom tool is a custom_tool_call item with input", () => {
    const { toolNames } = translate({ input: "x", tools: [APPLY_PATCH, { type: "function", name: "f" }] });
    const r = chatCompletionToResponse(
      { choices: [{ message: { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "apply_patch", arguments: '{"input":"*** Begin Patch"}' } }, { id: "call_2", type: "function", function: { name: "f", arguments: "{}" } }] }, finish_reason: "tool_calls" }] },
      skeleton(),
      sequentialIds(), CLOCK,
      toolNames,
    );
    expect(r.output[0]).toEqual({ id: expect.stringMatching(/^ctc_/), type: "custom_tool_call", status: "completed", call_id: "call_1", name: "apply_patch", input: "*** Begin Patch" });
    expect(r.output[1]).toMatchObject({ type: "function_call", name: "f", call_id: "call_2" });
  });

  it("streams a custom call as custom_tool_call_input.delta/done, valid for the openai SDK", async () => {
    const { toolNames } = translate({ input: "x", tools: [APPLY_PATCH] });
    const args = JSON.stringify({ input: "*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch" });
    const { types, summary, events } = stream(
      [
        { choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: "call_p", type: "function", function: { name: "apply_patch", arguments: args.slice(0, 12) } }] } }] },
        { choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: args.slice(12) } }] } }] },
        { choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] },
      ],
      toolNames,
    );
    expect(types).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.custom_tool_call_input.delta",
      "response.custom_tool_call_input.delta",
      "response.custom_tool_call_input.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(events.filter((e) => e.type === "response.custom_tool_call_input.delta").map((e) => e.delta)).toEqual(["**", "* Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch"]);
    expect(summary.items[0]).toEqual({ id: expect.stringMatching(/^ctc_/), type: "custom_tool_call", status: "completed", call_id: "call_p", name: "apply_patch", input: "*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch" });
    const { final } = await runThroughOpenAISdk(events);
    expect(final.output[0]).toMatchObject({ type: "custom_tool_call", input: "*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch" });
  });

  it("streams the input as it decodes, an escape cut between chunks waiting for its end; other argument shapes arrive whole at the end", () => {
    const { toolNames } = translate({ input: "x", tools: [APPLY_PATCH] });
    const call = (...fragments: string[]) =>
      stream(
        [
          { choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: "call_p", type: "function", function: { name: "apply_patch", arguments: "" } }] } }] },
          ...fragments.map((f) => ({ choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: f } }] } }] })),
        ],
        toolNames,
      );
    const deltas = (r: ReturnType<typeof call>) => r.events.filter((e) => e.type === "response.custom_tool_call_input.delta").map((e) => e.delta);
    const escaped = call('{ "input" : "a\\', 'nb\\u00', "e9\\\"", 'c"}');
    expect(deltas(escaped)).toEqual(["a", "\nb", "é\"", "c"]);
    expect(escaped.summary.items[0]).toMatchObject({ input: 'a\nbé"c' });
    const other = call('{"patch": ', '"p"}');
    expect(deltas(other)).toEqual(["p"]);
    const bare = call("*** Begin Patch\n", "*** End Patch");
    expect(deltas(bare)).toEqual(["*** Begin Patch\n*** End Patch"]);
  });

  it("a stored custom call replays with its input events", () => {
    const response = { ...skeleton(), status: "completed", output: [{ id: "ctc_1", type: "custom_tool_call", status: "completed", call_id: "c", name: "apply_patch", input: "patch" }], usage: { input_tokens: 1, input_tokens_details: { cached_tokens: 0 }, output_tokens: 1, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 2 } } as unknown as ResponseObject;
    const events = responseToEvents(response);
    assertResponsesGrammar(events);
    expect(events.map((e) => e.type)).toContain("response.custom_tool_call_input.done");
  });
});

describe("additional_tools input items on chat", () => {
  const ns = (name: string, fns: string[]) => ({ type: "namespace", name, description: "", tools: fns.map((f) => ({ type: "function", name: f, parameters: { type: "object", properties: {} } })) });

  it("hoists their tools from history and new input, once per name, after the request's own tools", () => {
    const { body, toolNames } = translate(
      {
        tools: [],
        input: [
          { type: "additional_tools", role: "developer", tools: [ns("mcp", ["search"])] },
          { role: "user", content: "a" },
          { type: "additional_tools", role: "developer", tools: [ns("mcp", ["search"]), { type: "custom", name: "apply_patch" }] },
          { role: "user", content: "b" },
        ] as Item[],
      },
      { historyItems: 2 },
    );
    expect((body.tools as any[]).map((t) => t.function.name)).toEqual(["mcp__search", "apply_patch"]);
    expect(toolNames.fromChat.mcp__search).toEqual({ name: "search", namespace: "mcp" });
    expect(body.messages).toEqual([
      { role: "user", content: "a" },
      { role: "user", content: "b" },
    ]);
  });

  it("the request's own tool wins a name clash", () => {
    const { body } = translate({
      tools: [{ type: "function", name: "f", description: "own" }],
      input: [{ type: "additional_tools", role: "developer", tools: [{ type: "function", name: "f", description: "item" }] }, { role: "user", content: "x" }] as Item[],
    });
    expect(body.tools).toEqual([{ type: "function", function: { name: "f", description: "own" } }]);
  });

  it("tool_search_call / tool_search_output history items are accepted (left out)", () => {
    const { body } = translate({ input: [{ type: "tool_search_call", id: "ts_1", arguments: {}, status: "completed" }, { type: "tool_search_output", id: "tso_1", tools: [], status: "completed" }, { role: "user", content: "x" }] as Item[] });
    expect(body.messages).toEqual([{ role: "user", content: "x" }]);
  });
});

describe("files and audio on chat", () => {
  const user = (...content: Item[]) => ({ input: [{ type: "message", role: "user", content }] as Item[] });
  const pdf = "data:application/pdf;base64,JVBERi0xLjQ=";
  const txt = `data:text/plain;base64,${Buffer.from("hello file").toString("base64")}`;

  it("input_file with file_data -> a chat file part; input_audio -> input_audio", () => {
    const { body } = translate(user({ type: "input_text", text: "read" }, { type: "input_file", filename: "a.pdf", file_data: pdf }, { type: "input_audio", input_audio: { data: "UklGRg==", format: "wav" } }));
    expect(body.messages[0]!.content).toEqual([
      { type: "text", text: "read" },
      { type: "file", file: { file_data: pdf, filename: "a.pdf" } },
      { type: "input_audio", input_audio: { data: "UklGRg==", format: "wav" } },
    ]);
  });

  it("inlines a text file as text with inlineText; other files stay file parts", () => {
    const { body } = translate(user({ type: "input_file", filename: "notes.txt", file_data: txt }, { type: "input_file", filename: "a.pdf", file_data: pdf }), { files: { inlineText: true } });
    expect(body.messages[0]!.content).toEqual([
      { type: "text", text: '<file name="notes.txt">\nhello file\n</file>' },
      { type: "file", file: { file_data: pdf, filename: "a.pdf" } },
    ]);
  });

  it("a file_url is sent with the contents the service fetched; one it did not fetch is a 400", () => {
    const part = { type: "input_file", file_url: "https://files.example/doc.pdf" };
    const { body } = translate(user(part), { files: { fetched: { "https://files.example/doc.pdf": { file_data: pdf, filename: "doc.pdf" } } } });
    expect(body.messages[0]!.content).toEqual([{ type: "file", file: { file_data: pdf, filename: "doc.pdf" } }]);
    expect(apiError(() => translate(user(part))).param).toBe("input[0].content[0].file_url");
  });

  it("a file in a tool output follows the tool message as a user message, like an image", () => {
    const { body } = translate({
      input: [
        { type: "function_call", call_id: "c", name: "read", arguments: "{}" },
        { type: "function_call_output", call_id: "c", output: [{ type: "input_text", text: "here" }, { type: "input_file", filename: "a.pdf", file_data: pdf }] },
      ] as Item[],
    });
    expect(body.messages.slice(1)).toEqual([
      { role: "tool", tool_call_id: "c", content: "here" },
      { role: "user", content: [{ type: "file", file: { file_data: pdf, filename: "a.pdf" } }] },
    ]);
  });

  it("file_id is a 400 naming it", () => {
    const e = apiError(() => translate(user({ type: "input_file", file_id: "file-abc" })));
    expect(e.param).toBe("input[0].content[0].file_id");
    expect(e.message).toContain("file_id");
  });
});

describe("truncation against a model's context_window", () => {
  const big = (role: string, n: number, extra: Item = {}) => ({ type: "message", role, content: [{ type: role === "assistant" ? "output_text" : "input_text", text: "x".repeat(n) }], ...extra });

  it("fits: everything is sent", () => {
    const items = [big("user", 40), big("assistant", 40)] as Item[];
    expect(fitContext(items, { contextWindow: 1000, truncation: "disabled", historyItems: 0 })).toEqual({ items, historyItems: 0, dropped: 0 });
  });

  it("disabled: an input over the window is OpenAI's 400 context_length_exceeded on param input", () => {
    const e = apiError(() => translate({ input: [big("user", 4000)] as Item[] }, { contextWindow: 100 }));
    expect(e.code).toBe("context_length_exceeded");
    expect(e.param).toBe("input");
    expect(e.message).toBe("Your input exceeds the context window of this model. Please adjust your input and try again.");
  });

  it("auto: drops the oldest turns, keeps system/developer messages and the newest user input, never splits a call from its output", () => {
    const items = [
      big("developer", 40),
      big("user", 400),
      { type: "function_call", call_id: "c1", name: "f", arguments: "{}" },
      { type: "function_call_output", call_id: "c1", output: "o".repeat(400) },
      big("assistant", 400),
      big("user", 400),
      { type: "function_call", call_id: "c2", name: "f", arguments: "{}" },
      { type: "function_call_output", call_id: "c2", output: "ok" },
      big("user", 40),
    ] as Item[];
    const total = items.reduce((n, it) => n + itemTokens(it), 0);
    const fitted = fitContext(items, { contextWindow: total - 300, truncation: "auto", historyItems: 8 });
    expect(fitted.items).toEqual([items[0], items[5], items[6], items[7], items[8]]);
    expect(fitted.historyItems).toBe(4);
    expect(fitted.dropped).toBe(4);
    // Even the newest turn alone is too long: a 400, never a split turn.
    expect(() => fitContext(items, { contextWindow: 20, truncation: "auto", historyItems: 8 })).toThrow(/context window/);
  });

  it("auto on the chat request: the oldest turn is left out of the messages", () => {
    const { body } = translate({ truncation: "auto", input: [big("user", 2000), big("assistant", 2000), big("user", 40)] as Item[] }, { contextWindow: 200 });
    expect(body.messages).toHaveLength(1);
    expect(body.messages[0]!.content).toBe("x".repeat(40));
  });
});

describe("reasoning as a summary when the request asks for one", () => {
  const chunks: ChatChunkLike[] = [
    { choices: [{ index: 0, delta: { reasoning_content: "Think" } }] },
    { choices: [{ index: 0, delta: { reasoning_content: "ing." } }] },
    { choices: [{ index: 0, delta: { content: "Answer" } }] },
    { choices: [{ index: 0, delta: {}, finish_reason: "stop" }] },
  ];

  it("streams reasoning_summary_part/text events and a summary_text item", async () => {
    const { types, summary, events } = stream(chunks, undefined, { reasoningSummary: true });
    expect(types.slice(2, 9)).toEqual([
      "response.output_item.added",
      "response.reasoning_summary_part.added",
      "response.reasoning_summary_text.delta",
      "response.reasoning_summary_text.delta",
      "response.reasoning_summary_text.done",
      "response.reasoning_summary_part.done",
      "response.output_item.done",
    ]);
    expect(summary.items[0]).toEqual({ id: expect.stringMatching(/^rs_/), type: "reasoning", summary: [{ type: "summary_text", text: "Thinking." }] });
    const { final } = await runThroughOpenAISdk(events);
    expect(final.output[0]).toMatchObject({ type: "reasoning", summary: [{ type: "summary_text", text: "Thinking." }] });
  });

  it("without it, reasoning stays reasoning_text", () => {
    const { types, summary } = stream(chunks);
    expect(types).toContain("response.reasoning_text.delta");
    expect(types).not.toContain("response.reasoning_summary_text.delta");
    expect(summary.items[0]).toMatchObject({ summary: [], content: [{ type: "reasoning_text", text: "Thinking." }] });
  });

  it("asked for by reasoning.summary (or its deprecated name generate_summary), not by null or an effort alone", () => {
    expect(wantsReasoningSummary({ summary: "auto" })).toBe(true);
    expect(wantsReasoningSummary({ generate_summary: "concise" })).toBe(true);
    expect(wantsReasoningSummary({ summary: null, effort: "high" })).toBe(false);
    expect(wantsReasoningSummary({ effort: "low" })).toBe(false);
    expect(wantsReasoningSummary(null)).toBe(false);
  });

  it("JSON answers follow the same rule", () => {
    const completion = { choices: [{ message: { role: "assistant", content: "A", reasoning_content: "R" }, finish_reason: "stop" }] };
    expect(chatCompletionToResponse(completion, skeleton(), sequentialIds(), CLOCK, undefined, true).output[0]).toEqual({ id: expect.any(String), type: "reasoning", summary: [{ type: "summary_text", text: "R" }] });
    expect(chatCompletionToResponse(completion, skeleton(), sequentialIds(), CLOCK).output[0]).toMatchObject({ summary: [], content: [{ type: "reasoning_text", text: "R" }] });
  });
});
