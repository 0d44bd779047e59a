import { describe, expect, it } from "vitest";
import { ApiError, toApiError } from "../../src/ops/errors.js";
import { TranslationError } from "../../src/translate/errors.js";
import { normalizeInput, responsesToChatRequest } from "../../src/translate/chat/request.js";
import type { ChatRequestOptions } from "../../src/translate/chat/request.js";
import type { CreateResponseRequest, Item } from "../../src/wire/types.js";

const OPTS: ChatRequestOptions = { upstreamModel: "llama3:8b", stream: false, developerRole: "system", hostedTools: "drop" };
const translate = (req: Partial<CreateResponseRequest>, opts: Partial<ChatRequestOptions> = {}) => {
  const full = { model: "m", ...req } as CreateResponseRequest;
  return responsesToChatRequest(full, normalizeInput(full.input), { ...OPTS, ...opts });
};
const messages = (req: Partial<CreateResponseRequest>, opts: Partial<ChatRequestOptions> = {}) => translate(req, opts).body.messages;

/** The translation core throws its own TranslationError; the client sees it as errors.ts maps it. */
function apiError(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(TranslationError);
    const e = toApiError(err);
    expect(e).toBeInstanceOf(ApiError);
    expect(e.status).toBe(400);
    expect(e.type).toBe("invalid_request_error");
    return e;
  }
  throw new Error("expected an ApiError");
}

describe("normalizeInput", () => {
  it("turns a string into one typed user message", () => {
    expect(normalizeInput("hello")).toEqual([{ type: "message", role: "user", content: [{ type: "input_text", text: "hello" }] }]);
  });
  it("types easy messages and keeps ids and typed items", () => {
    const fc = { type: "function_call", id: "fc_1", call_id: "c", name: "f", arguments: "{}" };
    expect(normalizeInput([{ role: "assistant", content: "yo", id: "msg_9" }, { role: "user", content: "hi" }, fc])).toEqual([
      { type: "message", role: "assistant", id: "msg_9", content: [{ type: "output_text", text: "yo" }] },
      { type: "message", role: "user", content: [{ type: "input_text", text: "hi" }] },
      fc,
    ]);
    expect(normalizeInput(undefined)).toEqual([]);
  });
});

