import OpenAI from "openai";
import type { ResponseInputItem } from "openai/resources/responses/responses";
import { beforeAll, describe, expect, it } from "vitest";
import { type Script } from "../helpers/mock-upstream.js";
import { useTwoKindRouter } from "../helpers/router.js";

/**
 * Every Responses method the router serves (create, stream, retrieve, cancel, delete,
 * input items), called through the real openai SDK
 * (its own paths, query encoding, pagination and error classes), on both kinds.
 */
const env = useTwoKindRouter();

beforeAll(() => {
  // A request that says HOLD never gets an answer: it stays in progress until cancelled.
  const hold: Script = (req) => (JSON.stringify(req.body).includes("HOLD") ? { kind: "hang" } : undefined);
  env.chat.setDefault("/chat/completions", hold);
  env.oai.setDefault("/responses", hold);
});

const turns = (n: number): ResponseInputItem[] => Array.from({ length: n }, (_, i) => ({ role: "user" as const, content: `message ${i}` }));
const texts = (items: { type: string; content?: unknown }[]) => items.map((i) => ((i.content as { text: string }[])[0] ?? { text: "" }).text);

describe.each(["local", "gpt-4.1"])("openai SDK Responses methods (model %s)", (model) => {
  it("create, then retrieve returns the same stored response", async () => {
    const created = await env.router.client.responses.create({ model, input: "hi", metadata: { team: "a" } });
    const got = await env.router.client.responses.retrieve(created.id);
    expect(got).toEqual(created);
    expect(got.output_text).toBe(model === "local" ? "Hello world" : "Hello from upstream");
  });

  it("responses.stream() and create({stream: true}) store what they streamed", async () => {
    const stream = env.router.client.responses.stream({ model, input: "hi" });
    const final = await stream.finalResponse();
    // The stream helper adds its own parse results (output_parsed, parsed); everything else is what was stored.
    expect(final).toMatchObject(await env.router.client.responses.retrieve(final.id));

    const events = await env.router.client.responses.create({ model, input: "hi", stream: true });
    let completed: OpenAI.Responses.Response | null = null;
    for await (const ev of events) if (ev.type === "response.completed") completed = ev.response;
    const stored = await env.router.client.responses.retrieve(completed!.id);
    expect(stored.output).toEqual(completed!.output);
    expect(stored.status).toBe("completed");
  });

  it("inputItems.list pages with after/limit/order/has_more, and the SDK's auto-pagination walks them all", async () => {
    const created = await env.router.client.responses.create({ model, input: turns(5) });

    const first = await env.router.client.responses.inputItems.list(created.id, { limit: 2, order: "asc" });
    expect(texts(first.data)).toEqual(["message 0", "message 1"]);
    expect(first.has_more).toBe(true);
    const raw = (await (await env.router.fetch(`/v1/responses/${created.id}/input_items?limit=2&order=asc`, { headers: { authorization: "Bearer test-key" } })).json()) as { object: string; first_id: string; last_id: string; has_more: boolean };
    expect([raw.object, raw.first_id, raw.last_id, raw.has_more]).toEqual(["list", first.data[0]!.id, first.data[1]!.id, true]);
    expect(first.hasNextPage()).toBe(true);
    const second = await first.getNextPage();
    expect(texts(second.data)).toEqual(["message 2", "message 3"]);

    const all: string[] = [];
    for await (const item of env.router.client.responses.inputItems.list(created.id, { limit: 2, order: "asc" })) all.push(texts([item])[0]!);
    expect(all).toEqual(["message 0", "message 1", "message 2", "message 3", "message 4"]);

    const newest = await env.router.client.responses.inputItems.list(created.id, { limit: 3 }); // order defaults to desc
    expect(texts(newest.data)).toEqual(["message 4", "message 3", "message 2"]);
    const after = await env.router.client.responses.inputItems.list(created.id, { after: newest.data[2]!.id, limit: 10 });
    expect(texts(after.data)).toEqual(["message 1", "message 0"]);
    expect(after.has_more).toBe(false);

    const bad = await env.router.client.responses.inputItems.list(created.id, { limit: 101 }).then(() => null, (e: unknown) => e);
    expect(bad).toBeInstanceOf(OpenAI.BadRequestError);
  });

  it("inputItems auto-paging ends on a chain whose backend repeats its item ids (the mock's openai answers are all msg_up1)", async () => {
    let prev: string | undefined;
    for (const q of ["one", "two", "three"]) prev = (await env.router.client.responses.create({ model, input: q, previous_response_id: prev })).id;
    const seen: string[] = [];
    for await (const item of env.router.client.responses.inputItems.list(prev!, { limit: 2 })) {
      seen.push(item.id);
      if (seen.length > 10) break; // the same page again and again
    }
    expect(seen.length).toBeLessThanOrEqual(5);
    expect(new Set(seen).size).toBe(seen.length);
  });

  it("previous_response_id chains; input items list the whole context", async () => {
    const first = await env.router.client.responses.create({ model, input: "one" });
    const second = await env.router.client.responses.create({ model, input: "two", previous_response_id: first.id });
    const items = await env.router.client.responses.inputItems.list(second.id, { order: "asc" });
    expect(items.data.map((i) => i.type)).toEqual(["message", "message", "message"]);
    expect(items.data.map((i) => (i as { role: string }).role)).toEqual(["user", "assistant", "user"]);
  });

  it("cancel: a background response in progress ends cancelled, idempotently; a foreground one cannot be cancelled", async () => {
    const created = await env.router.client.responses.create({ model, input: "HOLD", background: true });
    expect(created.status).toBe("queued");
    const cancelled = await env.router.client.responses.cancel(created.id);
    expect(cancelled.id).toBe(created.id);
    expect(cancelled.status).toBe("cancelled");
    expect(await env.router.client.responses.cancel(created.id)).toEqual(cancelled);
    expect((await env.router.client.responses.retrieve(created.id)).status).toBe("cancelled");

    const foreground = await env.router.client.responses.create({ model, input: "hi" });
    await expect(env.router.client.responses.cancel(foreground.id)).rejects.toBeInstanceOf(OpenAI.BadRequestError);
  });

  it("delete, after which retrieve and delete answer 404 (NotFoundError)", async () => {
    const created = await env.router.client.responses.create({ model, input: "hi" });
    await env.router.client.responses.delete(created.id);
    const raw = await env.router.fetch(`/v1/responses/${created.id}`, { method: "DELETE", headers: { authorization: "Bearer test-key" } });
    expect(raw.status).toBe(404);
    await expect(env.router.client.responses.retrieve(created.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(env.router.client.responses.delete(created.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });
});

it("the SDK's error classes map from the router's statuses", async () => {
  await expect(env.router.client.responses.create({ model: "nope", input: "hi" })).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  await expect(env.router.client.responses.create({ model: "local", input: "hi", temperature: 3 })).rejects.toBeInstanceOf(OpenAI.BadRequestError);
  await expect(env.router.client.responses.retrieve("resp_unknown")).rejects.toMatchObject({ status: 404, type: "invalid_request_error" });
});
