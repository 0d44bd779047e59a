import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chatTextChunks, nativeEvents, nativeResponse } from "../helpers/mock-upstream.js";
import { startTestRouter, type TestRouter } from "../helpers/router.js";
import { finalResponse, WsClient } from "../helpers/ws-client.js";

/**
 * An upstream that writes its whole stream at once, each frame its own HTTP chunk (a fast model):
 * the router reads many frames per socket read, most reads ending inside a frame.
 */
const PIECES = Array.from({ length: 3000 }, (_, i) => `w${i}€ `);
const TEXT = PIECES.join("");

function startBurstUpstream(): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      if (req.url!.endsWith("/chat/completions")) {
        for (const f of chatTextChunks(PIECES, "m")) res.write(`data: ${JSON.stringify(f.data)}\n\n`);
        res.end("data: [DONE]\n\n");
        return;
      }
      for (const f of nativeEvents(nativeResponse(TEXT), PIECES)) res.write(`event: ${f.event}\ndata: ${JSON.stringify(f.data)}\n\n`);
      res.end();
    });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1` })));
}

describe("an upstream that sends its stream faster than the router reads it", () => {
  let up: Awaited<ReturnType<typeof startBurstUpstream>>;
  let router: TestRouter;
  beforeAll(async () => {
    up = await startBurstUpstream();
    router = await startTestRouter({
      endpoints: [
        { name: "native", url: up.url, kind: "openai", api_key: "sk-burst-0123456789" },
        { name: "chat", url: up.url, kind: "chat" },
      ],
      models: { native: { endpoints: ["native"] }, translated: { endpoints: ["chat"] } },
    });
  });
  afterAll(async () => {
    await router.close(1000);
    await new Promise<void>((r) => up.server.close(() => r()));
  });

  for (const model of ["native", "translated"]) {
    it(`${model}: every delta arrives once, in order, numbered in sequence, with the router's id`, async () => {
      const stream = await router.client.responses.create({ model, input: "hi", stream: true, store: false });
      const deltas: string[] = [];
      const seqs: number[] = [];
      let id = "";
      let done = "";
      for await (const ev of stream) {
        seqs.push(ev.sequence_number);
        if (ev.type === "response.created") id = ev.response.id;
        if (ev.type === "response.output_text.delta") deltas.push(ev.delta);
        if (ev.type === "response.completed") {
          expect(ev.response.id).toBe(id);
          const message = ev.response.output.find((o) => o.type === "message");
          done = message?.type === "message" && message.content[0]?.type === "output_text" ? message.content[0].text : "";
        }
      }
      expect(id).toMatch(/^resp_/);
      expect(id).not.toBe("resp_upstream123");
      expect(deltas).toEqual(PIECES);
      expect(done).toBe(TEXT);
      expect(seqs).toEqual(seqs.map((_, i) => i));
    });
  }

  it("over a WebSocket (its events taken frame by frame): native and translated, every delta once, in order", async () => {
    const ws = new WsClient(router.url);
    try {
      for (const model of ["native", "translated"]) {
        const events = await ws.create({ model, input: "hi", store: false });
        expect(events.filter((e) => e.type === "response.output_text.delta").map((e) => e.delta)).toEqual(PIECES);
        expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
        expect(finalResponse(events).output.find((o: { type: string }) => o.type === "message").content[0].text).toBe(TEXT);
      }
    } finally {
      ws.close();
    }
  });

  it("chat pass-through: every chunk arrives once, in order, then [DONE]", async () => {
    const stream = await router.client.chat.completions.create({ model: "translated", messages: [{ role: "user", content: "hi" }], stream: true });
    let text = "";
    let usage = 0;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? "";
      if (chunk.usage) usage = chunk.usage.completion_tokens;
    }
    expect(text).toBe(TEXT);
    expect(usage).toBe(PIECES.length);
  });
});
