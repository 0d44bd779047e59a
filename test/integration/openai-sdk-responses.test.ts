import OpenAI from "openai";
import type { ResponseInputItem } from "openai/resources/responses/responses";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startMockUpstream, type MockUpstream, type Script } from "../helpers/mock-upstream.js";
import { startTestRouter, twoKindConfig, type TestRouter } from "../helpers/router.js";

/**
 * Every Responses method the router serves (create, stream, retrieve, cancel, delete,
 * input items), called through the real openai SDK
 * (its own paths, query encoding, pagination and error classes), on both kinds.
 */
let chat: MockUpstream;
let oai: MockUpstream;
let router: TestRouter;

beforeAll(async () => {
  chat = await startMockUpstream();
  oai = await startMockUpstream();
  router = await startTestRouter(twoKindConfig(chat.url, oai.url));
  // A request that says HOLD never gets an answer: it stays in progress until cancelled.
  const hold: Script = (req) => (JSON.stringify(req.body).includes("HOLD") ? { kind: "hang" } : undefined);
  chat.setDefault("/chat/completions", hold);
  oai.setDefault("/responses", hold);
});
afterAll(async () => {
  await router.close(1000);
  await chat.close();
  await oai.close();
});
beforeEach(() => {
  chat.requests.length = 0;
  oai.requests.length = 0;
});

const turns = (n: number): ResponseInputItem[] => Array.from({ length: n }, (_, i) => ({ role: "user" as const, content: `message ${i}` }));
const texts = (items: { type: string; content?: unknown }[]) => items.map((i) => ((i.content as { text: string }[])[0] ?? { text: "" }).text);

describe.each(["local", "gpt-4.1"])("openai SDK Responses methods (model %s)", (model) => {
  it("create, then retrieve returns the same stored response", async () => {
    const created = await router.client.responses.create({ model, input: "hi", metadata: { team: "a" } });
    const got = await router.client.responses.retrieve(created.id);
    expect(got).toEqual(created);
    expect(got.output_text).toBe(model === "local" ? "Hello world" : "Hello from upstream");
  });

  it("responses.stream() and create({stream: true}) store what they streamed", async () => {
    const stream = router.client.responses.stream({ model, input: "hi" });
    const final = await stream.finalResponse();
    // The stream helper adds its own parse results (output_parsed, parsed); everything else is what was stored.
    expect(final).toMatchObject(await router.client.responses.retrieve(final.id));

    const events = await router.client.responses.create({ model, input: "hi", stream: true });
    let completed: OpenAI.Responses.Response | null = null;
    for await (const ev of events) if (ev.type === "response.completed") completed = ev.response;
    const stored = await router.client.responses.retrieve(completed!.id);
    expect(stored.output).toEqual(completed!.output);
    expect(stored.status).toBe("completed");
  });

  it("inputItems.list pages with after/limit/order/has_more, and the SDK's auto-pagination walks them all", async () => {
    const created = await router.client.responses.create({ model, input: turns(5) });

    const first = await router.client.responses.inputItems.list(created.id, { limit: 2, order: "asc" });
    expect(texts(first.data)).toEqual(["message 0", "message 1"]);
    expect(first.has_more).toBe(true);
    const raw = (await (await router.fetch(`/v1/responses/${created.id}/input_items?limit=2&order=asc`, { headers: { authorization: "Bearer test-key" } })).json()) as { object: string; first_id: string; last_id: string; has_more: boolean };
    expect([raw.object, raw.first_id, raw.last_id, raw.has_more]).toEqual(["list", first.data[0]!.id, first.data[1]!.id, true]);
    expect(first.hasNextPage()).toBe(true);
    const second = await first.getNextPage();
    expect(texts(second.data)).toEqual(["message 2", "message 3"]);

    const all: string[] = [];
    for await (const item of router.client.responses.inputItems.list(created.id, { limit: 2, order: "asc" })) all.push(texts([item])[0]!);
    expect(all).toEqual(["message 0", "message 1", "message 2", "message 3", "message 4"]);

    const newest = await router.client.responses.inputItems.list(created.id, { limit: 3 }); // order defaults to desc
    expect(texts(newest.data)).toEqual(["message 4", "message 3", "message 2"]);
    const after = await router.client.responses.inputItems.list(created.id, { after: newest.data[2]!.id, limit: 10 });
    expect(texts(after.data)).toEqual(["message 1", "message 0"]);
    expect(after.has_more).toBe(false);

    const bad = await router.client.responses.inputItems.list(created.id, { limit: 101 }).then(() => null, (e: unknown) => e);
    expect(bad).toBeInstanceOf(OpenAI.BadRequestError);
  });

  it("previous_response_id chains; input items list the whole context", async () => {
    const first = await router.client.responses.create({ model, input: "one" });
    const second = await router.client.responses.create({ model, input: "two", previous_response_id: first.id });
    const items = await router.client.responses.inputItems.list(second.id, { order: "asc" });
    expect(items.data.map((i) => i.type)).toEqual(["message", "message", "message"]);
    expect(items.data.map((i) => (i as { role: string }).role)).toEqual(["user", "assistant", "user"]);
  });

  it("cancel: a background response in progress ends cancelled, idempotently; a foreground one cannot be cancelled", async () => {
    const created = await router.client.responses.create({ model, input: "HOLD", background: true });
    expect(created.status).toBe("queued");
    const cancelled = await router.client.responses.cancel(created.id);
    expect(cancelled.id).toBe(created.id);
    expect(cancelled.status).toBe("cancelled");
    expect(await router.client.responses.cancel(created.id)).toEqual(cancelled);
    expect((await router.client.responses.retrieve(created.id)).status).toBe("cancelled");

    const foreground = await router.client.responses.create({ model, input: "hi" });
    await expect(router.client.responses.cancel(foreground.id)).rejects.toBeInstanceOf(OpenAI.BadRequestError);
  });

  it("delete, after which retrieve and delete answer 404 (NotFoundError)", async () => {
    const created = await router.client.responses.create({ model, input: "hi" });
    await router.client.responses.delete(created.id);
    const raw = await router.fetch(`/v1/responses/${created.id}`, { method: "DELETE", headers: { authorization: "Bearer test-key" } });
    expect(raw.status).toBe(404);
    await expect(router.client.responses.retrieve(created.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(router.client.responses.delete(created.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });
});

it("the SDK's error classes map from the router's statuses", async () => {
  await expect(router.client.responses.create({ model: "nope", input: "hi" })).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  await expect(router.client.responses.create({ model: "local", input: "hi", temperature: 3 })).rejects.toBeInstanceOf(OpenAI.BadRequestError);
  await expect(router.client.responses.retrieve("resp_unknown")).rejects.toMatchObject({ status: 404, type: "invalid_request_error" });
});
