import { getEventListeners } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import type { Dispatcher } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildConfig } from "../../src/config/load.js";
import { UpstreamClient } from "../../src/upstream/client.js";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

// undici may keep a call's handler after the call (the benchmarks found whole requests kept
// alive through it: promoted by every young-generation collection). Whatever undici keeps,
// a finished call's handler must no longer reach the body, the reply or the caller's signal.
describe("an upstream call's handler after the call", () => {
  let server: Server;
  let url: string;
  beforeAll(async () => {
    server = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        if (req.url?.endsWith("/fail")) {
          res.writeHead(500, { "content-type": "application/json" });
          res.end(JSON.stringify({ error: { message: "boom", type: "server_error" } }));
          return;
        }
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ id: "x", choices: [] }));
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });

  /** A client whose pool hands every dispatch's handler to `keep` (as undici might keep it). */
  function keepingClient(keep: Dispatcher.DispatchHandler[]): UpstreamClient {
    const cfg = buildConfig({ endpoints: [{ name: "e", url, kind: "chat" }], models: { m: { endpoints: ["e"] } } });
    const client = new UpstreamClient(cfg.endpoints[0]!);
    const pool = (client as unknown as { pool: Dispatcher }).pool;
    const dispatch = pool.dispatch.bind(pool);
    pool.dispatch = (opts, handler) => {
      keep.push(handler);
      return dispatch(opts, handler);
    };
    return client;
  }

  async function collected(ref: WeakRef<object>): Promise<boolean> {
    for (let i = 0; i < 5 && ref.deref() !== undefined; i++) {
      await new Promise((r) => setImmediate(r));
      gc();
    }
    return ref.deref() === undefined;
  }

  it("lets go of the body and stops listening to the signal once the body is read", async () => {
    const kept: Dispatcher.DispatchHandler[] = [];
    const client = keepingClient(kept);
    const ac = new AbortController();
    try {
      const body = await (async () => {
        const reply = await client.post("/chat/completions", "{}", ac.signal);
        expect(await reply.body.text()).toContain('"id":"x"');
        return new WeakRef(reply.body);
      })();
      expect(kept).toHaveLength(1);
      expect(getEventListeners(ac.signal, "abort")).toHaveLength(0);
      expect(await collected(body)).toBe(true);
    } finally {
      await client.destroy();
    }
  });

  it("stops listening to the signal and lets go of it once a non-2xx answer rejected the call", async () => {
    const kept: Dispatcher.DispatchHandler[] = [];
    const client = keepingClient(kept);
    const ac = new AbortController();
    try {
      const signal = await (async () => {
        const err = await client.post("/fail", "{}", ac.signal).catch((e: unknown) => e);
        expect((err as { status?: number }).status).toBe(500);
        return new WeakRef(ac.signal);
      })();
      expect(getEventListeners(ac.signal, "abort")).toHaveLength(0);
      // The signal stays reachable through `ac` here; what matters is the handler no longer holds it.
      expect(Object.values(kept[0]!).includes(signal.deref())).toBe(false);
    } finally {
      await client.destroy();
    }
  });
});
