import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** One request a search provider received, as the router sent it. */
export interface SearchRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: any;
}

export type SearchReply =
  | { status?: number; json: unknown }
  | { status?: number; text: string; contentType?: string }
  /** Headers sent, then nothing until the client goes away. */
  | { hang: "body" }
  /** Nothing at all until the client goes away. */
  | { hang: "headers" };

/**
 * A search API on loopback (SearXNG, Brave or Tavily shaped, as the test scripts it): a real HTTP
 * server that records every request and answers with what `reply` returns for it.
 */
export interface MockSearch {
  url: string;
  requests: SearchRequest[];
  reply: (req: SearchRequest) => SearchReply;
  /** Requests whose client went away before the answer was complete. */
  aborted: number;
  close(): Promise<void>;
}

export async function startMockSearch(reply: (req: SearchRequest) => SearchReply = () => ({ json: {} })): Promise<MockSearch> {
  const mock: MockSearch = { url: "", requests: [], reply, aborted: 0, close: async () => {} };
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString("utf8");
    let body: any = text || undefined;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      // keep the raw text
    }
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const rec: SearchRequest = { method: req.method ?? "GET", path: url.pathname, query: url.searchParams, headers: req.headers, body };
    mock.requests.push(rec);
    const r = mock.reply(rec);
    let done = false;
    res.on("close", () => {
      if (!done) mock.aborted++;
    });
    if ("hang" in r) {
      if (r.hang === "body") {
        res.writeHead(200, { "content-type": "application/json" });
        res.write('{"results": [');
      }
      return;
    }
    if ("json" in r) {
      res.writeHead(r.status ?? 200, { "content-type": "application/json" });
      res.end(JSON.stringify(r.json));
    } else {
      res.writeHead(r.status ?? 200, { "content-type": r.contentType ?? "text/plain" });
      res.end(r.text);
    }
    done = true;
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  mock.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  mock.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return mock;
}
