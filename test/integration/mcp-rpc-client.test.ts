import { randomUUID } from "node:crypto";
import { createServer, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, EmptyResultSchema, ListRootsResultSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpSession } from "../../src/tools/mcp/session.js";

/**
 * The router's MCP client against the SDK's low-level server (which, unlike McpServer, sends a
 * tool's structured content unchecked), with sessions: output schemas enforced as the SDK's
 * client enforces them, the server's own requests answered, a request given up cancelled on
 * the server.
 */
const weatherSchema = { type: "object", properties: { celsius: { type: "number" } }, required: ["celsius"] };
const state = { cancelled: 0, asked: [] as string[] };
let http: HttpServer;
let url: URL;

function build(): Server {
  const server = new Server({ name: "rpc-test", version: "1.0.0" }, { capabilities: { tools: {} } });
  const tool = (name: string, outputSchema?: object) => ({ name, inputSchema: { type: "object" }, ...(outputSchema ? { outputSchema } : {}) });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [tool("weather", weatherSchema), tool("liar", weatherSchema), tool("mute", weatherSchema), tool("ask"), tool("wait")] }));
  server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
    switch (req.params.name) {
      case "weather":
        return { content: [{ type: "text", text: "3 C" }], structuredContent: { celsius: 3 } };
      case "liar":
        return { content: [{ type: "text", text: "warm" }], structuredContent: { celsius: "warm" } };
      case "mute":
        return { content: [{ type: "text", text: "no data" }] };
      case "ask": {
        // Requests of the server's own, over the call's event stream, before it answers.
        await extra.sendRequest({ method: "ping" }, EmptyResultSchema);
        state.asked.push("ping");
        const roots = await extra.sendRequest({ method: "roots/list" }, ListRootsResultSchema).then(() => "listed", (err: Error) => err.message);
        state.asked.push(roots);
        return { content: [{ type: "text", text: `ping answered; roots: ${roots}` }] };
      }
      default:
        await new Promise<void>((done) => {
          const timer = setTimeout(done, 3_000);
          extra.signal.addEventListener("abort", () => {
            state.cancelled++;
            clearTimeout(timer);
            done();
          });
        });
        return { content: [{ type: "text", text: "waited" }] };
    }
  });
  return server;
}

beforeAll(async () => {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  http = createServer(async (req, res) => {
    const id = req.headers["mcp-session-id"];
    let t = typeof id === "string" ? sessions.get(id) : undefined;
    if (!t) {
      const created: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({ sessionIdGenerator: randomUUID, onsessioninitialized: (sid) => void sessions.set(sid, created) });
      await build().connect(created);
      t = created;
    }
    await t.handleRequest(req, res);
  });
  await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
  url = new URL(`http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`);
});
afterAll(() => new Promise<void>((r) => http.close(() => r())));

const limits = (timeoutMs = 5_000) => ({ timeoutMs, maxResultBytes: 10_000, signal: AbortSignal.timeout(10_000) });

describe("the router's MCP client", () => {
  it("checks structured content against the tool's output schema from the listing", async () => {
    const session = await McpSession.open({ label: "r", url, headers: {} }, 5_000, AbortSignal.timeout(5_000));
    const tools = await session.listTools(5_000, AbortSignal.timeout(5_000));
    expect(tools.map((t) => t.name)).toEqual(["weather", "liar", "mute", "ask", "wait"]);
    expect(await session.callTool("weather", {}, limits())).toEqual({ ok: true, output: "3 C" });
    const liar = await session.callTool("liar", {}, limits());
    expect(liar).toMatchObject({ ok: false, error: { type: "mcp_protocol_error", code: -32602 } });
    expect(liar.ok === false && liar.message).toMatch(/^MCP error -32602: Structured content does not match the tool's output schema: .*celsius.*number/);
    const mute = await session.callTool("mute", {}, limits());
    expect(mute).toMatchObject({ ok: false, error: { type: "mcp_protocol_error", code: -32600, message: "MCP error -32600: Tool mute has an output schema but did not return structured content" } });
    await session.close();
  });

  it("answers the server's ping, and 'method not found' to what it does not offer (roots)", async () => {
    const session = await McpSession.open({ label: "r", url, headers: {} }, 5_000, AbortSignal.timeout(5_000));
    await session.listTools(5_000, AbortSignal.timeout(5_000));
    expect(await session.callTool("ask", {}, limits())).toEqual({ ok: true, output: "ping answered; roots: MCP error -32601: Method not found" });
    expect(state.asked).toEqual(["ping", "MCP error -32601: Method not found"]);
    await session.close();
  });

  it("a call past its timeout fails with the timeout's code, and the server is told to stop (notifications/cancelled)", async () => {
    const session = await McpSession.open({ label: "r", url, headers: {} }, 5_000, AbortSignal.timeout(5_000));
    const before = state.cancelled;
    const r = await session.callTool("wait", {}, limits(150));
    expect(r).toMatchObject({ ok: false, error: { type: "mcp_protocol_error", code: -32001, message: "MCP error -32001: Request timed out" } });
    await until(() => state.cancelled > before);
    // The session is still usable after it.
    expect(await session.callTool("weather", {}, limits())).toEqual({ ok: true, output: "3 C" });
    await session.close();
  });

  it("a call the response gave up on (its signal) is cancelled on the server too; a closed session fails its calls at once", async () => {
    const session = await McpSession.open({ label: "r", url, headers: {} }, 5_000, AbortSignal.timeout(5_000));
    const before = state.cancelled;
    const gaveUp = new AbortController();
    const call = session.callTool("wait", {}, { timeoutMs: 5_000, maxResultBytes: 10_000, signal: gaveUp.signal });
    setTimeout(() => gaveUp.abort(new Error("the client went away")), 100);
    expect(await call).toMatchObject({ ok: false, error: { type: "mcp_protocol_error" }, message: "the client went away" });
    await until(() => state.cancelled > before);
    await session.close();
    expect(await session.callTool("weather", {}, limits())).toMatchObject({ ok: false, error: { type: "mcp_protocol_error", code: -32000 }, stale: true });
  });
});

async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(cond()).toBe(true);
}