describe("responsesToChatRequest: messages", () => {
  it("string input -> one user message", () => {
    const { body } = translate({ input: "hello" });
    expect(body).toEqual({ model: "llama3:8b", messages: [{ role: "user", content: "hello" }] });
  });

  it("instructions become a leading system message", () => {
    expect(messages({ input: "hi", instructions: "be brief" })).toEqual([
      { role: "system", content: "be brief" },
      { role: "user", content: "hi" },
    ]);
  });

  it("text + image parts -> chat parts; detail kept", () => {
    const input: Item[] = [{ type: "message", role: "user", content: [
      { type: "input_text", text: "describe" },
      { type: "input_image", image_url: "http://x/y.png" },
      { type: "input_image", image_url: "data:image/png;base64,AA", detail: "low" },
    ] }];
    expect(messages({ input })[0]).toEqual({ role: "user", content: [
      { type: "text", text: "describe" },
      { type: "image_url", image_url: { url: "http://x/y.png" } },
      { type: "image_url", image_url: { url: "data:image/png;base64,AA", detail: "low" } },
    ] });
  });

  it("a single text part collapses to a string", () => {
    expect(messages({ input: [{ type: "message", role: "user", content: [{ type: "input_text", text: "yo" }] }] })[0]!.content).toBe("yo");
  });

  it("developer role follows opts.developerRole", () => {
    const input: Item[] = [{ role: "developer", content: "rules" }, { role: "user", content: "hi" }];
    expect(messages({ input })[0]).toEqual({ role: "system", content: "rules" });
    expect(messages({ input }, { developerRole: "developer" })[0]).toEqual({ role: "developer", content: "rules" });
  });

  it("easy and typed messages of all roles, assistant history parts joined", () => {
    const input: Item[] = [
      { role: "system", content: "sys" },
      { role: "user", content: "Name some towns" },
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "Galway, " }, { type: "output_text", text: "Sligo" }] },
      { type: "message", role: "assistant", content: [{ type: "refusal", refusal: "I can't." }] },
      { role: "user", content: "Which is largest?" },
    ];
    expect(messages({ input })).toEqual([
      { role: "system", content: "sys" },
      { role: "user", content: "Name some towns" },
      { role: "assistant", content: "Galway, Sligo" },
      { role: "assistant", content: "I can't." },
      { role: "user", content: "Which is largest?" },
    ]);
  });

  it("function_call round trip: call -> assistant tool_calls, output -> tool message", () => {
    const input: Item[] = [
      { type: "function_call", call_id: "c1", name: "get", arguments: '{"x":1}' },
      { type: "function_call_output", call_id: "c1", output: "42" },
    ];
    expect(messages({ input })).toEqual([
      { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "get", arguments: '{"x":1}' } }] },
      { role: "tool", tool_call_id: "c1", content: "42" },
    ]);
  });

  it("consecutive calls form one assistant message, merged into a preceding assistant message", () => {
    const input: Item[] = [
      { role: "user", content: "go" },
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "Checking." }] },
      { type: "function_call", call_id: "a", name: "f", arguments: "{}" },
      { type: "function_call", call_id: "b", name: "g", arguments: "{}" },
      { type: "function_call_output", call_id: "a", output: [{ type: "input_text", text: "A" }, { type: "input_text", text: "!" }] },
      { type: "function_call_output", call_id: "b", output: "B" },
    ];
    const m = messages({ input });
    expect(m).toHaveLength(4);
    expect(m[1]).toMatchObject({ role: "assistant", content: "Checking." });
    expect(m[1]!.tool_calls!.map((c) => c.id)).toEqual(["a", "b"]);
    expect(m[2]).toEqual({ role: "tool", tool_call_id: "a", content: "A!" });
    expect(m[3]).toEqual({ role: "tool", tool_call_id: "b", content: "B" });
  });

  it("images in a tool output follow the tool messages as a user message", () => {
    const input: Item[] = [
      { type: "function_call", call_id: "a", name: "view_image", arguments: "{}" },
      { type: "function_call_output", call_id: "a", output: [{ type: "input_image", image_url: "data:image/png;base64,AA" }] },
      { role: "user", content: "and?" },
    ];
    expect(messages({ input }).map((m) => m.role)).toEqual(["assistant", "tool", "user", "user"]);
    expect(messages({ input })[2]!.content).toEqual([{ type: "image_url", image_url: { url: "data:image/png;base64,AA" } }]);
  });

  it("reasoning items are dropped and replayed as reasoning_content on the next assistant message", () => {
    const input: Item[] = [
      { role: "user", content: "q" },
      { type: "reasoning", id: "rs_1", summary: [], content: [{ type: "reasoning_text", text: "thinking" }] },
      { type: "function_call", call_id: "c", name: "f", arguments: "{}" },
      { type: "function_call_output", call_id: "c", output: "ok" },
      { type: "reasoning", id: "rs_2", summary: [{ type: "summary_text", text: "sum" }], encrypted_content: "xx" },
      { role: "assistant", content: "done" },
      { type: "reasoning", id: "rs_3", summary: [{ type: "summary_text", text: "orphan" }] },
      { role: "user", content: "next" },
    ];
    const m = messages({ input });
    expect(m[1]).toMatchObject({ role: "assistant", reasoning_content: "thinking" });
    expect(m[3]).toEqual({ role: "assistant", content: "done", reasoning_content: "sum" });
    expect(m[4]).toEqual({ role: "user", content: "next" });
  });

  it("previous-response history (input + message/function_call/function_call_output outputs) then the new turn", () => {
    const history: Item[] = [
      { type: "message", id: "msg_in", role: "user", content: [{ type: "input_text", text: "first?" }] },
      { type: "reasoning", id: "rs_1", summary: [], content: [{ type: "reasoning_text", text: "hmm" }] },
      { type: "message", id: "msg_1", role: "assistant", status: "completed", content: [{ type: "output_text", text: "turn-one", annotations: [], logprobs: [] }] },
      { type: "function_call", id: "fc_1", status: "completed", call_id: "call_1", name: "lookup", arguments: '{"q":"x"}' },
      { type: "web_search_call", id: "ws_1", status: "completed", action: { type: "search", query: "x" } },
      { type: "function_call_output", id: "fco_1", call_id: "call_1", output: "found" },
    ];
    const items = [...history, ...normalizeInput("second?")];
    const { body } = responsesToChatRequest({ model: "m", input: "second?", instructions: "sys" }, items, OPTS);
    expect(body.messages).toEqual([
      { role: "system", content: "sys" },
      { role: "user", content: "first?" },
      {
        role: "assistant", content: "turn-one", reasoning_content: "hmm",
        tool_calls: [{ id: "call_1", type: "function", function: { name: "lookup", arguments: '{"q":"x"}' } }],
      },
      { role: "tool", tool_call_id: "call_1", content: "found" },
      { role: "user", content: "second?" },
    ]);
  });
});

