import { describe, expect, it } from "vitest";
import { assertResponsesGrammar } from "../helpers/grammar.js";
import { chatCompletion, chatToolCallChunks } from "../helpers/mock-upstream.js";
import { parseSse, useTwoKindRouter } from "../helpers/router.js";

const env = useTwoKindRouter();

describe("translated path (kind: chat) through the openai SDK", () => {
  it("answers a string input with a complete Response object", async () => {
    const r = await env.router.client.responses.create({ model: "local", input: "hi", instructions: "be brief" });
    expect(r.id).toMatch(/^resp_/);
    expect(r.object).toBe("response");
    expect(r.status).toBe("completed");
    expect(r.output_text).toBe("Hello world");
    expect(r.model).toBe("local");
    expect(r.usage).toEqual({ input_tokens: 5, input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 }, output_tokens: 2, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 7 });
    const sent = env.chat.requests[0]!.body;
    expect(sent.model).toBe("llama3.1:8b");
    expect(sent.messages).toEqual([
      { role: "system", content: "be brief" },
      { role: "user", content: "hi" },
    ]);
  });

  it("streams the full event grammar and the SDK accumulates it", async () => {
    const stream = env.router.client.responses.stream({ model: "local", input: "hi" });
    const types: string[] = [];
    for await (const ev of stream) types.push(ev.type);
    const final = await stream.finalResponse();
    expect(final.output_text).toBe("Hello world");
    expect(types).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
  });

  it("streams text followed by two tool calls with arguments as they arrive", async () => {
    env.chat.enqueue("/chat/completions", {
      kind: "sse",
      frames: chatToolCallChunks(
        [
          { id: "call_a", name: "get_weather", args: ['{"ci', 'ty":', '"Paris"}'] },
          { id: "call_b", name: "get_time", args: ["{}"] },
        ],
        "Let me check.",
      ),
    });
    const res = await env.router.fetch("/v1/responses", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "local", input: "weather?", stream: true, tools: [{ type: "function", name: "get_weather", parameters: { type: "object" } }, { type: "function", name: "get_time", parameters: { type: "object" } }] }) });
    const events = parseSse(await res.text()).map((f) => f.data);
    assertResponsesGrammar(events);
    const argDeltas = events.filter((e) => e.type === "response.function_call_arguments.delta");
    expect(argDeltas.map((e) => e.delta)).toEqual(['{"ci', 'ty":', '"Paris"}', "{}"]);
    const done = events.at(-1);
    expect(done.type).toBe("response.completed");
    expect(done.response.output.map((o: any) => o.type)).toEqual(["message", "function_call", "function_call"]);
    expect(done.response.output[1]).toMatchObject({ call_id: "call_a", name: "get_weather", arguments: '{"city":"Paris"}' });
  });

  it("turns an upstream that dies mid-stream into response.failed", async () => {
    env.chat.enqueue("/chat/completions", { kind: "sse", frames: chatToolCallChunks([{ id: "c", name: "f", args: ['{"a"', ":1}"] }]), dieAfter: 2 });
    const res = await env.router.fetch("/v1/responses", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "local", input: "x", stream: true }) });
    expect(res.status).toBe(200);
    const events = parseSse(await res.text()).map((f) => f.data);
    expect(events.at(-1).type).toBe("response.failed");
    expect(events.at(-1).response.error.code).toBeTruthy();
  });

  it("gives an HTTP error when the upstream fails before the first byte", async () => {
    env.chat.enqueue("/chat/completions", { kind: "json", status: 400, body: { error: { message: "context too long", type: "invalid_request_error", param: "messages", code: "context_length_exceeded" } } });
    await expect(env.router.client.responses.create({ model: "local", input: "x", stream: true })).rejects.toMatchObject({ status: 400, code: "context_length_exceeded" });
  });

  it("chains with previous_response_id, lists input items and deletes", async () => {
    const first = await env.router.client.responses.create({ model: "local", input: "my name is Ann", instructions: "only on turn one" });
    env.chat.enqueue("/chat/completions", { kind: "json", body: chatCompletion("Your name is Ann") });
    const second = await env.router.client.responses.create({ model: "local", input: "what is my name?", previous_response_id: first.id });
    expect(second.previous_response_id).toBe(first.id);
    const sent = env.chat.requests.at(-1)!.body;
    expect(sent.messages).toEqual([
      { role: "user", content: "my name is Ann" },
      { role: "assistant", content: "Hello world" },
      { role: "user", content: "what is my name?" },
    ]);
    const got = await env.router.client.responses.retrieve(second.id);
    expect(got.output_text).toBe("Your name is Ann");
    const items = await env.router.client.responses.inputItems.list(second.id, { order: "asc" });
    expect(items.data.map((i: any) => i.type)).toEqual(["message", "message", "message"]);
    expect(items.data.every((i: any) => typeof i.id === "string")).toBe(true);
    const del = await env.router.client.responses.delete(second.id);
    expect(del).toMatchObject({ id: second.id, object: "response", deleted: true });
    await expect(env.router.client.responses.retrieve(second.id)).rejects.toMatchObject({ status: 404 });
    await expect(env.router.client.responses.create({ model: "local", input: "x", previous_response_id: "resp_doesnotexist" })).rejects.toMatchObject({
      status: 404,
      code: "previous_response_not_found",
    });
  });
});

describe("requests the router does not serve", () => {
  it("answers 404 for a conversation that does not exist", async () => {
    await expect(env.router.client.responses.create({ model: "local", input: "x", conversation: "conv_123" })).rejects.toMatchObject({
      status: 404,
      error: { message: "Conversation with id 'conv_123' not found.", param: "conversation" },
    });
    expect(env.chat.requests).toHaveLength(0);
  });

  it("answers 400 naming 'input' when there is nothing for the model to read", async () => {
    await expect(env.router.client.responses.create({ model: "local", input: [] })).rejects.toMatchObject({ status: 400, param: "input" });
    const ok = await env.router.client.responses.create({ model: "local", input: [], instructions: "say hi" });
    expect(ok.status).toBe("completed");
  });
});
