/**
 * The framework floor: the least a router built like this one (Hono on @hono/node-server,
 * undici Pool upstream) can do per request. It reads the JSON body as text, forwards
 * it, and answers JSON as text (c.body) or a stream through a web ReadableStream, as
 * the router does, but parses, validates, logs and counts nothing.
 *
 * With an MCP server (`--mcp URL`), `POST /floor/mcp-round` is the floor of one hosted tool
 * round: the model's first round read whole, the server's tools/list and tools/call (JSON-RPC
 * POSTs, answers read whole), the second round (with the tool's result) streamed to the client.
 * It parses nothing it does not have to and assumes the call the bench's model always makes.
 * `POST /floor/mcp-round-streamed` is the same round with round 1 streamed to the client too.
 *
 * Run as a child: `node --import tsx test/bench/hono-proxy.ts --upstream http://127.0.0.1:P [--mcp URL]`;
 * reports `{ ready: true, port }` over IPC.
 */
import { serve } from "@hono/node-server";
import { Hono } from "hono";
import type { AddressInfo } from "node:net";
import { parseArgs } from "node:util";
import { Pool } from "undici";
import { tuneGc } from "../../src/runtime/gc.js";

export async function startHonoProxy(upstream: string, port = 0, mcpUrl?: string): Promise<{ port: number; close(): Promise<void> }> {
  const pool = new Pool(upstream, { connections: 1100, keepAliveTimeout: 30_000, headersTimeout: 0, bodyTimeout: 0 });
  const app = new Hono();
  const mcp = mcpUrl ? new URL(mcpUrl) : null;
  const mcpPool = mcp ? new Pool(mcp.origin, { connections: 256, keepAliveTimeout: 30_000 }) : null;
  const rpc = async (id: number, method: string, params: unknown): Promise<string> => {
    const up = await mcpPool!.request({ method: "POST", path: mcp!.pathname, headers: { "content-type": "application/json", accept: "application/json, text/event-stream" }, body: JSON.stringify({ jsonrpc: "2.0", id, method, params }) });
    return up.body.text();
  };
  type ChatRequest = { model: string; messages: unknown[] };
  /** A streamed chat round of the tool round. */
  const chat = (req: ChatRequest, extra: Record<string, unknown>, signal?: AbortSignal) =>
    pool.request({ method: "POST", path: "/v1/chat/completions", headers: { "content-type": "application/json" }, body: JSON.stringify({ ...req, ...extra, stream: true }), signal });
  /** After the model's first round: the server's tools/list and tools/call, then the second round with the tool's result. */
  const roundTwo = async (req: ChatRequest, signal?: AbortSignal) => {
    await rpc(1, "tools/list", {});
    const result = await rpc(2, "tools/call", { name: "echo", arguments: { text: "bench" } });
    const messages = [...req.messages, { role: "assistant", tool_calls: [{ id: "call_1", type: "function", function: { name: "bench__echo", arguments: '{"text":"bench"}' } }] }, { role: "tool", tool_call_id: "call_1", content: result.length > 0 ? "echo: bench" : "" }];
    return chat(req, { messages }, signal);
  };
  app.post("/floor/mcp-round", async (c) => {
    const req = JSON.parse(await c.req.text()) as ChatRequest;
    await (await chat(req, {})).body.text();
    return streamed(await roundTwo(req, c.req.raw.signal));
  });
  // The same round, with round 1's stream passed on to the client as it comes (as the protocol has
  // the router stream the first round's items), then round 2's: a floor for what a client receives too.
  app.post("/floor/mcp-round-streamed", async (c) => {
    const req = JSON.parse(await c.req.text()) as ChatRequest;
    const first = await chat(req, {});
    async function* chunks(): AsyncGenerator<Uint8Array> {
      yield* first.body;
      yield* (await roundTwo(req)).body;
    }
    return webResponse(chunks(), 200, "text/event-stream");
  });
  app.post("/v1/*", async (c) => {
    const body = await c.req.text();
    const up = await pool.request({ method: "POST", path: c.req.path, headers: { "content-type": "application/json" }, body, signal: c.req.raw.signal });
    const type = String(up.headers["content-type"] ?? "application/json");
    if (!type.startsWith("text/event-stream")) return c.body(await up.body.text(), up.statusCode as 200, { "content-type": type });
    return streamed(up);
  });
  /** An upstream event stream through a web ReadableStream, as the router's framework answers one. */
  const streamed = (up: Awaited<ReturnType<Pool["request"]>>): Response => webResponse(up.body[Symbol.asyncIterator](), up.statusCode, String(up.headers["content-type"] ?? "text/event-stream"));
  /** Chunks pulled one at a time into a web ReadableStream (strings encoded). */
  const webResponse = (it: AsyncIterator<unknown>, status: number, type: string): Response => {
    const encoder = new TextEncoder();
    const stream = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const step = await it.next();
        if (step.done) controller.close();
        else controller.enqueue(typeof step.value === "string" ? encoder.encode(step.value) : (step.value as Uint8Array));
      },
      cancel() {
        void it.return?.();
      },
    });
    return new Response(stream, { status, headers: { "content-type": type, "cache-control": "no-cache" } });
  };
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const s = serve({ fetch: app.fetch, hostname: "127.0.0.1", port }, () => resolve(s));
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      await new Promise<void>((r) => server.close(() => r()));
      await pool.destroy();
      await mcpPool?.destroy();
    },
  };
}

/** Runs the floor as a child (argv as below); also the entry prof-child.mjs calls (PROF_MAIN) when ab.ts --prof hono profiles it. */
export async function main(): Promise<void> {
  tuneGc(); // the router's own GC setting for the cores it has (runtime/gc.ts): floor and router run alike
  const { values } = parseArgs({ options: { upstream: { type: "string" }, port: { type: "string" }, mcp: { type: "string" } } });
  if (!values.upstream) throw new Error("--upstream is required");
  const proxy = await startHonoProxy(values.upstream, values.port ? Number(values.port) : 0, values.mcp);
  const msg = { ready: true, port: proxy.port };
  if (process.send) process.send(msg);
  else console.log(JSON.stringify(msg));
  const stop = () => void proxy.close().then(() => process.exit(0));
  process.on("SIGTERM", stop);
  process.on("disconnect", stop);
}

const isMain = process.argv[1] && import.meta.url.endsWith(process.argv[1].replace(/^.*\//, ""));
if (isMain) await main();
