import OpenAI from "openai";
import type { ErrorObject } from "openai/resources/shared";
import type {
  ResponseFunctionToolCall,
  ResponseFunctionToolCallItem,
  ResponseFunctionToolCallOutputItem,
  ResponseInputMessageItem,
  ResponseItem,
  ResponseOutputMessage,
  ResponseOutputText,
  ResponseReasoningItem,
  ResponseUsage,
} from "openai/resources/responses/responses";
import { beforeAll, describe, expect, it } from "vitest";
import type { EmittedResponse, StreamEvent } from "../../src/wire/types.js";
import { allEvents, callRouter, until } from "../helpers/background.js";
import { assertResponsesGrammar, runThroughOpenAISdk } from "../helpers/grammar.js";
import type { Script } from "../helpers/mock-upstream.js";
import { useTwoKindRouter } from "../helpers/router.js";

/**
 * Every object and event the router emits, on both kinds, held against the openai
 * package: at compile time (the key lists below must name every field the package marks
 * required - tsc fails when it gains one) and at run time (each object has those fields;
 * streams go through the SDK's own accumulator). Paths: JSON, stream, background (queued,
 * polled, re-streamed), cache hits, cancel, input items, errors.
 */
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
const INPUT_MESSAGE: KeyList<ResponseInputMessageItem> = { id: true, content: true, role: true, type: true };
const INPUT_CALL: KeyList<ResponseFunctionToolCallItem> = { id: true, status: true, arguments: true, call_id: true, name: true, type: true };
const INPUT_CALL_OUTPUT: KeyList<ResponseFunctionToolCallOutputItem> = { id: true, output: true, status: true, type: true };
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

/** A Response object as OpenAI sends it: every required field, typed usage (null only before the end), typed items. */
function expectResponse(r: unknown, what: string): void {
  expectKeys(r, RESPONSE, what);
  const resp = r as { status: string; usage: ResponseUsage | null; output: Record<string, unknown>[] };
  if (resp.usage) {
    expectKeys(resp.usage, USAGE, `${what}.usage`);
    expectKeys(resp.usage.input_tokens_details, USAGE_IN, `${what}.usage.input_tokens_details`);
  } else expect(["queued", "in_progress", "failed", "cancelled"], `${what}: usage null while ${resp.status}`).toContain(resp.status);
  resp.output.forEach((item, i) => expectItem(item, `${what}.output[${i}]`));
}

/** Every snapshot and item in a stream of events. */
function expectEvents(events: StreamEvent[], what: string): void {
  for (const e of events) {
    expect(typeof e.sequence_number, `${what}: ${e.type}.sequence_number`).toBe("number");
    if ("response" in e) expectResponse(e.response, `${what}: ${e.type}.response`);
    if ("item" in e && e.type === "response.output_item.done") expectItem(e.item as Record<string, unknown>, `${what}: ${e.type}.item`);
    if (e.type === "error") expectKeys(e, { code: true, message: true, param: true }, `${what}: error`);
  }
}

const env = useTwoKindRouter();
const headers = { authorization: "Bearer test-key", "content-type": "application/json" };
const post = (body: Record<string, unknown>) => env.router.fetch("/v1/responses", { method: "POST", headers, body: JSON.stringify(body) });

beforeAll(() => {
  const hold: Script = (req) => (JSON.stringify(req.body).includes("HOLD") ? { kind: "hang" } : undefined);
  env.chat.setDefault("/chat/completions", hold);
  env.oai.setDefault("/responses", hold);
});

