import { describe, expect, it } from "vitest";
import type { MessageCreateParamsNonStreaming } from "@anthropic-ai/sdk/resources/messages/messages";
import { responsesToMessagesRequest, type AnthropicRequestOptions } from "../../src/translate/anthropic/request.js";
import { decodeThinking, encodeThinking } from "../../src/translate/anthropic/types.js";
import { versionTraits } from "../../src/translate/anthropic/version.js";
import { paramOf, anthropicErrorBody } from "../../src/translate/anthropic/errors.js";
import { TranslationError } from "../../src/translate/errors.js";
import { normalizeInput } from "../../src/translate/chat/request.js";
import type { CreateResponseRequest, Item } from "../../src/wire/types.js";

const opts = (o: Partial<AnthropicRequestOptions> = {}): AnthropicRequestOptions => ({
  upstreamModel: "claude-up",
  stream: false,
  version: versionTraits(undefined),
  defaultMaxTokens: 1000,
  thinkingBudget: { minimal: 1024, low: 2048, medium: 4096, high: 8192, xhigh: 16000 },
  promptCaching: false,
  structuredOutput: "tool",
  hostedTools: "drop",
  ...o,
});

function build(req: Partial<CreateResponseRequest>, o: Partial<AnthropicRequestOptions> = {}) {
  const full = { model: "m", ...req } as CreateResponseRequest;
  const t = responsesToMessagesRequest(full, normalizeInput(full.input), opts(o));
  // What is sent must be a body the SDK's own type accepts.
  const typed: MessageCreateParamsNonStreaming = t.body as MessageCreateParamsNonStreaming;
  return { ...t, body: JSON.parse(JSON.stringify(typed)) };
}

function badParam(fn: () => unknown): string | null {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(TranslationError);
    return (err as TranslationError).param;
  }
  throw new Error("expected a TranslationError");
}

const thinking = { type: "thinking" as const, thinking: "Let me think \u2014 \"quoted\"\n", signature: "EqQBCkgIARABGAIiQL+sig/==" };

describe("anthropic request: tool call ids from other backends", () => {
  it("ids outside [a-zA-Z0-9_-] are rewritten the same way in the tool_use and its tool_result; others are kept", () => {
    const { body } = build({
      tools: [{ type: "function", name: "get_weather", parameters: { type: "object" } }] as never,
      input: [
        { role: "user", content: "hi" },
        { type: "function_call", call_id: "functions.get_weather:0", name: "get_weather", arguments: "{}" },
        { type: "function_call", call_id: "functions.get_weather:1", name: "get_weather", arguments: "{}" },
        { type: "function_call", call_id: "toolu_ok-1", name: "get_weather", arguments: "{}" },
        { type: "function_call_output", call_id: "functions.get_weather:0", output: "a" },
        { type: "function_call_output", call_id: "functions.get_weather:1", output: "b" },
        { type: "function_call_output", call_id: "toolu_ok-1", output: "c" },
      ] as Item[],
    });
    const uses = body.messages[1].content.map((b: { id: string }) => b.id);
    const results = body.messages[2].content.map((b: { tool_use_id: string }) => b.tool_use_id);
    expect(results).toEqual(uses);
    expect(uses[2]).toBe("toolu_ok-1");
    expect(uses[0]).not.toBe(uses[1]);
    for (const id of uses) expect(id).toMatch(/^[a-zA-Z0-9_-]+$/);
    expect(uses[0]).toMatch(/^functions_get_weather_0_[0-9a-f]{8}$/);
  });
});

