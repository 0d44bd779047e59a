import { getEventListeners } from "node:events";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpConnectionError, McpHttpError, McpHttpTransport } from "../../src/tools/mcp/http-transport.js";
import { isStale, McpSession } from "../../src/tools/mcp/session.js";
import { startMcpServer, type TestMcpServer } from "../helpers/mcp-server.js";

/**
 * The router's Streamable HTTP transport against a raw HTTP server (what goes out, each way an
 * answer may come back) and against the SDK's own server in its other modes (sessions, JSON).
 */
let server: Server;
let other: Server;
let base: string;
let otherBase: string;
const seen: { method: string; url: string; headers: IncomingHttpHeaders; body: string }[] = [];

const request = (id: number, method = "tools/list"): JSONRPCMessage => ({ jsonrpc: "2.0", id, method, params: {} });
const result = (id: unknown, extra: Record<string, unknown> = {}) => JSON.stringify({ jsonrpc: "2.0", id, result: { ok: true, ...extra } });

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (d: string) => (body += d));
    req.on("end", () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      const id = body ? (JSON.parse(body) as { id?: unknown }).id : null;
      switch (req.url) {
        case "/json":
          res.writeHead(200, { "content-type": "application/json; charset=utf-8", "mcp-session-id": "s-1" }).end(result(id));
          return;
        case "/batch":
          res.writeHead(200, { "content-type": "application/json" }).end(`[${result(id)},{"jsonrpc":"2.0","method":"notifications/message","params":{}}]`);
          return;
        case "/sse":
          // A comment, CRLF line ends, a notification before the answer, the answer split mid-event across writes.
          res.writeHead(200, { "content-type": "text/event-stream" });
          res.write(': keep-alive\r\n\r\nevent: message\r\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{}}\r\n\r\n');
          setTimeout(() => res.write(`id: 7\ndata: ${result(id).slice(0, 10)}`), 10);
          setTimeout(() => res.end(`${result(id).slice(10)}\n\n`), 20);
          return;
        case "/sse-cut":
          res.writeHead(200, { "content-type": "text/event-stream" }).end('data: {"jsonrpc":"2.0","method":"notifications/progress","params":{}}\n\n');
          return;
        case "/bad-json":
          res.writeHead(200, { "content-type": "application/json" }).end("{not json");
          return;
        case "/accepted":
          res.writeHead(202).end();
          return;
        case "/html":
          res.writeHead(200, { "content-type": "text/html" }).end("<p>hi</p>");
          return;
        case "/same-origin":
          res.writeHead(307, { location: "/json" }).end();
          return;
        case "/elsewhere":
          res.writeHead(307, { location: `${otherBase}/json?token=x` }).end();
          return;
        case "/see-other":
          res.writeHead(303, { location: "/json" }).end();
          return;
        case "/hang":
          return; // never answers
        case "/sse-hang":
          // An event stream that stays open after a notification, without the answer.
          res.writeHead(200, { "content-type": "text/event-stream" }).write('data: {"jsonrpc":"2.0","method":"notifications/progress","params":{}}\n\n');
          return;
        default:
          res.writeHead(404, { "content-type": "text/plain" }).end("no such session");
      }
    });
  });
  other = createServer((req, res) => {
    seen.push({ method: req.method!, url: `other${req.url}`, headers: req.headers, body: "" });
    res.writeHead(200, { "content-type": "application/json" }).end(result(1));
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  await new Promise<void>((ok) => other.listen(0, "127.0.0.1", ok));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  otherBase = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const s of [server, other]) {
    s.closeAllConnections();
    await new Promise((ok) => s.close(ok));
  }
});

/** A started transport on `path` and the messages it hands on. */
async function transport(path: string, headers: Record<string, string> = {}) {
  const t = new McpHttpTransport(new URL(`${base}${path}`), headers);
  const got: unknown[] = [];
  const errors: Error[] = [];
  t.onmessage = (m) => got.push(m);
  t.onerror = (e) => errors.push(e);
  await t.start();
  return { t, got, errors };
}

const until = async (cond: () => boolean) => {
  for (let i = 0; i < 200 && !cond(); i++) await new Promise((ok) => setTimeout(ok, 5));
};