describe("responsesToChatRequest: tools", () => {
  const fn = { type: "function", name: "f", description: "d", parameters: { type: "object" } };

  it("function tools map to chat functions (strict only when given)", () => {
    const { body } = translate({ input: "x", tools: [fn, { type: "function", name: "g", strict: true, parameters: null }], tool_choice: "required", parallel_tool_calls: false });
    expect(body.tools).toEqual([
      { type: "function", function: { name: "f", description: "d", parameters: { type: "object" } } },
      { type: "function", function: { name: "g", strict: true } },
    ]);
    expect(body.tool_choice).toBe("required");
    expect(body.parallel_tool_calls).toBe(false);
  });

  it("namespace tools are flattened; the map goes both ways; history calls re-join", () => {
    const tools = [
      { type: "function", name: "exec_command" },
      { type: "namespace", name: "crm", description: "CRM", tools: [{ type: "function", name: "lookup", description: "find", parameters: { type: "object" } }, { type: "function", name: "update" }] },
    ];
    const input: Item[] = [{ type: "function_call", call_id: "c", name: "lookup", namespace: "crm", arguments: "{}" }];
    const { body, toolNames } = translate({ input, tools, tool_choice: { type: "function", name: "lookup", namespace: "crm" } });
    expect(body.tools!.map((t) => t.function.name)).toEqual(["exec_command", "crm__lookup", "crm__update"]);
    expect(body.tools![1]!.function).toEqual({ name: "crm__lookup", description: "find", parameters: { type: "object" } });
    expect(toolNames.fromChat["crm__lookup"]).toEqual({ name: "lookup", namespace: "crm" });
    expect(toolNames.fromChat["exec_command"]).toBeUndefined();
    expect(body.messages[0]!.tool_calls![0]!.function.name).toBe("crm__lookup");
    expect(body.tool_choice).toEqual({ type: "function", function: { name: "crm__lookup" } });
  });

  it("flattened names stay chat-safe, unique and at most 64 chars", () => {
    const long = "x".repeat(80);
    const tools = [
      { type: "function", name: "a__b" },
      { type: "namespace", name: "a", description: "", tools: [{ type: "function", name: "b" }] },
      { type: "namespace", name: "mcp:server.v1", description: "", tools: [{ type: "function", name: long }] },
    ];
    const names = translate({ input: "x", tools }).body.tools!.map((t) => t.function.name);
    expect(names[0]).toBe("a__b");
    expect(names[1]).toBe("a__b_2");
    expect(names[2]!.length).toBeLessThanOrEqual(64);
    for (const n of names) expect(n).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
  });

  it("hosted tools are dropped and listed; tool_choice naming one falls back to auto", () => {
    const { body, droppedTools } = translate({
      input: "x",
      tools: [fn, { type: "web_search", external_web_access: false }, { type: "code_interpreter" }, { type: "image_generation" }],
      tool_choice: { type: "web_search" },
    });
    expect(droppedTools).toEqual(["web_search", "code_interpreter", "image_generation"]);
    expect(body.tools).toHaveLength(1);
    expect(body.tool_choice).toBe("auto");
  });

  it("with only hosted tools left, no tools / tool_choice / parallel_tool_calls are sent", () => {
    const { body, droppedTools } = translate({ input: "x", tools: [{ type: "file_search" }], tool_choice: "required", parallel_tool_calls: true });
    expect(droppedTools).toEqual(["file_search"]);
    expect(body).not.toHaveProperty("tools");
    expect(body).not.toHaveProperty("tool_choice");
    expect(body).not.toHaveProperty("parallel_tool_calls");
  });

  it("hostedTools: reject -> 400 naming tools[i].type (also inside a namespace)", () => {
    expect(apiError(() => translate({ input: "x", tools: [fn, { type: "web_search" }] }, { hostedTools: "reject" })).param).toBe("tools[1].type");
    const ns = { type: "namespace", name: "n", description: "", tools: [{ type: "function", name: "ok" }, { type: "web_search" }] };
    expect(apiError(() => translate({ input: "x", tools: [ns] }, { hostedTools: "reject" })).param).toBe("tools[0].tools[1].type");
  });
});

describe("responsesToChatRequest: options", () => {
  it("maps text.format, max_output_tokens, reasoning, sampling, logprobs; drops metadata", () => {
    const { body } = translate({
      input: "x",
      text: { format: { type: "json_schema", name: "out", schema: { type: "object" }, strict: true, description: "d" } },
      max_output_tokens: 100,
      reasoning: { effort: "low", summary: "auto" },
      temperature: 0.2,
      top_p: 0.9,
      user: "u1",
      metadata: { a: "b" },
      include: ["message.output_text.logprobs"],
      top_logprobs: 3,
      seed: 7,
      stop: ["\n"],
    });
    expect(body).toEqual({
      model: "llama3:8b",
      messages: [{ role: "user", content: "x" }],
      response_format: { type: "json_schema", json_schema: { name: "out", schema: { type: "object" }, strict: true, description: "d" } },
      max_tokens: 100,
      reasoning_effort: "low",
      temperature: 0.2,
      top_p: 0.9,
      user: "u1",
      top_logprobs: 3,
      logprobs: true,
      seed: 7,
      stop: ["\n"],
    });
  });

  it("json_object passes, text passes nothing; stream adds include_usage", () => {
    expect(translate({ input: "x", text: { format: { type: "json_object" } } }).body.response_format).toEqual({ type: "json_object" });
    expect(translate({ input: "x", text: { format: { type: "text" } } }).body).not.toHaveProperty("response_format");
    const { body } = translate({ input: "x" }, { stream: true });
    expect(body.stream).toBe(true);
    expect(body.stream_options).toEqual({ include_usage: true });
  });
});

