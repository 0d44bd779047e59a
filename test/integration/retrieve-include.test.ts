import { describe, expect, it } from "vitest";
import { nativeResponse } from "../helpers/mock-upstream.js";
import { useTwoKindRouter } from "../helpers/router.js";

/**
 * `include` on GET /v1/responses/{id} and .../input_items: the router keeps every part, and
 * shows what OpenAI returns only on request (encrypted reasoning, logprobs, web search
 * sources, ...) only when the request names it.
 */
const env = useTwoKindRouter({ models: { "o4-mini": { endpoints: ["oai"] }, local: { endpoints: ["box"] }, "gpt-4.1": { endpoints: ["oai"] } } });

const logprobs = [{ token: "ok", logprob: -0.1, bytes: [111, 107], top_logprobs: [] }];
const reasoning = { id: "rs_up1", type: "reasoning", summary: [], encrypted_content: "gAAAA-secret" };
const search = { id: "ws_up1", type: "web_search_call", status: "completed", action: { type: "search", query: "q", sources: [{ type: "url", url: "https://example.com/" }] } };

function upstreamAnswer(id: string) {
  const body = nativeResponse("ok", "o4-mini", id, [reasoning, search]);
  (body.output.at(-1) as any).content[0].logprobs = logprobs;
  return body;
}

describe("include on retrieval", () => {
  it("GET /v1/responses/{id} omits what the include does not name, and shows what it does", async () => {
    env.oai.enqueue("/responses", { kind: "json", body: upstreamAnswer("resp_up_i1") });
    const r = await env.router.client.responses.create({ model: "o4-mini", input: "q?", include: ["message.output_text.logprobs", "web_search_call.action.sources"] });

    const plain = await env.router.client.responses.retrieve(r.id);
    expect(plain.output[0]).toEqual({ id: "rs_up1", type: "reasoning", summary: [] });
    expect((plain.output[1] as any).action).toEqual({ type: "search", query: "q" });
    expect((plain.output[2] as any).content[0].logprobs).toEqual([]);

    const full = await env.router.client.responses.retrieve(r.id, { include: ["reasoning.encrypted_content", "message.output_text.logprobs", "web_search_call.action.sources"] });
    expect(full.output[0]).toEqual(reasoning);
    expect((full.output[1] as any).action.sources).toEqual(search.action.sources);
    expect((full.output[2] as any).content[0].logprobs).toEqual(logprobs);

    // One include shows only its own part.
    const one = await env.router.client.responses.retrieve(r.id, { include: ["reasoning.encrypted_content"] });
    expect(one.output[0]).toEqual(reasoning);
    expect((one.output[2] as any).content[0].logprobs).toEqual([]);
  });

  it("the Python SDK's repeated include=... form works too", async () => {
    env.oai.enqueue("/responses", { kind: "json", body: upstreamAnswer("resp_up_i2") });
    const r = await env.router.client.responses.create({ model: "o4-mini", input: "q?" });
    const res = await env.router.fetch(`/v1/responses/${r.id}?include=reasoning.encrypted_content&include=web_search_call.action.sources`);
    const body: any = await res.json();
    expect(body.output[0].encrypted_content).toBe("gAAAA-secret");
    expect(body.output[1].action.sources).toHaveLength(1);
  });

  it("GET .../input_items honours include on the stored history", async () => {
    env.oai.enqueue("/responses", { kind: "json", body: upstreamAnswer("resp_up_i3") });
    const t1 = await env.router.client.responses.create({ model: "o4-mini", input: "q?" });
    const t2 = await env.router.client.responses.create({ model: "o4-mini", input: [{ role: "user", content: [{ type: "input_image", image_url: "https://example.com/a.png", detail: "auto" }] }], previous_response_id: t1.id });

    const plain = (await env.router.client.responses.inputItems.list(t2.id, { order: "asc" })).data as any[];
    expect(plain.find((i) => i.type === "reasoning")).toEqual({ id: "rs_up1", type: "reasoning", summary: [] });
    expect(plain.find((i) => i.type === "web_search_call").action.sources).toBeUndefined();
    expect(plain.find((i) => i.role === "assistant").content[0].logprobs).toEqual([]);
    expect(plain.at(-1).content[0].image_url).toBeUndefined();

    const full = (
      await env.router.client.responses.inputItems.list(t2.id, {
        order: "asc",
        include: ["reasoning.encrypted_content", "message.output_text.logprobs", "web_search_call.action.sources", "message.input_image.image_url"],
      })
    ).data as any[];
    expect(full.find((i) => i.type === "reasoning").encrypted_content).toBe("gAAAA-secret");
    expect(full.find((i) => i.type === "web_search_call").action.sources).toEqual(search.action.sources);
    expect(full.find((i) => i.role === "assistant").content[0].logprobs).toEqual(logprobs);
    expect(full.at(-1).content[0].image_url).toBe("https://example.com/a.png");
  });

  it("an unknown include value is a 400 naming it", async () => {
    env.oai.enqueue("/responses", { kind: "json", body: upstreamAnswer("resp_up_i4") });
    const r = await env.router.client.responses.create({ model: "o4-mini", input: "q?" });
    await expect(env.router.client.responses.retrieve(r.id, { include: ["nope" as any] })).rejects.toMatchObject({ status: 400, param: "include", code: "invalid_value" });
    await expect(env.router.client.responses.inputItems.list(r.id, { include: ["nope" as any] })).rejects.toMatchObject({ status: 400, param: "include" });
  });
});
