import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { answered, endThisTurn, holdThisTurn } from "../../src/http/turn-writes.js";

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r) ?? r(undefined));
  server = undefined;
});

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<number> {
  server = createServer(handler);
  await new Promise<void>((r) => server!.listen(0, "127.0.0.1", r));
  return (server.address() as AddressInfo).port;
}

function get(port: number, path = "/"): Promise<{ status: number; headers: IncomingMessage["headers"]; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, agent: false }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (d: string) => (body += d));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end();
  });
}

interface Sent {
  /** Bytes handed to the kernel, and bytes buffered in the socket (corked), at each point. */
  sent: [now: number, afterTicks: number, turnEnd: number];
  buffered: [now: number, afterTicks: number, turnEnd: number];
}

/** What `res`'s socket has sent and buffered: now, once this turn's nextTicks and microtasks ran, and after the turn's end. */
function watch(res: ServerResponse): Promise<Sent> {
  const socket = res.socket!;
  const read = () => [socket.bytesWritten - socket.writableLength, socket.writableLength] as const;
  const now = read();
  return new Promise((resolve) => {
    let ticks: readonly [number, number] = [-1, -1];
    // After Node's own nextTick uncork of a response's writes.
    process.nextTick(() => queueMicrotask(() => (ticks = read())));
    // Queued after endThisTurn/holdThisTurn scheduled the turn's end, so it runs after it.
    setImmediate(() => {
      const end = read();
      resolve({ sent: [now[0], ticks[0], end[0]], buffered: [now[1], ticks[1], end[1]] });
    });
  });
}

describe("answers leave at the end of the event-loop turn", () => {
  it("a JSON answer is written at the turn's end, whole, with Node's own Content-Length", async () => {
    let seen: Sent | undefined;
    let decided: boolean[] = [];
    const port = await listen((_req, res) => {
      res.statusCode = 201;
      res.setHeader("content-type", "application/json");
      decided.push(answered(res));
      endThisTurn(res, '{"ok":true}');
      decided.push(answered(res));
      void watch(res).then((w) => (seen = w));
    });
    const res = await get(port);
    expect(res.status).toBe(201);
    expect(res.body).toBe('{"ok":true}');
    expect(res.headers["content-length"]).toBe("11");
    expect(decided).toEqual([false, true]);
    // Nothing left during the turn (its ticks included); all of it at its end.
    expect(seen!.sent[0]).toBe(0);
    expect(seen!.sent[1]).toBe(0);
    expect(seen!.sent[2]).toBeGreaterThan(11);
    expect(seen!.buffered).toEqual([0, 0, 0]);
  });

  it("a stream's events are held in its socket until the turn's end, then written; the end goes with its last events", async () => {
    const seen: Sent[] = [];
    const port = await listen((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      holdThisTurn(res);
      res.write("data: one\n\n");
      holdThisTurn(res); // a second hold in the same turn is the same hold
      res.write("data: two\n\n");
      void watch(res).then((w) => {
        seen.push(w);
        // A later turn: held again, then the end queued with it.
        holdThisTurn(res);
        res.write("data: three\n\n");
        endThisTurn(res);
        return watch(res).then((w2) => seen.push(w2));
      });
    });
    const res = await get(port);
    expect(res.body).toBe("data: one\n\ndata: two\n\ndata: three\n\n");
    const [first, second] = seen;
    // Written into the corked socket, where Node's own uncork on the next tick leaves them; handed on at the turn's end.
    expect(first!.sent).toEqual([0, 0, first!.buffered[0]]);
    expect(first!.buffered[0]).toBeGreaterThan("data: one\n\ndata: two\n\n".length);
    expect(first!.buffered[1]).toBe(first!.buffered[0]);
    expect(first!.buffered[2]).toBe(0);
    const before = first!.sent[2];
    expect(second!.sent).toEqual([before, before, before + second!.buffered[0] + "0\r\n\r\n".length]);
    expect(second!.buffered[2]).toBe(0);
  });

  it("an answer whose client left before the turn's end is dropped; the others of the turn still go", async () => {
    const parked: ServerResponse[] = [];
    const port = await listen((req, res) => {
      parked.push(res);
      if (req.url !== "/second") return;
      const [first, second] = parked;
      first!.statusCode = 200;
      endThisTurn(first!, "first");
      first!.socket!.destroy(); // its client is gone before the turn ends
      second!.statusCode = 200;
      endThisTurn(second!, "second");
    });
    const first = get(port, "/first").then(
      () => "answered",
      () => "gone",
    );
    await new Promise((r) => setTimeout(r, 50));
    const second = await get(port, "/second");
    expect(second.body).toBe("second");
    expect(await first).toBe("gone");
  });
});
