import type { Response as OpenAIResponse, ResponseItem, ResponseUsage } from "openai/resources/responses/responses";
import { describe, expect, it } from "vitest";
import { allEvents, callRouter, until } from "../helpers/background.js";
import { useTwoKindRouter } from "../helpers/router.js";

/**
 * Objects the router builds itself carry every field OpenAI's own objects carry (the
 * openai package's types and the published schema): input items, usage, echoed tools, and
 * one skeleton for every snapshot of a response.
 */
const env = useTwoKindRouter();
const kinds = ["local", "gpt-4.1"] as const;

/** Top-level keys every Response snapshot the router emits carries. */
const SNAPSHOT_KEYS = ["text", "service_tier", "max_tool_calls", "top_logprobs", "prompt_cache_key", "safety_identifier", "reasoning", "truncation", "tools", "tool_choice", "metadata", "store", "background"];

describe.each(kinds)("shapes (model %s)", (model) => {
  it("input_items: history messages, calls and outputs carry status; output_text parts carry annotations and logprobs", async () => {
    const created = await env.router.client.responses.create({
      model,
      input: [
        { role: "user", content: "what is the weather?" },
        { type: "function_call", call_id: "call_1", name: "weather", arguments: "{}" },
        { type: "function_call_output", call_id: "call_1", output: "sunny" },
        { role: "assistant", content: "It is sunny." },
        { type: "message", role: "assistant", content: [{ type: "output_text", text: "Anything else?" }] } as never,
        { role: "user", content: "thanks" },
      ],
    });
    const page = await env.router.client.responses.inputItems.list(created.id, { order: "asc" });
    const items: ResponseItem[] = page.data;
    expect(items.map((i) => i.type)).toEqual(["message", "function_call", "function_call_output", "message", "message", "message"]);
    for (const item of items) {
      if (item.type === "function_call" || item.type === "function_call_output") expect(item.status).toBe("completed");
      if (item.type === "message") {
        expect(item.status).toBe("completed");
        if (item.role !== "assistant") continue;
        for (const part of item.content) {
          expect(part.type).toBe("output_text");
          if (part.type !== "output_text") continue;
          expect(part.annotations).toEqual([]);
          expect(part.logprobs).toEqual([]);
        }
      }
    }
  });

  it("usage carries input_tokens_details.cache_write_tokens", async () => {
    const r = await env.router.client.responses.create({ model, input: "hi" });
    const usage: ResponseUsage = r.usage!;
    expect(typeof usage.input_tokens_details.cache_write_tokens).toBe("number");
  });

  it("function tools are echoed with OpenAI's defaults (strict, description, parameters)", async () => {
    const r = await env.router.client.responses.create({
      model,
      input: "hi",
      tools: [{ type: "function", name: "weather", parameters: { type: "object", properties: {} } } as never],
    });
    if (model !== "local") return; // the native upstream echoes tools itself
    expect(r.tools).toEqual([{ type: "function", name: "weather", description: null, parameters: { type: "object", properties: {} }, strict: true }]);
  });

  it("every snapshot of a background response (queued, in_progress, terminal, GET, cancel) carries the same fields", async () => {
    const call = callRouter(env.router.url, "test-key");
    const created = (await (await call("/v1/responses", { body: { model, input: "hi", background: true } })).json()) as OpenAIResponse;
    for (const key of SNAPSHOT_KEYS) expect(created, key).toHaveProperty(key);
    expect(created.text?.verbosity).toBe("medium");
    await until(async () => (await env.router.client.responses.retrieve(created.id)).status === "completed", "completion");
    const events = await allEvents(await call(`/v1/responses/${created.id}?stream=true`));
    const snapshots = events.filter((e) => e.type.startsWith("response.") && "response" in e).map((e) => e.response as Record<string, unknown>);
    expect(snapshots.length).toBeGreaterThanOrEqual(3);
    for (const s of snapshots) for (const key of SNAPSHOT_KEYS) expect(s, `${key} in ${String(s.status)}`).toHaveProperty(key);
    const got = await env.router.client.responses.retrieve(created.id);
    for (const key of SNAPSHOT_KEYS) expect(got, key).toHaveProperty(key);
  });

  it("a cache hit carries the same fields and values as the miss it came from (JSON and stream)", async () => {
    const call = callRouter(env.router.url, "test-key");
    const body = { model, input: `cache me ${model}`, router: { cache: true }, text: { verbosity: "high" }, max_tool_calls: 2 };
    const miss = (await (await call("/v1/responses", { body })).json()) as Record<string, unknown>;
    const hit = (await (await call("/v1/responses", { body })).json()) as Record<string, unknown>;
    expect(env.chat.requests.length + env.oai.requests.length).toBe(1);
    // A hit is a new response: its own id, item ids and times (a second may pass between the two).
    const strip = (r: Record<string, unknown>) => ({ ...r, id: undefined, created_at: undefined, completed_at: undefined, output: (r.output as { id: string }[]).map((i) => ({ ...i, id: undefined })) });
    expect(strip(hit)).toEqual(strip(miss));
    expect(hit.completed_at as number).toBeGreaterThanOrEqual(miss.completed_at as number);
    const events = await allEvents(await call("/v1/responses", { body: { ...body, stream: true } }));
    const done = events.at(-1)!.response as Record<string, unknown>;
    expect(Object.keys(done).sort()).toEqual(Object.keys(miss).sort());
  });

  it("a queued snapshot echoes verbosity, service_tier, max_tool_calls, top_logprobs, prompt_cache_key and safety_identifier as sent", async () => {
    const call = callRouter(env.router.url, "test-key");
    const body = { model, input: "hi", background: true, text: { verbosity: "low" }, service_tier: "flex", max_tool_calls: 3, top_logprobs: 2, prompt_cache_key: "k", safety_identifier: "s" };
    const created = (await (await call("/v1/responses", { body })).json()) as OpenAIResponse;
    expect(created).toMatchObject({ text: { format: { type: "text" }, verbosity: "low" }, service_tier: "flex", max_tool_calls: 3, top_logprobs: 2, prompt_cache_key: "k", safety_identifier: "s" });
    await until(async () => (await env.router.client.responses.retrieve(created.id)).status === "completed", "completion");
  });
});