describe("anthropic request: messages", () => {
  it("maps a string input, instructions and the default max_tokens", () => {
    const { body } = build({ input: "hi", instructions: "Be brief." });
    expect(body).toEqual({ model: "claude-up", max_tokens: 1000, system: [{ type: "text", text: "Be brief." }], messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }] });
  });

  it("sends leading system/developer messages in system; later ones as system-role messages on the current version, in system on 2023-06-01", () => {
    const input = [
      { role: "developer", content: "dev rules" },
      { role: "user", content: "a" },
      { role: "system", content: "late note" },
      { role: "user", content: "b" },
    ] as Item[];
    const modern = build({ input, instructions: "inst" }).body;
    expect(modern.system).toEqual([{ type: "text", text: "inst" }, { type: "text", text: "dev rules" }]);
    expect(modern.messages.map((m: { role: string }) => m.role)).toEqual(["user", "system", "user"]);
    const legacy = build({ input }, { version: versionTraits("2023-06-01") }).body;
    expect(legacy.system).toEqual([{ type: "text", text: "dev rules" }, { type: "text", text: "late note" }]);
    expect(legacy.messages).toEqual([{ role: "user", content: [{ type: "text", text: "a" }, { type: "text", text: "b" }] }]);
  });

  it("merges a tool loop into alternating turns: thinking first, tool_use in the assistant turn, tool results first in the user turn", () => {
    const input: Item[] = [
      { role: "user", content: "weather?" },
      { type: "reasoning", id: "rs_1", summary: [], encrypted_content: encodeThinking(thinking) },
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "Checking." }] },
      { type: "function_call", call_id: "toolu_1", name: "get_weather", arguments: '{"city":"Paris"}' },
      { type: "function_call", call_id: "toolu_2", name: "get_weather", arguments: '{"city":"Rome"}' },
      { type: "function_call_output", call_id: "toolu_1", output: "sunny" },
      { type: "function_call_output", call_id: "toolu_2", output: [{ type: "input_text", text: "rain" }, { type: "input_image", image_url: "data:image/png;base64,AAAA" }] },
    ];
    const { body } = build({ input });
    expect(body.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "weather?" }] },
      {
        role: "assistant",
        content: [
          thinking,
          { type: "text", text: "Checking." },
          { type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Paris" } },
          { type: "tool_use", id: "toolu_2", name: "get_weather", input: { city: "Rome" } },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "toolu_1", content: "sunny" },
          { type: "tool_result", tool_use_id: "toolu_2", content: [{ type: "text", text: "rain" }, { type: "image", source: { type: "base64", media_type: "image/png", data: "AAAA" } }] },
        ],
      },
    ]);
  });

  it("a turn without tools after a tool loop still defines the tools its history used, none callable", () => {
    const { body } = build({ input: [{ role: "user", content: "q" }, { type: "function_call", call_id: "c1", name: "lookup", arguments: "{}" }, { type: "function_call_output", call_id: "c1", output: "r" }, { role: "user", content: "thanks" }] as Item[] });
    expect(body.tools).toEqual([{ name: "lookup", description: expect.any(String), input_schema: { type: "object" } }]);
    expect(body.tool_choice).toEqual({ type: "none" });
    expect(build({ input: "x" }).body.tools).toBeUndefined();
  });

  it("sends an empty tool result without content, and drops empty text", () => {
    const { body } = build({
      input: [
        { role: "user", content: [{ type: "input_text", text: "" }, { type: "input_text", text: "go" }] },
        { type: "function_call", call_id: "c1", name: "f", arguments: "" },
        { type: "function_call_output", call_id: "c1", output: "" },
        { role: "assistant", content: [] },
      ] as Item[],
    });
    expect(body.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "go" }] },
      { role: "assistant", content: [{ type: "tool_use", id: "c1", name: "f", input: {} }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "c1" }] },
    ]);
  });

  it("returns thinking blocks byte for byte, redacted ones too, and drops reasoning it cannot replay", () => {
    const redacted = { type: "redacted_thinking" as const, data: "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP" };
    const input: Item[] = [
      { role: "user", content: "q" },
      { type: "reasoning", id: "rs_a", summary: [], encrypted_content: "gAAAAopenai-encrypted" },
      { type: "reasoning", id: "rs_b", summary: [], encrypted_content: encodeThinking(redacted) },
      { type: "reasoning", id: "rs_c", summary: [], content: [{ type: "reasoning_text", text: "altered by client" }], encrypted_content: encodeThinking(thinking) },
      { type: "function_call", call_id: "c1", name: "f", arguments: "{}" },
      { type: "function_call_output", call_id: "c1", output: "ok" },
    ];
    const { body } = build({ input });
    expect(body.messages[1].content.slice(0, 2)).toEqual([redacted, thinking]);
    expect(decodeThinking(encodeThinking(thinking))).toEqual(thinking);
    expect(decodeThinking("anthropic.not-base64-json")).toBeNull();
  });

  it("maps images by URL and base64, PDFs and text files (given or fetched by file_url) to document blocks", () => {
    const pdf = Buffer.from("%PDF-1.4 test").toString("base64");
    const txt = Buffer.from("plain words").toString("base64");
    const { body } = build({
      input: [
        {
          role: "user",
          content: [
            { type: "input_text", text: "look" },
            { type: "input_image", image_url: "https://example.com/a.png", detail: "high" },
            { type: "input_image", image_url: "data:image/jpeg;base64,/9j/AA==" },
            { type: "input_file", filename: "doc.pdf", file_data: `data:application/pdf;base64,${pdf}` },
            { type: "input_file", filename: "notes.txt", file_data: `data:text/plain;base64,${txt}` },
            { type: "input_file", file_url: "https://example.com/x.pdf" },
            { type: "input_file", file_url: "https://example.com/blob" },
          ],
        },
      ] as Item[],
    }, { files: { fetched: { "https://example.com/x.pdf": { file_data: `data:application/pdf;base64,${pdf}`, filename: "x.pdf" }, "https://example.com/blob": { file_data: `data:application/octet-stream;base64,${txt}`, filename: "readme.md" } } } });
    expect(body.messages[0].content).toEqual([
      { type: "text", text: "look" },
      { type: "image", source: { type: "url", url: "https://example.com/a.png" } },
      { type: "image", source: { type: "base64", media_type: "image/jpeg", data: "/9j/AA==" } },
      { type: "document", title: "doc.pdf", source: { type: "base64", media_type: "application/pdf", data: pdf } },
      { type: "document", title: "notes.txt", source: { type: "text", media_type: "text/plain", data: "plain words" } },
      { type: "document", title: "x.pdf", source: { type: "base64", media_type: "application/pdf", data: pdf } },
      { type: "document", title: "readme.md", source: { type: "text", media_type: "text/plain", data: "plain words" } },
    ]);
  });

  it("rejects what Anthropic cannot take, naming the param", () => {
    expect(badParam(() => build({ input: [{ role: "user", content: [{ type: "input_image", file_id: "file_1" }] }] as Item[] }))).toBe("input[0].content[0].file_id");
    expect(badParam(() => build({ input: [{ role: "user", content: [{ type: "input_file", file_id: "file_1" }] }] as Item[] }))).toBe("input[0].content[0].file_id");
    expect(badParam(() => build({ input: [{ role: "user", content: [{ type: "input_file", file_url: "https://example.com/x.pdf" }] }] as Item[] }))).toBe("input[0].content[0].file_url");
    const octets = { fetched: { "https://example.com/x": { file_data: "data:application/octet-stream;base64,AAEC", filename: "x" } } };
    expect(badParam(() => build({ input: [{ role: "user", content: [{ type: "input_file", file_url: "https://example.com/x" }] }] as Item[] }, { files: octets }))).toBe("input[0].content[0].file_url");
    expect(badParam(() => build({ input: [{ role: "user", content: [{ type: "input_audio", input_audio: { data: "UklGRg==", format: "wav" } }] }] as Item[] }))).toBe("input[0].content[0].type");
    expect(badParam(() => build({ input: [{ role: "user", content: [{ type: "input_image", image_url: "data:image/bmp;base64,AA" }] }] as Item[] }))).toBe("input[0].content[0].image_url");
    expect(badParam(() => build({ input: [{ role: "user", content: "x" }, { type: "function_call", call_id: "c", name: "f", arguments: "[1]" }] as Item[] }))).toBe("input[1].arguments");
    expect(badParam(() => build({ input: [{ role: "system", content: "only system" }] as Item[] }))).toBe("input");
    expect(badParam(() => build({ input: "x", prompt: { id: "pmpt_1" } }))).toBe("prompt");
    expect(badParam(() => build({ input: "x", tools: [{ type: "web_search" }] }, { hostedTools: "reject" }))).toBe("tools[0].type");
    expect(badParam(() => build({ input: "x", text: { format: { type: "json_schema", name: "a", schema: { type: "array" } } } }))).toBe("text.format.schema");
  });
});