describe("responsesToChatRequest: errors name the param", () => {
  const cases: [string, Partial<CreateResponseRequest>, string, Partial<ChatRequestOptions>?][] = [
    ["file_id image", { input: [{ role: "user", content: "a" }, { role: "user", content: "b" }, { type: "message", role: "user", content: [{ type: "input_image", file_id: "file_1" }] }] }, "input[2].content[0].file_id"],
    ["image without url", { input: [{ type: "message", role: "user", content: [{ type: "input_image" }] }] }, "input[0].content[0].image_url"],
    ["input_file by file_id (no Files API)", { input: [{ type: "message", role: "user", content: [{ type: "input_text", text: "a" }, { type: "input_file", file_id: "f" }] }] }, "input[0].content[1].file_id"],
    ["input_audio without data", { input: [{ type: "message", role: "user", content: [{ type: "input_audio" }] }] }, "input[0].content[0].input_audio"],
    ["unknown part", { input: [{ type: "message", role: "user", content: [{ type: "video" }] }] }, "input[0].content[0].type"],
    ["item_reference left", { input: [{ role: "user", content: "a" }, { type: "item_reference", id: "msg_x" }] }, "input[1]"],
    ["unknown item type", { input: [{ type: "frobnicate" }] }, "input[0].type"],
    ["item without type/role", { input: [{ content: "x" } as Item] }, "input[0].type"],
    ["bad role", { input: [{ role: "robot", content: "x" }] }, "input[0].role"],
    ["call without call_id", { input: [{ type: "function_call", name: "f", arguments: "{}" }] }, "input[0].call_id"],
    ["output without output", { input: [{ type: "function_call_output", call_id: "c" }] }, "input[0].output"],
    ["tool without type", { input: "x", tools: [{ name: "f" }] }, "tools[0].type"],
    ["function without name", { input: "x", tools: [{ type: "function" }] }, "tools[0].name"],
    ["namespace without name", { input: "x", tools: [{ type: "namespace", tools: [] }] }, "tools[0].name"],
    ["namespace member without name", { input: "x", tools: [{ type: "namespace", name: "n", tools: [{ type: "function" }] }] }, "tools[0].tools[0].name"],
    ["bad tool_choice", { input: "x", tools: [{ type: "function", name: "f" }], tool_choice: "sometimes" }, "tool_choice"],
    ["tool_choice for an absent hosted tool", { input: "x", tools: [{ type: "function", name: "f" }], tool_choice: { type: "file_search" } }, "tool_choice.type"],
    ["json_schema without name", { input: "x", text: { format: { type: "json_schema", schema: {} } } }, "text.format.name"],
    ["json_schema without schema", { input: "x", text: { format: { type: "json_schema", name: "n" } } }, "text.format.schema"],
    ["unknown text format", { input: "x", text: { format: { type: "yaml" } } }, "text.format.type"],
  ];
  for (const [name, req, param, opts] of cases) {
    it(`${name} -> 400 ${param}`, () => {
      const e = apiError(() => translate(req, opts));
      expect(e.param).toBe(param);
      expect(e.message.length).toBeGreaterThan(10);
    });
  }

  it("historyItems: params count the client's input from 0 and name previous_response_id for history", () => {
    const items: Item[] = [{ type: "message", role: "user", content: "old" }, { type: "frobnicate" }];
    expect(apiError(() => responsesToChatRequest({ model: "m" }, items, { ...OPTS, historyItems: 1 })).param).toBe("input[0].type");
    const bad: Item[] = [{ type: "message", role: "user", content: [{ type: "input_image", file_id: "f" }] }, ...normalizeInput("hi")];
    expect(apiError(() => responsesToChatRequest({ model: "m" }, bad, { ...OPTS, historyItems: 1 })).param).toBe("previous_response_id.content[0].file_id");
  });
});

describe("responsesToChatRequest: requests a chat backend cannot serve", () => {
  it("a stored prompt template is a 400 naming 'prompt'", () => {
    expect(apiError(() => translate({ prompt: { id: "pmpt_1" } } as Partial<CreateResponseRequest>)).param).toBe("prompt");
  });
});