describe("the MCP Streamable HTTP transport", () => {
  it("POSTs the message as JSON with the operator's headers, then the session id and protocol version it learned", async () => {
    const { t, got } = await transport("/json", { Authorization: "Bearer t0k", "Content-Type": "text/plain", "X-Team": "a" });
    await t.send(request(1));
    expect(got).toEqual([{ jsonrpc: "2.0", id: 1, result: { ok: true } }]);
    expect(t.sessionId).toBe("s-1");
    const first = seen.at(-1)!;
    expect(first).toMatchObject({ method: "POST", body: JSON.stringify(request(1)) });
    // The operator's spelling of a header the transport sets is replaced, never sent twice.
    expect(first.headers).toMatchObject({ authorization: "Bearer t0k", "x-team": "a", "content-type": "application/json", accept: "application/json, text/event-stream" });
    expect(first.headers["mcp-session-id"]).toBeUndefined();

    t.setProtocolVersion("2025-06-18");
    await t.send(request(2));
    expect(seen.at(-1)!.headers).toMatchObject({ "mcp-session-id": "s-1", "mcp-protocol-version": "2025-06-18" });
    await t.close();
  });

  it("hands on an event stream's messages as they arrive: comments skipped, CRLF, an event split across reads", async () => {
    const { t, got, errors } = await transport("/sse");
    await t.send(request(3));
    await until(() => got.length === 2);
    expect(got).toEqual([{ jsonrpc: "2.0", method: "notifications/progress", params: {} }, { jsonrpc: "2.0", id: 3, result: { ok: true } }]);
    expect(errors).toEqual([]);
    await t.close();
  });

  it("an event stream that ends without the answer: the request gets an error answer at once (not a stale one, which would run the call again)", async () => {
    const { t, got } = await transport("/sse-cut");
    await t.send(request(12));
    await until(() => got.length === 2);
    expect(got[1]).toEqual({ jsonrpc: "2.0", id: 12, error: { code: -32603, message: "The MCP server's event stream ended before it answered." } });
  });

  it("an answer that cannot be read is the server's failure, not a connection's (not stale)", async () => {
    const { t } = await transport("/bad-json");
    const err = await t.send(request(13)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(McpHttpError);
    expect(err).toMatchObject({ code: -1 });
    expect(isStale(err)).toBe(false);
  });

  it("a JSON batch hands on each message; a notification's 202 and an answer to no request hand on nothing", async () => {
    const batch = await transport("/batch");
    await batch.t.send(request(4));
    expect(batch.got).toHaveLength(2);
    const accepted = await transport("/accepted");
    await accepted.t.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    await accepted.t.send({ jsonrpc: "2.0", id: 9, result: {} });
    expect(accepted.got).toEqual([]);
  });

  it("an HTTP error rejects with its status as code (404: stale), an unexpected content type with -1", async () => {
    const { t, errors } = await transport("/gone");
    const err = await t.send(request(5)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(McpHttpError);
    expect(err).toMatchObject({ code: 404, message: "The MCP server answered HTTP 404: no such session" });
    expect(isStale(err)).toBe(true);
    expect(errors).toEqual([err]);
    const html = await transport("/html");
    await expect(html.t.send(request(6))).rejects.toMatchObject({ code: -1 });
  });

  it("follows a 307 within the server's origin; never one elsewhere (the operator's headers stay with the server), nor a 303 of a POST", async () => {
    const same = await transport("/same-origin", { authorization: "Bearer secret" });
    await same.t.send(request(7));
    expect(same.got).toEqual([{ jsonrpc: "2.0", id: 7, result: { ok: true } }]);
    expect(seen.at(-1)!.url).toBe("/json");
    expect(seen.at(-1)!.body).toBe(JSON.stringify(request(7)));

    const n = seen.length;
    const away = await transport("/elsewhere", { authorization: "Bearer secret" });
    const err = await away.t.send(request(8)).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 307 });
    expect((err as Error).message).toBe(`The MCP server redirected to ${otherBase}/json, which was not followed (only redirects within its origin are).`);
    expect(seen.slice(n).map((s) => s.url)).toEqual(["/elsewhere"]);

    const seeOther = await transport("/see-other");
    await expect(seeOther.t.send(request(9))).rejects.toMatchObject({ code: 303 });
  });

  it("a server nothing answers on is a connection error (stale: a new session may try); close ends a request in flight, not stale", async () => {
    const closed = createServer();
    await new Promise<void>((ok) => closed.listen(0, "127.0.0.1", ok));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((ok) => closed.close(ok));
    const down = new McpHttpTransport(new URL(`http://127.0.0.1:${port}/mcp`), {});
    const err = await down.send(request(10)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(McpConnectionError);
    expect(isStale(err)).toBe(true);

    const { t } = await transport("/hang");
    let closedCalled = false;
    t.onclose = () => (closedCalled = true);
    const pending = t.send(request(11)).catch((e: unknown) => e);
    await until(() => seen.at(-1)?.url === "/hang");
    await t.close();
    const stopped = await pending;
    expect((stopped as Error).message).toBe("The MCP session was closed.");
    expect(isStale(stopped)).toBe(false);
    expect(closedCalled).toBe(true);
  });

  it("hangs no request on a signal of the session's: each has its own until its answer is read, and close aborts them", async () => {
    type Inside = { controller: AbortController; inFlight: { size: number } };
    const listening = (t: McpHttpTransport) => getEventListeners((t as unknown as Inside).controller.signal, "abort").length;
    const inFlight = (t: McpHttpTransport) => (t as unknown as Inside).inFlight.size;

    // Requests waiting for their answers.
    const { t: waiting } = await transport("/hang");
    const before = seen.length;
    const pending = [40, 41, 42].map((id) => waiting.send(request(id)).catch((e: unknown) => e));
    await until(() => seen.length === before + 3);
    expect(listening(waiting)).toBe(0);
    expect(inFlight(waiting)).toBe(3);

    // An event stream still open: its request is in flight until the stream is over.
    const { t: streaming, got, errors } = await transport("/sse-hang");
    await streaming.send(request(43));
    await until(() => got.length === 1);
    expect(listening(streaming)).toBe(0);
    expect(inFlight(streaming)).toBe(1);

    await waiting.close();
    for (const err of await Promise.all(pending)) expect((err as Error).message).toBe("The MCP session was closed.");
    expect(inFlight(waiting)).toBe(0);
    await streaming.close();
    await until(() => inFlight(streaming) === 0);
    expect(inFlight(streaming)).toBe(0);
    expect(errors).toEqual([]);

    // Answers read whole, streamed, refused or unreadable: nothing stays in flight.
    for (const path of ["/json", "/sse", "/accepted", "/bad-json", "/missing"]) {
      const { t, got: answers } = await transport(path);
      for (let i = 0; i < 3; i++) await t.send(request(50 + i)).catch(() => {});
      if (path === "/sse") await until(() => answers.length === 6);
      await until(() => inFlight(t) === 0);
      expect(inFlight(t), path).toBe(0);
      expect(listening(t), path).toBe(0);
      await t.close();
    }
    // A send after close fails as it did before: with the session's reason, at once.
    const late = await waiting.send(request(60)).catch((e: unknown) => e);
    expect((late as Error).message).toBe("The MCP session was closed.");
  });
});

describe("sessions over the transport, against the SDK's own server", () => {
  let stateful: TestMcpServer;
  let json: TestMcpServer;
  beforeAll(async () => {
    stateful = await startMcpServer({ sessions: true });
    json = await startMcpServer({ json: true });
  });
  afterAll(async () => {
    await stateful.close();
    await json.close();
  });
  const signal = () => AbortSignal.timeout(5_000);

  it("a server with sessions: the id it hands out goes on every later request, and its DELETE when the session closes", async () => {
    const session = await McpSession.open({ label: "s", url: new URL(stateful.url), headers: {} }, 5_000, signal());
    const tools = await session.listTools(5_000, signal());
    expect(tools.map((t) => t.name)).toContain("echo");
    const ok = await session.callTool("echo", { text: "hi" }, { timeoutMs: 5_000, maxResultBytes: 1_000, signal: signal() });
    expect(ok).toEqual({ ok: true, output: "echo: hi" });
    const ids = stateful.headers.map((h) => h["mcp-session-id"]);
    expect(ids[0]).toBeUndefined();
    expect(new Set(ids.slice(1)).size).toBe(1);
    expect(stateful.headers.at(-1)!["mcp-protocol-version"]).toMatch(/^\d{4}-\d{2}-\d{2}$/);

    // Closing a session deletes it on the server.
    const requests = stateful.headers.length;
    await session.close();
    await until(() => stateful.headers.length > requests);
    expect(stateful.methods.at(-1)).toBe("DELETE");
    expect(stateful.headers.at(-1)!["mcp-session-id"]).toBe(ids[1]);
  });

  it("a session the server has forgotten (restarted): the call is stale, for the pool to open a new one", async () => {
    const session = await McpSession.open({ label: "s", url: new URL(stateful.url), headers: {} }, 5_000, signal());
    stateful.forgetSessions();
    const gone = await session.callTool("echo", { text: "again" }, { timeoutMs: 5_000, maxResultBytes: 1_000, signal: signal() });
    expect(gone).toMatchObject({ ok: false, stale: true, error: { type: "http_error", code: 404 } });
    await session.close();
  });

  it("a server that answers JSON instead of an event stream", async () => {
    const session = await McpSession.open({ label: "j", url: new URL(json.url), headers: {} }, 5_000, signal());
    expect((await session.listTools(5_000, signal())).length).toBeGreaterThan(0);
    expect(await session.callTool("add", { a: 2, b: 3 }, { timeoutMs: 5_000, maxResultBytes: 1_000, signal: signal() })).toEqual({ ok: true, output: "5" });
    await session.close();
  });
});
