/**
 * The floor: the least a Node HTTP router can do per request. node:http server,
 * an undici keep-alive Pool to the upstream, the (small) request body buffered and
 * sent on, response status/headers copied and the body written back chunk by chunk.
 * No parsing, no routing, no logs.
 *
 * Run as a child: `node --import tsx test/bench/bare-proxy.ts --upstream http://127.0.0.1:P [--port N]`;
 * reports `{ ready: true, port }` over IPC.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { parseArgs } from "node:util";
import { Pool } from "undici";
import { tuneGc } from "../../src/runtime/gc.js";

const HOP = new Set(["connection", "keep-alive", "transfer-encoding", "host", "content-length"]);

export async function startBareProxy(upstream: string, port = 0, connections = 1100): Promise<{ port: number; close(): Promise<void> }> {
  const pool = new Pool(upstream, { connections, keepAliveTimeout: 30_000, headersTimeout: 0, bodyTimeout: 0 });
  const server = createServer((req, res) => {
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) if (!HOP.has(k) && typeof v === "string") headers[k] = v;
    const ac = new AbortController();
    res.on("close", () => {
      if (!res.writableFinished) ac.abort();
    });
    // Small JSON bodies: buffered and sent with a length (cheaper than a chunked upload).
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
      pool.request({ method: req.method as "POST", path: req.url ?? "/", headers, body, signal: ac.signal }).then(
        (up) => {
          const out: Record<string, string> = {};
          for (const [k, v] of Object.entries(up.headers)) if (!HOP.has(k) && typeof v === "string") out[k] = v;
          res.writeHead(up.statusCode, out);
          up.body.on("data", (c: Buffer) => res.write(c));
          up.body.on("end", () => res.end());
          up.body.on("error", () => res.destroy());
        },
        () => {
          if (!res.headersSent) res.writeHead(502, { "content-type": "application/json" });
          res.end('{"error":{"message":"bad gateway","type":"server_error","param":null,"code":null}}');
        },
      );
    });
  });
  server.keepAliveTimeout = 60_000;
  server.maxRequestsPerSocket = 0;
  await new Promise<void>((r) => server.listen(port, "127.0.0.1", 4096, r));
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      await pool.destroy();
    },
  };
}

const isMain = process.argv[1] && import.meta.url.endsWith(process.argv[1].replace(/^.*\//, ""));
if (isMain) {
  tuneGc(); // the router's own GC setting for the cores it has (runtime/gc.ts): floor and router run alike
  const { values } = parseArgs({ options: { upstream: { type: "string" }, port: { type: "string" } } });
  if (!values.upstream) throw new Error("--upstream is required");
  const proxy = await startBareProxy(values.upstream, values.port ? Number(values.port) : 0);
  const msg = { ready: true, port: proxy.port };
  if (process.send) process.send(msg);
  else console.log(JSON.stringify(msg));
  process.on("SIGTERM", () => void proxy.close().then(() => process.exit(0)));
  process.on("disconnect", () => void proxy.close().then(() => process.exit(0)));
}
