/**
 * kind: anthropic held against the openai package as the other kinds are (conformance.test.ts):
 * every object the kind emits carries the fields the package marks required (checked at compile
 * time by the key lists, at run time on each object), streams pass the grammar and the SDK's own
 * accumulator. Paths: JSON, stream, background (queued, polled, re-streamed), cache hits, cancel,
 * input items, errors.
 */
import OpenAI from "openai";
import type { ErrorObject } from "openai/resources/shared";
import type { ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText, ResponseReasoningItem, ResponseUsage } from "openai/resources/responses/responses";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EmittedResponse, StreamEvent } from "../../src/wire/types.js";
import { allEvents, callRouter, until } from "../helpers/background.js";
import { assertResponsesGrammar, runThroughOpenAISdk } from "../helpers/grammar.js";
import { message, messageReply, startAnthropicMock, textBlock, thinkingBlock, toolUseBlock } from "../helpers/anthropic-mock.js";
import type { MockUpstream } from "../helpers/mock-upstream.js";
import { startTestRouter, type TestRouter } from "../helpers/router.js";

type RequiredKeys<T> = { [K in keyof T]-?: {} extends Pick<T, K> ? never : K }[keyof T];
type KeyList<T> = Record<RequiredKeys<T>, true>;

const RESPONSE: KeyList<EmittedResponse> = {
  id: true, access_programs: true, created_at: true, error: true, incomplete_details: true, instructions: true, metadata: true, model: true,
  object: true, output: true, parallel_tool_calls: true, temperature: true, tool_choice: true, tools: true, top_p: true, usage: true, store: true,
  completed_at: true, presence_penalty: true, frequency_penalty: true,
};
const USAGE: KeyList<ResponseUsage> = { input_tokens: true, input_tokens_details: true, output_tokens: true, output_tokens_details: true, total_tokens: true };
const USAGE_IN: KeyList<ResponseUsage.InputTokensDetails> = { cached_tokens: true, cache_write_tokens: true };
const MESSAGE: KeyList<ResponseOutputMessage> = { id: true, content: true, role: true, status: true, type: true };
const OUTPUT_TEXT: KeyList<ResponseOutputText> = { annotations: true, text: true, type: true };
const CALL: KeyList<ResponseFunctionToolCall> = { arguments: true, call_id: true, name: true, type: true };
const REASONING: KeyList<ResponseReasoningItem> = { id: true, summary: true, type: true };
const ERROR: KeyList<ErrorObject> = { code: true, message: true, param: true, type: true };

function expectKeys(obj: unknown, keys: object, what: string): void {
  expect(obj, what).toBeTypeOf("object");
  for (const key of Object.keys(keys)) expect(obj, `${what}.${key}`).toHaveProperty(key);
}

function expectItem(item: Record<string, unknown>, what: string): void {
  if (item.type === "message") {
    expectKeys(item, MESSAGE, what);
    for (const part of item.content as Record<string, unknown>[]) if (part.type === "output_text") expectKeys(part, OUTPUT_TEXT, `${what}.content`);
  }
  if (item.type === "function_call") expectKeys(item, CALL, what);
  if (item.type === "reasoning") expectKeys(item, REASONING, what);
}

function expectResponse(r: unknown, what: string): void {
  expectKeys(r, RESPONSE, what);
  const resp = r as { status: string; usage: ResponseUsage | null; output: Record<string, unknown>[] };
  if (resp.usage) {
    expectKeys(resp.usage, USAGE, `${what}.usage`);
    expectKeys(resp.usage.input_tokens_details, USAGE_IN, `${what}.usage.input_tokens_details`);
  } else expect(["queued", "in_progress", "failed", "cancelled"], `${what}: usage null while ${resp.status}`).toContain(resp.status);
  resp.output.forEach((item, i) => expectItem(item, `${what}.output[${i}]`));
}

function expectEvents(events: StreamEvent[], what: string): void {
  for (const e of events) {
    expect(typeof e.sequence_number, `${what}: ${e.type}.sequence_number`).toBe("number");
    if ("response" in e) expectResponse(e.response, `${what}: ${e.type}.response`);
    if ("item" in e && e.type === "response.output_item.done") expectItem(e.item as Record<string, unknown>, `${what}: ${e.type}.item`);
  }
}

let mock: MockUpstream;
let router: TestRouter;
const headers = { authorization: "Bearer test-key", "content-type": "application/json" };
const post = (body: Record<string, unknown>) => router.fetch("/v1/responses", { method: "POST", headers, body: JSON.stringify(body) });
const tools = [{ type: "function" as const, name: "weather", parameters: { type: "object", properties: {} }, strict: false }];