describe("anthropic request: options", () => {
  const tools = [{ type: "function", name: "get_weather", description: "Weather", parameters: { type: "object", properties: { city: { type: "string" } } } }];

  it("maps function tools, tool_choice and parallel_tool_calls: false", () => {
    const auto = build({ input: "x", tools, parallel_tool_calls: false }).body;
    expect(auto.tools).toEqual([{ name: "get_weather", description: "Weather", input_schema: tools[0]!.parameters }]);
    expect(auto.tool_choice).toEqual({ type: "auto", disable_parallel_tool_use: true });
    expect(build({ input: "x", tools, tool_choice: "required" }).body.tool_choice).toEqual({ type: "any" });
    expect(build({ input: "x", tools, tool_choice: "none" }).body.tool_choice).toEqual({ type: "none" });
    expect(build({ input: "x", tools, tool_choice: { type: "function", name: "get_weather" }, parallel_tool_calls: false }).body.tool_choice).toEqual({ type: "tool", name: "get_weather", disable_parallel_tool_use: true });
    expect(build({ input: "x", tools: [{ type: "function", name: "noargs" }] }).body.tools).toEqual([{ name: "noargs", input_schema: { type: "object", properties: {} } }]);
  });

  it("sends a freeform custom tool as one string parameter 'input' (the grammar in the description); replays its calls and outputs as tool_use/tool_result", () => {
    const patch = { type: "custom", name: "apply_patch", description: "Edit files", format: { type: "grammar", syntax: "lark", definition: "start: /.+/s" } };
    const t = build({
      input: [
        { role: "user", content: "edit" },
        { type: "custom_tool_call", call_id: "toolu_1", name: "apply_patch", input: "*** Begin Patch\n" },
        { type: "custom_tool_call_output", call_id: "toolu_1", output: "Done!" },
      ] as Item[],
      tools: [patch, { type: "namespace", name: "fs", tools: [{ type: "custom", name: "write" }] }],
      tool_choice: { type: "custom", name: "apply_patch" },
    }, { promptCaching: false });
    expect(t.body.tools[0]).toEqual({
      name: "apply_patch",
      description: expect.stringContaining("The input must match this lark grammar:\nstart: /.+/s"),
      input_schema: { type: "object", properties: { input: { type: "string", description: expect.any(String) } }, required: ["input"], additionalProperties: false },
    });
    expect(t.body.tools[1].name).toBe("fs__write");
    expect(t.toolNames.fromChat).toMatchObject({ apply_patch: { name: "apply_patch", custom: true }, fs__write: { name: "write", namespace: "fs", custom: true } });
    expect(t.body.tool_choice).toEqual({ type: "tool", name: "apply_patch" });
    expect(t.body.messages.slice(1)).toEqual([
      { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "apply_patch", input: { input: "*** Begin Patch\n" } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "Done!" }] },
    ]);
    expect(badParam(() => build({ input: [{ role: "user", content: "x" }, { type: "custom_tool_call", call_id: "c", name: "f", input: 3 }] as Item[] }))).toBe("input[1].input");
  });

  it("hoists the tools of additional_tools items (new input and history) once per name, after the request's own", () => {
    const extra = (desc: string) => ({ type: "additional_tools", role: "developer", tools: [{ type: "function", name: "lookup", description: desc }, { type: "function", name: "get_weather", description: "shadowed" }] });
    const t = build({ input: [extra("old"), { role: "user", content: "x" }, extra("new")] as Item[], tools }, { historyItems: 1, promptCaching: false });
    expect(t.body.tools.map((x: { name: string; description?: string }) => [x.name, x.description])).toEqual([["get_weather", "Weather"], ["lookup", "new"]]);
    expect(t.body.messages).toEqual([{ role: "user", content: [{ type: "text", text: "x" }] }]);
    expect(badParam(() => build({ input: [{ type: "additional_tools", role: "developer" }, { role: "user", content: "x" }] as Item[] }))).toBe("input[0].tools");
  });

  it("fits the input into contextWindow per truncation: auto leaves out the oldest turn, disabled is context_length_exceeded", () => {
    const turns = [{ role: "user", content: "word ".repeat(200) }, { role: "assistant", content: "word ".repeat(200) }, { role: "user", content: "newest" }] as Item[];
    expect(build({ input: turns, truncation: "auto" }, { contextWindow: 300 }).body.messages).toEqual([{ role: "user", content: [{ type: "text", text: "newest" }] }]);
    let code: string | null = null;
    try {
      build({ input: turns }, { contextWindow: 300 });
    } catch (err) {
      code = (err as TranslationError).code;
    }
    expect(code).toBe("context_length_exceeded");
    expect(build({ input: turns }, { contextWindow: 10_000 }).body.messages).toHaveLength(3);
  });

  it("drops hosted tools (reported) and flattens namespaces", () => {
    const t = build({ input: "x", tools: [{ type: "web_search" }, { type: "namespace", name: "fs", tools: [{ type: "function", name: "read" }] }] });
    expect(t.droppedTools).toEqual(["web_search"]);
    expect(t.body.tools.map((x: { name: string }) => x.name)).toEqual(["fs__read"]);
  });

  it("asks for thinking with the effort's budget; max_tokens leaves the answer its room; sampling dropped while thinking", () => {
    const b = build({ input: "x", reasoning: { effort: "medium" }, temperature: 0.2 }, { version: versionTraits("2023-06-01") }).body;
    expect(b.thinking).toEqual({ type: "enabled", budget_tokens: 4096 });
    expect(b.max_tokens).toBe(5096);
    expect(b.temperature).toBeUndefined();
    const capped = build({ input: "x", reasoning: { effort: "high" }, max_output_tokens: 3000 }).body;
    expect(capped).toMatchObject({ max_tokens: 3000, thinking: { type: "enabled", budget_tokens: 2250 } });
    expect(build({ input: "x", reasoning: { effort: "high" }, max_output_tokens: 1300 }).body.thinking).toBeUndefined();
    expect(build({ input: "x", reasoning: { effort: "none" } }).body.thinking).toBeUndefined();
    // A forced tool and thinking do not go together on Anthropic: the forced choice wins.
    const forced = build({ input: "x", reasoning: { effort: "low" }, tools: [{ type: "function", name: "f" }], tool_choice: "required" }).body;
    expect(forced.thinking).toBeUndefined();
    expect(forced.tool_choice).toEqual({ type: "any" });
  });

  it("turns thinking off for a tool loop whose last assistant turn came back without its thinking", () => {
    const input: Item[] = [
      { role: "user", content: "q" },
      { type: "function_call", call_id: "c1", name: "f", arguments: "{}" },
      { type: "function_call_output", call_id: "c1", output: "ok" },
    ];
    expect(build({ input, reasoning: { effort: "low" } }).body.thinking).toBeUndefined();
    const withThinking = [input[0]!, { type: "reasoning", summary: [], encrypted_content: encodeThinking(thinking) }, ...input.slice(1)];
    expect(build({ input: withThinking, reasoning: { effort: "low" } }).body.thinking).toEqual({ type: "enabled", budget_tokens: 2048 });
  });

  it("sends temperature/top_p only on versions that take them, temperature capped at Anthropic's 1", () => {
    expect(build({ input: "x", temperature: 1.5, top_p: 0.9 }, { version: versionTraits("2023-06-01") }).body).toMatchObject({ temperature: 1, top_p: 0.9 });
    const modern = build({ input: "x", temperature: 0.5, top_p: 0.9 }).body;
    expect(modern.temperature).toBeUndefined();
    expect(modern.top_p).toBeUndefined();
  });

  it("a json_schema format's description reaches the answer tool", () => {
    const t = build({ input: "x", text: { format: { type: "json_schema", name: "city", description: "The city the user asked about", schema: { type: "object", properties: { name: { type: "string" } } } } } });
    expect(t.body.tools[0].description).toContain("The answer: The city the user asked about");
  });

  it("service_tier default is Anthropic's standard_only; other tiers leave Anthropic's own default", () => {
    expect(build({ input: "x", service_tier: "default" }).body.service_tier).toBe("standard_only");
    for (const tier of ["auto", "priority", "flex", undefined] as const) expect(build({ input: "x", service_tier: tier }).body.service_tier).toBeUndefined();
  });

  it("maps stop, max_output_tokens and the user id (metadata.user_id, else safety_identifier, else user)", () => {
    const b = build({ input: "x", stop: ["END", "  "], max_output_tokens: 77, safety_identifier: "sid", user: "u" }).body;
    expect(b).toMatchObject({ stop_sequences: ["END"], max_tokens: 77, metadata: { user_id: "sid" } });
    expect(build({ input: "x", metadata: { user_id: "meta" }, user: "u" }).body.metadata).toEqual({ user_id: "meta" });
  });

  it("structured output: a forced answer tool, or output_config.format when native", () => {
    const format = { type: "json_schema", name: "person", schema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] } };
    const t = build({ input: "x", text: { format } });
    expect(t.answerTool).toBe("person");
    expect(t.body.tools).toEqual([{ name: "person", description: expect.any(String), input_schema: format.schema }]);
    expect(t.body.tool_choice).toEqual({ type: "tool", name: "person" });
    const withTools = build({ input: "x", tools, text: { format } });
    expect(withTools.body.tool_choice).toEqual({ type: "any" });
    const native = build({ input: "x", text: { format } }, { structuredOutput: "native" });
    expect(native.answerTool).toBeNull();
    expect(native.body.output_config).toEqual({ format: { type: "json_schema", schema: format.schema } });
    expect(native.body.tools).toBeUndefined();
  });

  it("places at most four cache breakpoints on the stable prefix: last tool, last system block, the history before the newest turn", () => {
    const input: Item[] = [
      { role: "user", content: "turn 1" },
      { type: "reasoning", summary: [], encrypted_content: encodeThinking(thinking) },
      { role: "assistant", content: [{ type: "output_text", text: "answer 1" }] },
      { role: "user", content: "turn 2" },
    ];
    const b = build({ input, instructions: "sys", tools }, { promptCaching: true }).body;
    expect(b.tools.at(-1).cache_control).toEqual({ type: "ephemeral" });
    expect(b.system.at(-1).cache_control).toEqual({ type: "ephemeral" });
    expect(b.messages[1].content).toEqual([thinking, { type: "text", text: "answer 1", cache_control: { type: "ephemeral" } }]);
    expect(b.messages[2].content[0].cache_control).toBeUndefined();
    expect(JSON.stringify(b).split("cache_control").length - 1).toBeLessThanOrEqual(4);
    expect(JSON.stringify(build({ input, tools }, { promptCaching: false }).body)).not.toContain("cache_control");
  });
});

describe("anthropic errors", () => {
  it("names the Responses parameter where Anthropic's message names its field", () => {
    expect(paramOf("max_tokens: Field required")).toBe("max_output_tokens");
    expect(paramOf("messages.1.content.0.image.source.base64: invalid")).toBe("input");
    expect(paramOf("tools.2.input_schema: JSON schema is invalid")).toBe("tools[2].parameters");
    expect(paramOf("Overloaded")).toBeNull();
    expect(anthropicErrorBody({ message: "Overloaded", type: "overloaded_error", param: null, code: null }, 529)).toEqual({ message: "Overloaded", type: "server_error", param: null, code: "upstream_overloaded" });
    expect(anthropicErrorBody({ message: "model: claude-x not found", type: "not_found_error", param: null, code: null }, 404)).toEqual({ message: "model: claude-x not found", type: "invalid_request_error", param: "model", code: "model_not_found" });
    const tooLong = "prompt is too long: 210000 tokens > 200000 maximum";
    expect(anthropicErrorBody({ message: tooLong, type: "invalid_request_error", param: null, code: null }, 400)).toEqual({ message: tooLong, type: "invalid_request_error", param: "input", code: "context_length_exceeded" });
  });
});
