import { describe, expect, it } from "vitest";
import { assertResponsesGrammar } from "../helpers/grammar.js";
import { nativeEvents, nativeResponse, upstreamError } from "../helpers/mock-upstream.js";
import { parseSse, useTwoKindRouter } from "../helpers/router.js";

const env = useTwoKindRouter();

describe("native path (kind: openai)", () => {
  it("forwards the body with unknown fields, forces store:false and rewrites the id", async () => {
    const r = await env.router.client.responses.create({ model: "gpt-4.1", input: "hi", prompt_cache_key: "abc", client_metadata: { a: "1" } } as any);
    expect(r.id).toMatch(/^resp_/);
    expect(r.id).not.toBe("resp_upstream123");
    expect((r as any).store).toBe(true);
    expect(r.output_text).toBe("Hello from upstream");
    const sent = env.oai.requests[0]!;
    expect(sent.body.store).toBe(false);
    expect(sent.body.prompt_cache_key).toBe("abc");
    expect(sent.body.client_metadata).toEqual({ a: "1" });
    expect(sent.headers.authorization).toBe("Bearer sk-upstream-secret-0123456789");
  });

  it("rewrites the id in every stream event and the SDK accepts the stream", async () => {
    const res = await env.router.fetch("/v1/responses", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "gpt-4.1", input: "hi", stream: true }) });
    const text = await res.text();
    expect(text).not.toContain("resp_upstream123");
    const events = parseSse(text).map((f) => f.data);
    assertResponsesGrammar(events);
    expect(events[0].response.id).toBe(events.at(-1).response.id);

    const stream = env.router.client.responses.stream({ model: "gpt-4.1", input: "hi" });
    const final = await stream.finalResponse();
    expect(final.output_text).toBe("Hello from upstream");
    expect(final.id).not.toBe("resp_upstream123");
  });

  it("replays stored history instead of previous_response_id, across backend kinds", async () => {
    const t1 = await env.router.client.responses.create({ model: "local", input: "turn one" });
    const t2 = await env.router.client.responses.create({ model: "gpt-4.1", input: "turn two", previous_response_id: t1.id });
    const sent = env.oai.requests.at(-1)!.body;
    expect(sent.previous_response_id).toBeUndefined();
    expect(sent.store).toBe(false);
    expect(sent.input.map((i: any) => [i.role, i.id])).toEqual([
      ["user", undefined],
      ["assistant", undefined],
      ["user", undefined],
    ]);
    const t3 = await env.router.client.responses.create({ model: "local", input: "turn three", previous_response_id: t2.id });
    expect(env.chat.requests.at(-1)!.body.messages.map((m: any) => m.content)).toEqual(["turn one", "Hello world", "turn two", "Hello from upstream", "turn three"]);
    expect(t3.previous_response_id).toBe(t2.id);
  });

  it("keeps upstream error status and body", async () => {
    env.oai.enqueue("/responses", upstreamError(400, "Invalid value for 'temperature'.", "invalid_value", "invalid_request_error", "temperature"));
    await expect(env.router.client.responses.create({ model: "gpt-4.1", input: "x" })).rejects.toMatchObject({ status: 400, code: "invalid_value", param: "temperature" });
  });

  it("asks for encrypted reasoning on reasoning models and replays it next turn", async () => {
    env.router.config.models["o4-mini"] = { endpoints: ["oai"], hosted_tools: "drop" } as any;
    env.router.config.targets.set("o4-mini", [{ endpoint: "oai", upstreamModel: "o4-mini", weight: 1 }]);
    const reasoning = { id: "rs_up1", type: "reasoning", summary: [], encrypted_content: "gAAAA-secret" };
    env.oai.enqueue("/responses", { kind: "json", body: nativeResponse("4", "o4-mini", "resp_up_r1", [reasoning]) });
    const t1 = await env.router.client.responses.create({ model: "o4-mini", input: "2+2?" });
    expect(env.oai.requests.at(-1)!.body.include).toContain("reasoning.encrypted_content");
    expect(JSON.stringify(t1.output)).not.toContain("gAAAA-secret");
    await env.router.client.responses.create({ model: "o4-mini", input: "and 3+3?", previous_response_id: t1.id });
    const replay = env.oai.requests.at(-1)!.body.input;
    expect(replay[1]).toEqual({ type: "reasoning", id: "rs_up1", summary: [], encrypted_content: "gAAAA-secret" });
  });

  it("ends a stream that dies mid-way with response.failed carrying the router id", async () => {
    env.oai.enqueue("/responses", { kind: "sse", frames: nativeEvents(nativeResponse("partial text here")), dieAfter: 5 });
    const res = await env.router.fetch("/v1/responses", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "gpt-4.1", input: "x", stream: true }) });
    const events = parseSse(await res.text()).map((f) => f.data);
    const last = events.at(-1);
    expect(last.type).toBe("response.failed");
    expect(last.response.id).toBe(events[0].response.id);
    expect(last.sequence_number).toBe(events.length - 1);
  });
});
