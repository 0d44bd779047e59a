import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildConfig } from "../../src/config/load.js";
import { UpstreamClient } from "../../src/upstream/client.js";
import { UpstreamFailure } from "../../src/upstream/errors.js";

// Found by the benchmarks: a client that closed its connection aborted the upstream call
// with @hono/node-server's reason (a plain Error), which was classified as a "connect"
// failure, retried and counted against the endpoint's health until it went into cooldown.
describe("UpstreamClient and the caller's abort", () => {
  let server: Server;
  let url: string;
  beforeAll(async () => {
    server = createServer(() => {
      // never answers: the call is pending when the caller aborts
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });

  it("rejects with the abort reason itself, never an UpstreamFailure, whatever the reason is", async () => {
    const cfg = buildConfig({ endpoints: [{ name: "e", url, kind: "chat" }], models: { m: { endpoints: ["e"] } } });
    const client = new UpstreamClient(cfg.endpoints[0]!);
    try {
      const ac = new AbortController();
      const call = client.post("/chat/completions", "{}", ac.signal);
      const reason = new Error("Client connection prematurely closed.");
      setTimeout(() => ac.abort(reason), 20);
      const err = await call.catch((e: unknown) => e);
      expect(err).not.toBeInstanceOf(UpstreamFailure);
      expect(err).toBe(reason);
    } finally {
      await client.destroy();
    }
  });
});