beforeAll(async () => {
  mock = await startAnthropicMock();
  // Every shape at once: thinking, text, a tool call; "HOLD" hangs (for cancel).
  const full = message([thinkingBlock("think", "sig=="), textBlock("Checking the weather."), toolUseBlock("toolu_1", "weather", {})], { stop_reason: "tool_use" });
  mock.setDefault("/messages", (req) => (JSON.stringify(req.body).includes("HOLD") ? { kind: "hang" } : messageReply(full, req)));
  router = await startTestRouter({ endpoints: [{ name: "claude-ep", url: mock.url, kind: "anthropic", api_key: "sk-ant-test-0123456789" }], models: { claude: { endpoints: ["claude-ep"] } } });
});
afterAll(async () => {
  await router?.close(1000);
  await mock?.close();
});

describe("conformance with the openai package (kind: anthropic)", () => {
  const model = "claude";

  it("JSON and stream: objects carry every required field; streams pass the grammar and the SDK accumulator", async () => {
    const json = await router.client.responses.create({ model, input: "hi", tools, reasoning: { effort: "low" } });
    expect(json.output.map((i) => i.type)).toEqual(["reasoning", "message", "function_call"]);
    expectResponse(json, "json");
    const events = await allEvents(await post({ model, input: "hi", tools, reasoning: { effort: "low" }, stream: true }));
    assertResponsesGrammar(events);
    expectEvents(events, "stream");
    const { final } = await runThroughOpenAISdk(events);
    expect(final.output_text).toBe(json.output_text);
    const streamed = await router.client.responses.stream({ model, input: "hi" }).finalResponse();
    expectResponse(await router.client.responses.retrieve(streamed.id), "retrieved");
  });

  it("background: queued, polled and re-streamed objects carry every required field", async () => {
    const created = await router.client.responses.create({ model, input: "hi", background: true });
    expectResponse(created, "queued");
    const done = await until(async () => {
      const r = await router.client.responses.retrieve(created.id);
      return r.status === "completed" ? r : null;
    }, "completion");
    expectResponse(done, "completed");
    const events = await allEvents(await callRouter(router.url, "test-key")(`/v1/responses/${created.id}?stream=true`));
    expectEvents(events, "re-stream");
    const { final } = await runThroughOpenAISdk(events);
    expect(final.output_text).toBe(done.output_text);
  });

  it("cache hits (JSON and stream) carry every required field", async () => {
    const body = { model, input: "conformance cache", router: { cache: true } };
    await post(body);
    const hit = await (await post(body)).json();
    expectResponse(hit, "cache hit");
    const events = await allEvents(await post({ ...body, stream: true }));
    assertResponsesGrammar(events);
    expectEvents(events, "cache hit stream");
    await runThroughOpenAISdk(events);
  });

  it("cancel: the cancelled response carries every required field", async () => {
    const created = await router.client.responses.create({ model, input: "HOLD", background: true });
    const cancelled = await router.client.responses.cancel(created.id);
    expect(cancelled.status).toBe("cancelled");
    expectResponse(cancelled, "cancelled");
  });

  it("errors: every failure has the error object's required fields and maps to the SDK's classes", async () => {
    const bad = await router.client.responses.create({ model, input: [{ role: "user", content: [{ type: "input_file", file_data: "data:application/zip;base64,UEsDBA==" }] }] }).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(OpenAI.BadRequestError);
    const unknownFile = await router.client.responses.create({ model, input: [{ role: "user", content: [{ type: "input_image", file_id: "file-1", detail: "auto" }] }] }).catch((e: unknown) => e);
    expect(unknownFile).toBeInstanceOf(OpenAI.NotFoundError);
    expectKeys((unknownFile as InstanceType<typeof OpenAI.NotFoundError>).error, ERROR, "404 error");
    expectKeys((bad as InstanceType<typeof OpenAI.BadRequestError>).error, ERROR, "400 error");
    const overloaded = (await mock.enqueue("/messages", { kind: "json", status: 529, body: { type: "error", error: { type: "overloaded_error", message: "Overloaded" } } }), await router.client.responses.create({ model, input: "hi" }).catch((e: unknown) => e));
    expect(overloaded).toBeInstanceOf(OpenAI.InternalServerError);
    expect((overloaded as InstanceType<typeof OpenAI.InternalServerError>).status).toBe(503);
    expectKeys((overloaded as InstanceType<typeof OpenAI.InternalServerError>).error, ERROR, "503 error");
  });
});
