import { describe, expect, it } from "vitest";
import { nativeEvents, nativeResponse } from "../helpers/mock-upstream.js";
import { parseSse, useTwoKindRouter } from "../helpers/router.js";

/**
 * On `kind: openai` the router asks for encrypted reasoning the client may not have asked for
 * and hides it from the client. Only reasoning items are hidden: a compaction item's
 * `encrypted_content` is the item itself, needed next turn.
 */
const env = useTwoKindRouter({
  models: { "gpt-5-codex": { endpoints: ["oai"] }, local: { endpoints: ["box"] }, "gpt-4.1": { endpoints: ["oai"] } },
});

const reasoning = { id: "rs_up1", type: "reasoning", summary: [], encrypted_content: "gAAAA-reasoning" };
const compaction = { id: "cmp_up1", type: "compaction", encrypted_content: "gAAAA-compaction" };

describe("hidden encrypted reasoning on kind: openai", () => {
  it("keeps a compaction item's encrypted_content in a JSON answer (reasoning's is hidden)", async () => {
    env.oai.enqueue("/responses", { kind: "json", body: nativeResponse("ok", "gpt-5-codex", "resp_up_c1", [reasoning, compaction]) });
    const r = await env.router.client.responses.create({ model: "gpt-5-codex", input: "go" });
    expect(env.oai.requests.at(-1)!.body.include).toContain("reasoning.encrypted_content");
    expect(r.output[0]).toEqual({ id: "rs_up1", type: "reasoning", summary: [] });
    expect(r.output[1]).toEqual(compaction);
    const got = await env.router.client.responses.retrieve(r.id);
    expect(got.output[1]).toEqual(compaction);
    expect(JSON.stringify(got.output[0])).not.toContain("gAAAA-reasoning");
  });

  it("keeps it in every streamed event (the SDK's final response too)", async () => {
    env.oai.enqueue("/responses", { kind: "sse", frames: nativeEvents(nativeResponse("ok", "gpt-5-codex", "resp_up_c2", [reasoning, compaction])) });
    const res = await env.router.fetch("/v1/responses", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "gpt-5-codex", input: "go", stream: true }) });
    const events = parseSse(await res.text()).map((f) => f.data);
    const itemEvents = events.filter((e) => e.type === "response.output_item.added" || e.type === "response.output_item.done");
    expect(itemEvents.filter((e) => e.item.type === "compaction").map((e) => e.item.encrypted_content)).toEqual(["gAAAA-compaction", "gAAAA-compaction"]);
    expect(itemEvents.filter((e) => e.item.type === "reasoning").every((e) => !("encrypted_content" in e.item))).toBe(true);
    expect(events.at(-1).response.output[1]).toEqual(compaction);

    env.oai.enqueue("/responses", { kind: "sse", frames: nativeEvents(nativeResponse("ok", "gpt-5-codex", "resp_up_c3", [reasoning, compaction])) });
    const final = await env.router.client.responses.stream({ model: "gpt-5-codex", input: "go" }).finalResponse();
    expect(final.output[1]).toEqual(compaction);
    expect(final.output[0]).toEqual({ id: "rs_up1", type: "reasoning", summary: [] });
  });

  it("replays the compaction item upstream on the next turn", async () => {
    env.oai.enqueue("/responses", { kind: "json", body: nativeResponse("ok", "gpt-5-codex", "resp_up_c4", [compaction]) });
    const t1 = await env.router.client.responses.create({ model: "gpt-5-codex", input: "go" });
    await env.router.client.responses.create({ model: "gpt-5-codex", input: "next", previous_response_id: t1.id });
    expect(env.oai.requests.at(-1)!.body.input).toContainEqual({ type: "compaction", encrypted_content: "gAAAA-compaction" });
  });
});
