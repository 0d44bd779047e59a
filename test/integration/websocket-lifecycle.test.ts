import { WebSocket } from "ws";
import { buildConfig } from "../../src/config/load.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chatTextChunks, nativeEvents, nativeResponse, startMockUpstream, upstreamError, type MockUpstream } from "../helpers/mock-upstream.js";
import { metricSample } from "../helpers/metrics-text.js";
import { startTestRouter, twoKindConfig, type TestRouter } from "../helpers/router.js";
import { waitUntil } from "../helpers/wait.js";
import { finalResponse, upgradeStatus, WsClient } from "../helpers/ws-client.js";

/**
 * The socket's life: auth before the upgrade, per-key limits per response.create, the
 * connection time limit, shutdown mid-stream on both kinds, and many sockets dropped
 * mid-stream leaving no slot behind.
 */
let chat: MockUpstream;
let oai: MockUpstream;

const KEYS = {
  ok: { name: "team", key: "rr-ws-team-key-0123456789" },
  conc: { name: "conc", key: "rr-ws-conc-key-9876543210", limits: { max_concurrent: 1 } },
  wide: { name: "wide", key: "rr-ws-wide-key-5647382910", limits: { max_concurrent: 40 } },
};

beforeAll(async () => {
  chat = await startMockUpstream();
  oai = await startMockUpstream();
});
afterAll(async () => {
  await chat?.close();
  await oai?.close();
});

/** A chat stream that sends its first tokens and then stays open (until the router hangs up). */
const openChatStream = { kind: "sse" as const, frames: chatTextChunks(["Hel", "lo"]).slice(0, 2), holdOpenMs: 60_000 };
/** A native stream that stops after its first delta and stays open. */
const openNativeStream = { kind: "sse" as const, frames: nativeEvents(nativeResponse("Hello there")).slice(0, 5), holdOpenMs: 60_000 };

async function withRouter(extra: Record<string, unknown>, fn: (r: TestRouter) => Promise<void>): Promise<void> {
  const r = await startTestRouter(twoKindConfig(chat.url, oai.url, extra));
  try {
    await fn(r);
  } finally {
    await r.close(500);
  }
}