describe.each(["local", "gpt-4.1"])("conformance with the openai package (model %s)", (model) => {
  const tools = [{ type: "function" as const, name: "weather", parameters: { type: "object", properties: {} }, strict: false }];

  it("JSON and stream: objects carry every required field; streams pass the grammar and the SDK accumulator", async () => {
    const json = await env.router.client.responses.create({ model, input: "hi", tools });
    expectResponse(json, "json");
    const events = await allEvents(await post({ model, input: "hi", tools, stream: true }));
    assertResponsesGrammar(events);
    expectEvents(events, "stream");
    const { final } = await runThroughOpenAISdk(events);
    expect(final.output_text).toBe(json.output_text);
    const streamed = await env.router.client.responses.stream({ model, input: "hi" }).finalResponse();
    expectResponse(await env.router.client.responses.retrieve(streamed.id), "retrieved");
  });

  it("background: queued, polled and re-streamed objects carry every required field", async () => {
    const created = await env.router.client.responses.create({ model, input: "hi", background: true });
    expectResponse(created, "queued");
    const done = await until(async () => {
      const r = await env.router.client.responses.retrieve(created.id);
      return r.status === "completed" ? r : null;
    }, "completion");
    expectResponse(done, "completed");
    const events = await allEvents(await callRouter(env.router.url, "test-key")(`/v1/responses/${created.id}?stream=true`));
    expectEvents(events, "re-stream");
    const { final } = await runThroughOpenAISdk(events);
    expect(final.output_text).toBe(done.output_text);
    // The SDK's own re-stream call accepts it too.
    const sdkStream = await env.router.client.responses.retrieve(created.id, { stream: true });
    const types: string[] = [];
    for await (const e of sdkStream) types.push(e.type);
    expect(types.at(-1)).toBe("response.completed");
  });

  it("cache hits (JSON and stream) carry every required field", async () => {
    const body = { model, input: `conformance cache ${model}`, router: { cache: true } };
    await post(body);
    const hit = await (await post(body)).json();
    expectResponse(hit, "cache hit");
    const events = await allEvents(await post({ ...body, stream: true }));
    assertResponsesGrammar(events);
    expectEvents(events, "cache hit stream");
    await runThroughOpenAISdk(events);
  });

  it("cancel: the cancelled response carries every required field", async () => {
    const created = await env.router.client.responses.create({ model, input: "HOLD", background: true });
    const cancelled = await env.router.client.responses.cancel(created.id);
    expect(cancelled.status).toBe("cancelled");
    expectResponse(cancelled, "cancelled");
    expectResponse(await env.router.client.responses.retrieve(created.id), "cancelled GET");
  });

  it("input items carry every required field of their type", async () => {
    const created = await env.router.client.responses.create({
      model,
      input: [
        { role: "user", content: "weather?" },
        { type: "function_call", call_id: "call_1", name: "weather", arguments: "{}" },
        { type: "function_call_output", call_id: "call_1", output: "sunny" },
        { role: "assistant", content: "Sunny." },
        { role: "user", content: "thanks" },
      ],
    });
    const page = await env.router.client.responses.inputItems.list(created.id, { order: "asc" });
    expect(page.data).toHaveLength(5);
    page.data.forEach((item: ResponseItem, i) => {
      const what = `input_items[${i}]`;
      if (item.type === "message") {
        expectKeys(item, item.role === "assistant" ? MESSAGE : INPUT_MESSAGE, what);
        if (item.role === "assistant") for (const part of item.content) expectKeys(part, OUTPUT_TEXT, `${what}.content`);
      } else if (item.type === "function_call") expectKeys(item, INPUT_CALL, what);
      else if (item.type === "function_call_output") expectKeys(item, INPUT_CALL_OUTPUT, what);
    });
    const raw = (await (await env.router.fetch(`/v1/responses/${created.id}/input_items`, { headers })).json()) as Record<string, unknown>;
    expectKeys(raw, { object: true, data: true, first_id: true, last_id: true, has_more: true }, "input item list");
  });

  it("errors: every failure has the error object's required fields and maps to the SDK's classes", async () => {
    const bad = await env.router.client.responses.create({ model, input: "hi", temperature: 3 }).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(OpenAI.BadRequestError);
    expectKeys((bad as InstanceType<typeof OpenAI.BadRequestError>).error, ERROR, "400 error");
    const missing = await env.router.client.responses.retrieve("resp_nope").catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
    expectKeys((missing as InstanceType<typeof OpenAI.NotFoundError>).error, ERROR, "404 error");
  });
});
