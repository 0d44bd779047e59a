import { describe, expect, it } from "vitest";
import { chatTextChunks, nativeEvents, nativeResponse } from "../helpers/mock-upstream.js";
import { useTwoKindRouter } from "../helpers/router.js";
import { finalResponse, WsClient } from "../helpers/ws-client.js";

/** WebSocket details real clients rely on: Codex's events, prewarm, OpenAI's error frames. */
const env = useTwoKindRouter();
const sse = (text: string) => ({ kind: "sse" as const, frames: [...chatTextChunks([text]), "data: [DONE]\n\n"] });

describe("WebSocket details", () => {
  it("Codex's response.processed is accepted silently; the socket stays usable", async () => {
    const ws = new WsClient(env.router.url);
    try {
      env.chat.enqueue("/chat/completions", sse("one"));
      const first = finalResponse(await ws.create({ model: "local", input: "hi" }));
      ws.send({ type: "response.processed", response_id: first.id });
      env.chat.enqueue("/chat/completions", sse("two"));
      const events = await ws.create({ model: "local", input: "again", previous_response_id: first.id });
      expect(finalResponse(events).output[0].content[0].text).toBe("two");
      expect(ws.events.filter((e) => e.type === "error")).toEqual([]);
    } finally {
      ws.close();
    }
  });

  it("prompt_cache_options.prewarm: true on chat is a warm-up without generation that chains (socket and HTTP); openai backends get it as sent", async () => {
    const ws = new WsClient(env.router.url);
    try {
      const events = await ws.create({ model: "local", input: "long shared prefix", prompt_cache_options: { prewarm: true } } as any);
      expect(events.map((e) => e.type)).toEqual(["response.created", "response.in_progress", "response.completed"]);
      const warm = finalResponse(events);
      expect(warm).toMatchObject({ status: "completed", output: [] });
      expect(env.chat.requests).toHaveLength(0);
      env.chat.enqueue("/chat/completions", sse("answer"));
      finalResponse(await ws.create({ model: "local", input: "the question", previous_response_id: warm.id }));
      expect(env.chat.requests.at(-1)!.body.messages.map((m: any) => m.content)).toEqual(["long shared prefix", "the question"]);

      env.oai.enqueue("/responses", { kind: "sse", frames: nativeEvents(nativeResponse("")) });
      finalResponse(await ws.create({ model: "gpt-4.1", input: "prefix", prompt_cache_options: { prewarm: true } } as any));
      expect(env.oai.requests.at(-1)!.body.prompt_cache_options).toEqual({ prewarm: true });
    } finally {
      ws.close();
    }
    const overHttp = await env.router.client.responses.create({ model: "local", input: "prefix", prompt_cache_options: { prewarm: true } } as any);
    expect(overHttp).toMatchObject({ status: "completed", output: [] });
    const streamed = await env.router.client.responses.stream({ model: "local", input: "prefix", prompt_cache_options: { prewarm: true } } as any).finalResponse();
    expect(streamed).toMatchObject({ status: "completed", output: [] });
    expect(env.chat.requests).toHaveLength(1);
  });

  it("context_management.compact_threshold below 1000 is OpenAI's 400, over HTTP and the socket", async () => {
    const body = { model: "local", input: "x", context_management: [{ type: "compaction", compact_threshold: 999 }] };
    const err = await env.router.client.responses.create(body as any).catch((e) => e);
    expect(err.status).toBe(400);
    expect(err.error).toMatchObject({
      type: "invalid_request_error",
      param: "context_management[0].compact_threshold",
      code: "integer_below_min_value",
      message: "Invalid 'context_management[0].compact_threshold': integer below minimum value. Expected a value >= 1000, but got 999 instead.",
    });
    const ws = new WsClient(env.router.url);
    try {
      const [frame] = await ws.create(body as any);
      expect(frame).toMatchObject({ type: "error", status: 400, error: { code: "integer_below_min_value", param: "context_management[0].compact_threshold" } });
    } finally {
      ws.close();
    }
    expect(env.chat.requests).toHaveLength(0);
  });
});