describe("WebSocket lifecycle", () => {
  it("refuses a bad key before the upgrade with the same 401 body as HTTP", async () => {
    await withRouter({ server: { api_keys: [KEYS.ok] } }, async (r) => {
      const wsUrl = `${r.url.replace("http", "ws")}/v1/responses`;
      for (const headers of [{}, { authorization: "Bearer wrong-key" }] as Record<string, string>[]) {
        const refused = await upgradeStatus(wsUrl, headers);
        const http = await r.fetch("/v1/responses", { method: "POST", headers: { "content-type": "application/json", ...headers }, body: "{}" });
        expect(refused.code).toBe(401);
        expect(JSON.parse(refused.body)).toEqual(await http.json());
      }
      const ws = new WsClient(r.url, KEYS.ok.key);
      expect(finalResponse(await ws.create({ model: "local", input: "hi" })).status).toBe("completed");
      // A reload that removes the key: the open socket's next create is refused, and it closes.
      r.runtime.applyConfig(buildConfig({ ...twoKindConfig(chat.url, oai.url), server: { host: "127.0.0.1", port: 0, api_keys: [KEYS.conc] } }));
      const [refused] = await ws.create({ model: "local", input: "hi" });
      expect(refused).toMatchObject({ type: "error", status: 401, error: { code: "invalid_api_key" } });
      expect((await ws.waitClosed()).code).toBe(1008);
    });
  });

  it("admits each response.create against the key's limits: max_concurrent counts in-flight lanes", async () => {
    await withRouter({ server: { api_keys: [KEYS.conc] } }, async (r) => {
      const ws = new WsClient(r.url, KEYS.conc.key);
      chat.enqueue("/chat/completions", openChatStream);
      ws.send({ type: "response.create", stream_id: "a", model: "local", input: "hold" });
      await ws.until("lane a streaming", () => ws.events.find((e) => e.type === "response.output_text.delta"));
      const [refused] = await ws.create({ stream_id: "b", model: "local", input: "hi" });
      expect(refused).toMatchObject({ type: "error", status: 429, stream_id: "b", error: { code: "rate_limit_exceeded", headers: { "retry-after": "1" } } });
      ws.close();
      // Closing the socket ended lane a and freed the key's slot: a new socket is admitted.
      const again = new WsClient(r.url, KEYS.conc.key);
      await waitUntil("the slot to be freed", async () => {
        const [last] = (await again.create({ model: "local", input: "hi" })).slice(-1);
        return last!.type === "response.completed";
      });
      again.close();
    });
  });

  it("ends a socket at server.websocket.max_connection_duration with websocket_connection_limit_reached", async () => {
    await withRouter({ server: { websocket: { max_connection_duration: "400ms" } } }, async (r) => {
      const ws = new WsClient(r.url);
      expect(finalResponse(await ws.create({ model: "local", input: "hi" })).status).toBe("completed");
      const closed = await ws.waitClosed();
      expect(closed.code).toBe(1001);
      expect(ws.events.at(-1)).toMatchObject({ type: "error", status: 400, error: { code: "websocket_connection_limit_reached", type: "invalid_request_error" } });
      const metrics = await (await r.fetch("/metrics")).text();
      expect(metricSample(metrics, "responses_router_websocket_closes_total", { reason: "connection_limit" })).toBe(1);
    });
  });

  it("the SDK's reconnect option carries on after the connection limit (close 1001 is recoverable)", async () => {
    await withRouter({ server: { websocket: { max_connection_duration: "300ms" } } }, async (r) => {
      const ws = new WsClient(r.url, "k", { reconnect: { onReconnecting: () => {}, initialDelay: 10, maxDelay: 50 } });
      const first = finalResponse(await ws.create({ model: "local", input: "hi" }));
      await ws.until("a reconnect", () => ws.reconnected > 0);
      // The new socket works; a store:true turn chains across sockets through the store.
      const next = finalResponse(await ws.create({ model: "local", input: "again", previous_response_id: first.id }));
      expect(next.previous_response_id).toBe(first.id);
      ws.close();
    });
  });

  for (const { kind, model, upstream, reply } of [
    { kind: "chat", model: "local", upstream: () => chat, reply: openChatStream },
    { kind: "openai", model: "gpt-4.1", upstream: () => oai, reply: openNativeStream },
  ]) {
    it(`on shutdown ends an in-flight response with response.failed (server_shutting_down) and closes with 1012 (${kind})`, async () => {
      const r = await startTestRouter(twoKindConfig(chat.url, oai.url));
      const busy = new WsClient(r.url);
      const idle = new WsClient(r.url);
      await idle.create({ model: "local", input: "hi" });
      upstream().enqueue(kind === "chat" ? "/chat/completions" : "/responses", reply);
      busy.send({ type: "response.create", model, input: "long answer", store: false });
      await busy.until("the stream to start", () => busy.events.find((e) => e.type === "response.output_text.delta"));
      const closing = r.close(300);
      expect((await idle.waitClosed()).code).toBe(1012);
      const events = await busy.collect(0);
      const failed = events.at(-1)!;
      expect(failed.type).toBe("response.failed");
      expect(failed.response.error.code).toBe("server_shutting_down");
      expect(failed.sequence_number).toBe(events.at(-2)!.sequence_number! + 1);
      expect((await busy.waitClosed()).code).toBe(1012);
      await closing;
      expect(r.runtime.pool.get(kind === "chat" ? "box" : "oai")!.inFlight).toBe(0);
    });
  }

  it("drops a socket that stops answering pings", async () => {
    await withRouter({ server: { websocket: { ping_interval: "100ms" } } }, async (r) => {
      const ws = new WebSocket(`${r.url.replace("http", "ws")}/v1/responses`, { headers: { authorization: "Bearer k" }, autoPong: false });
      await new Promise((resolve, reject) => (ws.once("open", resolve), ws.once("error", reject)));
      const code = await new Promise<number>((resolve) => ws.once("close", resolve));
      expect(code).toBe(1006); // cut, no close frame
      await waitUntil("the close counted", async () => metricSample(await (await r.fetch("/metrics")).text(), "responses_router_websocket_closes_total", { reason: "ping_timeout" }) === 1);
    });
  });

  it("keeps a socket's chained turns on one endpoint (affinity) and fails over before the first event", async () => {
    const other = await startMockUpstream();
    try {
      const endpoints = [
        { name: "ep-a", url: chat.url, kind: "chat", max_concurrency: 4 },
        { name: "ep-b", url: other.url, kind: "chat", max_concurrency: 4 },
      ];
      await withRouter({ endpoints, models: { local: { endpoints: ["ep-a", "ep-b"] }, "gpt-4.1": { endpoints: ["ep-a"] } } }, async (r) => {
        const ws = new WsClient(r.url);
        chat.requests.length = 0;
        let prev: string | undefined;
        for (let turn = 0; turn < 6; turn++) {
          const response = finalResponse(await ws.create({ model: "local", input: `turn ${turn}`, store: false, previous_response_id: prev }));
          expect(response.status).toBe("completed");
          prev = response.id;
        }
        // Idle equal endpoints take turns without affinity: all six on one means the chain stuck to it.
        expect([chat.requests.length, other.requests.length].sort()).toEqual([0, 6]);
        // The endpoint of the chain fails before its first byte: the turn fails over and streams cleanly.
        const sticky = chat.requests.length ? chat : other;
        sticky.enqueue("/chat/completions", upstreamError(503, "overloaded", null, "server_error"));
        const events = await ws.create({ model: "local", input: "after the failure", store: false, previous_response_id: prev });
        expect(events[0]!.type).toBe("response.created");
        expect(finalResponse(events).status).toBe("completed");
        expect((sticky === chat ? other : chat).requests.length).toBe(1);
        ws.close();
      });
    } finally {
      await other.close();
    }
  });

  it("refuses new sockets while draining", async () => {
    const r = await startTestRouter(twoKindConfig(chat.url, oai.url));
    const ws = new WsClient(r.url);
    chat.enqueue("/chat/completions", openChatStream);
    ws.send({ type: "response.create", model: "local", input: "hold" });
    await ws.until("streaming", () => ws.events.find((e) => e.type === "response.output_text.delta"));
    const closing = r.close(300);
    const refused = await upgradeStatus(`${r.url.replace("http", "ws")}/v1/responses`, { authorization: "Bearer x" }).catch(() => ({ code: 0, body: "" }));
    // The listener may already be closed (connection refused) or answer 503: never an upgrade.
    expect([0, 503]).toContain(refused.code);
    await closing;
  });

  it("leaves no slot in use after hundreds of sockets dropped mid-stream", async () => {
    const endpoints = [
      { name: "box", url: chat.url, kind: "chat", max_concurrency: 64 },
      { name: "oai", url: oai.url, kind: "openai", max_concurrency: 64 },
    ];
    await withRouter({ endpoints, server: { api_keys: [KEYS.wide] } }, async (r) => {
      const url = `${r.url.replace("http", "ws")}/v1/responses`;
      for (let round = 0; round < 8; round++) {
        const model = round % 2 === 0 ? "local" : "gpt-4.1";
        const path = model === "local" ? "/chat/completions" : "/responses";
        const sockets = await Promise.all(
          Array.from({ length: KEYS.wide.limits.max_concurrent }, async () => {
            (model === "local" ? chat : oai).enqueue(path, model === "local" ? openChatStream : openNativeStream);
            const ws = new WebSocket(url, { headers: { authorization: `Bearer ${KEYS.wide.key}` } });
            await new Promise((resolve, reject) => (ws.once("open", resolve), ws.once("error", reject)));
            const first = new Promise<string>((resolve) => ws.once("message", (d) => resolve(String(d))));
            ws.send(JSON.stringify({ type: "response.create", model, input: "hold", store: false }));
            const event = JSON.parse(await first);
            // Every socket of a round got in: a slot leaked by an earlier round would refuse one with 429.
            expect(event.type, JSON.stringify(event)).toBe("response.created");
            return ws;
          }),
        );
        for (const ws of sockets) ws.terminate();
        await waitUntil("every slot freed", () => r.runtime.pool.get("box")!.inFlight === 0 && r.runtime.pool.get("oai")!.inFlight === 0, 10_000);
      }
      await waitUntil("every socket counted closed", async () => metricSample(await (await r.fetch("/metrics")).text(), "responses_router_websocket_connections") === 0);
      await waitUntil("every upstream call ended", () => chat.open() === 0 && oai.open() === 0);
    });
  });
});
