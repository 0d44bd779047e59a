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

/** Requests parked by path until the one named `last` comes; then `answer` gets them all, in one turn. */
/** An answer as the client read it, or "gone" when its connection was cut. */
type Answer = Awaited<ReturnType<typeof get>> | "gone";

async function parkUntil(paths: string[], answer: (parked: Map<string, ServerResponse>) => void): Promise<Promise<Answer>[]> {
  const parked = new Map<string, ServerResponse>();
  const port = await listen((req, res) => {
    parked.set(req.url!, res);
    if (parked.size === paths.length) answer(parked);
  });
  const out: Promise<Answer>[] = [];
  for (const path of paths) {
    out.push(get(port, path).catch(() => "gone" as const));
    // Each request in before the next: the last one's handler answers them all.
    await new Promise((r) => setTimeout(r, 20));
  }
  return out;
}

describe("what a turn writes after its first write leaves at the turn's end", () => {
  it("JSON: the turn's first answer is written at once, the others whole at the turn's end, with Node's own Content-Length", async () => {
    const seen = new Map<string, Sent>();
    const decided: boolean[] = [];
    const answers = await parkUntil(["/a", "/b", "/c"], (parked) => {
      for (const [path, res] of parked) {
        res.statusCode = 201;
        res.setHeader("content-type", "application/json");
        decided.push(answered(res));
        endThisTurn(res, `{"path":"${path}"}`);
        decided.push(answered(res));
        void watch(res).then((w) => seen.set(path, w));
      }
    });
    for (const [i, path] of ["/a", "/b", "/c"].entries()) {
      const res = await answers[i]!;
      if (res === "gone") throw new Error(`${path} got no answer`);
      expect(res.status).toBe(201);
      expect(res.body).toBe(`{"path":"${path}"}`);
      expect(res.headers["content-length"]).toBe(String(res.body.length));
    }
    expect(decided).toEqual([false, true, false, true, false, true]);
    // The first: out before the handler returned. The others: nothing during the turn (its ticks included), all at its end.
    expect(seen.get("/a")!.sent[0]).toBeGreaterThan(0);
    for (const path of ["/b", "/c"]) {
      const w = seen.get(path)!;
      expect(w.sent[0]).toBe(0);
      expect(w.sent[1]).toBe(0);
      expect(w.sent[2]).toBeGreaterThan(14);
      expect(w.buffered).toEqual([0, 0, 0]);
    }
  });

  it("streams: the turn's first write goes at once; the writes after it are held in their corked socket until the turn's end; a queued end leaves with them", async () => {
    const seen: Record<string, Sent> = {};
    const answers = await parkUntil(["/a", "/b"], (parked) => {
      const a = parked.get("/a")!;
      const b = parked.get("/b")!;
      a.writeHead(200, { "content-type": "text/event-stream" });
      b.writeHead(200, { "content-type": "text/event-stream" });
      holdThisTurn(a);
      a.write("data: a1\n\n");
      void watch(a).then((w) => (seen.a1 = w));
      holdThisTurn(b);
      b.write("data: b1\n\n");
      holdThisTurn(b); // a second hold in the same turn is the same hold
      b.write("data: b2\n\n");
      void watch(b).then((w) => {
        seen.b1 = w;
        // The next turn: b writes first (at once); a's end is queued after it.
        holdThisTurn(b);
        b.write("data: b3\n\n");
        void watch(b).then((w2) => (seen.b3 = w2));
        holdThisTurn(a);
        a.write("data: a2\n\n");
        endThisTurn(a);
        void watch(a).then((w2) => (seen.a2 = w2));
        endThisTurn(b);
      });
    });
    const [a, b] = await Promise.all(answers);
    expect(a !== "gone" && a.body).toBe("data: a1\n\ndata: a2\n\n");
    expect(b !== "gone" && b.body).toBe("data: b1\n\ndata: b2\n\ndata: b3\n\n");
    // a, the turn's first writer: Node's own cork until the next tick, then sent.
    expect(seen.a1!.sent[0]).toBe(0);
    expect(seen.a1!.sent[1]).toBeGreaterThan(0);
    // b, after it: buffered in the corked socket past Node's own uncork, handed on at the turn's end.
    expect(seen.b1!.sent).toEqual([0, 0, seen.b1!.buffered[0]]);
    expect(seen.b1!.buffered[0]).toBeGreaterThan("data: b1\n\ndata: b2\n\n".length);
    expect(seen.b1!.buffered[1]).toBe(seen.b1!.buffered[0]);
    expect(seen.b1!.buffered[2]).toBe(0);
    // The next turn: b at once (after the tick), a's last event and its end together at the turn's end.
    expect(seen.b3!.sent[1]).toBeGreaterThan(seen.b3!.sent[0]);
    const before = seen.a2!.sent[0];
    expect(seen.a2!.sent[1]).toBe(before);
    expect(seen.a2!.sent[2]).toBe(before + seen.a2!.buffered[0] + "0\r\n\r\n".length);
    expect(seen.a2!.buffered[2]).toBe(0);
  });

  it("an answer whose client left before the turn's end is dropped; the others of the turn still go", async () => {
    const answers = await parkUntil(["/gone", "/kept", "/first"], (parked) => {
      for (const res of parked.values()) res.statusCode = 200;
      endThisTurn(parked.get("/first")!, "first");
      endThisTurn(parked.get("/gone")!, "gone");
      parked.get("/gone")!.socket!.destroy(); // its client is gone before the turn ends
      endThisTurn(parked.get("/kept")!, "kept");
    });
    const [gone, kept, first] = await Promise.all(answers);
    expect(gone).toBe("gone");
    expect(kept !== "gone" && kept.body).toBe("kept");
    expect(first !== "gone" && first.body).toBe("first");
  });
});
