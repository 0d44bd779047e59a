import { getEventListeners } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mcpFetch } from "../../src/tools/mcp/fetch.js";

/** The fetch the MCP transport runs on answers as the global fetch would where the SDK looks. */

let server: Server;
let base: string;
const seen: { method: string; headers: Record<string, unknown>; body: string }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (d: string) => (body += d));
    req.on("end", () => {
      seen.push({ method: req.method!, headers: req.headers, body });
      if (req.url === "/json") {
        res.writeHead(200, { "content-type": "application/json", "mcp-session-id": "s-1", "set-cookie": ["a=1", "b=2"], "x-multi": ["1", "2"] });
        res.end(JSON.stringify({ jsonrpc: "2.0", id: 1, result: { echoed: body } }));
      } else if (req.url === "/sse") {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write("event: message\ndata: one\n\n");
        setTimeout(() => res.end("event: message\ndata: two\n\n"), 20);
      } else if (req.url === "/accepted") {
        res.writeHead(202).end();
      } else if (req.url === "/redirect") {
        res.writeHead(307, { location: "/json" }).end();
      } else if (req.url === "/hang") {
        // never answers
      } else {
        res.writeHead(404, { "content-type": "text/plain" }).end("no such session");
      }
    });
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((ok) => server.close(ok));
});

describe("mcpFetch", () => {
  it("sends the method, headers (a Headers object too) and body; answers status, headers and a JSON body", async () => {
    const headers = new Headers({ "content-type": "application/json", authorization: "Bearer t0k" });
    const res = await mcpFetch(`${base}/json`, { method: "POST", headers, body: '{"x":1}' });
    expect(res.ok).toBe(true);
    expect(res.status).toBe(200);
    expect(res.headers.get("mcp-session-id")).toBe("s-1");
    expect(res.headers.get("x-multi")).toBe("1, 2");
    expect(await res.json()).toEqual({ jsonrpc: "2.0", id: 1, result: { echoed: '{"x":1}' } });
    const got = seen.at(-1)!;
    expect(got).toMatchObject({ method: "POST", body: '{"x":1}' });
    expect(got.headers.authorization).toBe("Bearer t0k");
  });

  it("streams an event stream as it arrives", async () => {
    const res = await mcpFetch(new URL(`${base}/sse`), { headers: { accept: "text/event-stream" } });
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    const first = await reader.read();
    expect(first.value).toBe("event: message\ndata: one\n\n");
    let rest = "";
    for (let r = await reader.read(); !r.done; r = await reader.read()) rest += r.value;
    expect(rest).toBe("event: message\ndata: two\n\n");
  });

  it("answers 202 without a body, and a 4xx with its text", async () => {
    const accepted = await mcpFetch(`${base}/accepted`, { method: "POST", body: "{}" });
    expect(accepted.status).toBe(202);
    await accepted.body?.cancel();
    const missing = await mcpFetch(`${base}/gone`, { method: "POST", body: "{}" });
    expect(missing.ok).toBe(false);
    expect(missing.status).toBe(404);
    expect(await missing.text()).toBe("no such session");
  });

  it("never follows a redirect: the 3xx comes back with its location", async () => {
    const n = seen.length;
    const res = await mcpFetch(`${base}/redirect`, { method: "POST", body: "{}", redirect: "manual" });
    expect(res.status).toBe(307);
    expect(res.headers.get("location")).toBe("/json");
    expect(seen.length).toBe(n + 1);
  });

  it("rejects with the signal's reason on abort, and with TypeError('fetch failed') when nothing answers", async () => {
    const reason = new Error("stopped by the caller");
    const ac = new AbortController();
    const pending = mcpFetch(`${base}/hang`, { method: "POST", body: "{}", signal: ac.signal });
    setTimeout(() => ac.abort(reason), 20);
    await expect(pending).rejects.toBe(reason);

    const closed = createServer();
    await new Promise<void>((ok) => closed.listen(0, "127.0.0.1", ok));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((ok) => closed.close(ok));
    const err = await mcpFetch(`http://127.0.0.1:${port}/`, { method: "POST", body: "{}" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TypeError);
    expect((err as TypeError).message).toBe("fetch failed");
    expect((err as TypeError).cause).toBeDefined();
  });

  it("leaves no abort listener on a long-lived signal once a call is over", async () => {
    const session = new AbortController();
    for (let i = 0; i < 20; i++) await (await mcpFetch(`${base}/json`, { method: "POST", body: "{}", signal: session.signal })).text();
    await new Promise((ok) => setImmediate(ok));
    expect(getEventListeners(session.signal, "abort")).toHaveLength(0);
  });
});
