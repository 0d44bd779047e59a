/**
 * A real MCP server for tests, built with the SDK's own server: Streamable HTTP (stateless,
 * a server per request; or with `sessions`, a server per `mcp-session-id` it hands out; with
 * `json`, answers as JSON instead of an event stream) or the legacy SSE transport, on a
 * loopback port. Its tools: `echo`,
 * `add`, `lookup` (read-only), `fail` (the tool reports an error), `slow` (waits `ms`), `big`
 * (a result of `bytes` bytes). It records the calls and the headers it saw.
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";

export interface TestMcpServer {
  /** The URL a client names as server_url (`/mcp` for Streamable HTTP, `/sse` for SSE). */
  url: string;
  port: number;
  calls: { name: string; args: Record<string, unknown> }[];
  /** Headers of every HTTP request the server received, and their methods. */
  headers: IncomingMessage["headers"][];
  methods: string[];
  listCount: number;
  /** Sessions initialised (MCP `initialize` handshakes completed). */
  inits: number;
  /** With `sessions`: forgets every session, as a restarted server would (their requests get 404). */
  forgetSessions(): void;
  close(): Promise<void>;
}

/** A 1x1 PNG, as an MCP image content part carries it (base64). */
export const PIXEL_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";

function build(state: { calls: TestMcpServer["calls"]; listCount: number; inits: number }, name: string, rich = false): McpServer {
  const server = new McpServer({ name, version: "1.0.0" });
  server.server.oninitialized = () => state.inits++;
  const record = (tool: string, args: Record<string, unknown>) => state.calls.push({ name: tool, args });
  server.registerTool("echo", { description: "Echoes the text back.", inputSchema: { text: z.string() } }, async ({ text }) => {
    record("echo", { text });
    return { content: [{ type: "text", text: `echo: ${text}` }] };
  });
  server.registerTool("add", { description: "Adds two numbers.", inputSchema: { a: z.number(), b: z.number() } }, async ({ a, b }) => {
    record("add", { a, b });
    return { content: [{ type: "text", text: String(a + b) }] };
  });
  server.registerTool("lookup", { description: "Looks a word up.", inputSchema: { word: z.string() }, annotations: { readOnlyHint: true } }, async ({ word }) => {
    record("lookup", { word });
    return { content: [{ type: "text", text: `${word}: a word` }] };
  });
  server.registerTool("fail", { description: "Always fails.", inputSchema: {} }, async () => {
    record("fail", {});
    return { isError: true, content: [{ type: "text", text: "the tool broke" }] };
  });
  server.registerTool("slow", { description: "Waits.", inputSchema: { ms: z.number() } }, async ({ ms }) => {
    record("slow", { ms });
    await new Promise((r) => setTimeout(r, ms));
    return { content: [{ type: "text", text: "slept" }] };
  });
  server.registerTool("big", { description: "A big result.", inputSchema: { bytes: z.number() } }, async ({ bytes }) => {
    record("big", { bytes });
    return { content: [{ type: "text", text: "x".repeat(bytes) }] };
  });
  if (rich) {
    // Results that are not plain text: an image next to its caption, and structured content.
    server.registerTool("picture", { description: "Draws a picture.", inputSchema: {} }, async () => {
      record("picture", {});
      return { content: [{ type: "text", text: "a red pixel" }, { type: "image", data: PIXEL_PNG, mimeType: "image/png" }] };
    });
    server.registerTool("weather", { description: "The weather as data.", inputSchema: { city: z.string() }, outputSchema: { city: z.string(), celsius: z.number() } }, async ({ city }) => {
      record("weather", { city });
      const data = { city, celsius: -3 };
      return { content: [{ type: "text", text: JSON.stringify(data) }], structuredContent: data };
    });
  }
  // Count listings (the router must list once per server per conversation).
  const inner = server.server;
  const original = (inner as unknown as { _requestHandlers: Map<string, (...a: unknown[]) => unknown> })._requestHandlers.get("tools/list")!;
  (inner as unknown as { _requestHandlers: Map<string, (...a: unknown[]) => unknown> })._requestHandlers.set("tools/list", (...a: unknown[]) => {
    state.listCount++;
    return original(...a);
  });
  return server;
}

/** `rich`: also the `picture` (text + image) and `weather` (structured content) tools. */
export async function startMcpServer(opts: { transport?: "streamable" | "sse"; name?: string; port?: number; rich?: boolean; sessions?: boolean; json?: boolean } = {}): Promise<TestMcpServer> {
  const transport = opts.transport ?? "streamable";
  const state = { calls: [] as TestMcpServer["calls"], listCount: 0, inits: 0 };
  const headers: IncomingMessage["headers"][] = [];
  const methods: string[] = [];
  const sse = new Map<string, SSEServerTransport>();
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const http: Server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    headers.push(req.headers);
    methods.push(req.method ?? "");
    const path = (req.url ?? "/").split("?")[0];
    try {
      if (transport === "streamable" && path === "/mcp" && opts.sessions) {
        const id = req.headers["mcp-session-id"];
        let t = typeof id === "string" ? sessions.get(id) : undefined;
        if (!t && id !== undefined) {
          res.writeHead(404, { "content-type": "application/json" }).end('{"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"},"id":null}');
          return;
        }
        if (!t) {
          const created: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({ sessionIdGenerator: randomUUID, enableJsonResponse: opts.json, onsessioninitialized: (sid) => void sessions.set(sid, created) });
          await build(state, opts.name ?? "test", opts.rich).connect(created);
          t = created;
        }
        await t.handleRequest(req, res);
        return;
      }
      if (transport === "streamable" && path === "/mcp") {
        if (req.method !== "POST") {
          res.writeHead(405).end();
          return;
        }
        const server = build(state, opts.name ?? "test", opts.rich);
        const t = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: opts.json });
        res.on("close", () => {
          void t.close();
          void server.close();
        });
        await server.connect(t);
        await t.handleRequest(req, res);
        return;
      }
      if (transport === "sse" && path === "/sse" && req.method === "GET") {
        const t = new SSEServerTransport("/messages", res);
        sse.set(t.sessionId, t);
        res.on("close", () => sse.delete(t.sessionId));
        await build(state, opts.name ?? "test", opts.rich).connect(t);
        return;
      }
      if (transport === "sse" && path === "/messages" && req.method === "POST") {
        const id = new URL(req.url ?? "/", "http://x").searchParams.get("sessionId") ?? "";
        const t = sse.get(id);
        if (!t) {
          res.writeHead(404).end();
          return;
        }
        await t.handlePostMessage(req, res);
        return;
      }
      res.writeHead(404).end();
    } catch (err) {
      if (!res.headersSent) res.writeHead(500).end(String(err));
    }
  });
  const sockets = new Set<import("node:net").Socket>();
  http.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((r) => http.listen(opts.port ?? 0, "127.0.0.1", r));
  const port = (http.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}${transport === "sse" ? "/sse" : "/mcp"}`,
    port,
    calls: state.calls,
    headers,
    methods,
    get listCount() {
      return state.listCount;
    },
    get inits() {
      return state.inits;
    },
    forgetSessions: () => sessions.clear(),
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        http.close(() => r());
      }),
  };
}
