import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Socket } from "node:net";

/**
 * Connection bookkeeping for a graceful shutdown. Node's server.close() waits for
 * every open connection, and closeIdleConnections() only knows sockets that have
 * already served a request: a keep-alive socket that goes idle after close(), or
 * one a client opened but has not used yet, would hold the shutdown until the
 * deadline. Once drain() is called, idle sockets are ended at once, and every
 * busy one is ended right after its last response finishes (with
 * `Connection: close` on responses that had not started yet).
 */
export function trackConnections(server: Server): { drain(): void; readonly tracked: number } {
  const busy = new Map<Socket, number>();
  let draining = false;

  server.on("connection", (socket: Socket) => {
    busy.set(socket, 0);
    // `on`, not `once`, here and below: close comes once (node guards it), and `once` wraps
    // each listener in a closure of its own, kept per connection and per open stream.
    socket.on("close", () => busy.delete(socket));
  });
  // An upgraded socket (WebSocket) is no longer an HTTP connection: its owner closes it on shutdown.
  server.on("upgrade", (req: IncomingMessage) => busy.delete(req.socket));
  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket;
    if (busy.has(socket)) busy.set(socket, busy.get(socket)! + 1);
    if (draining && !res.headersSent) res.setHeader("connection", "close");
    res.on("close", () => {
      // A client that went away closed the socket first (the response's close comes a tick
      // later): it is no longer tracked, and must not be put back (one socket leaked per drop).
      const n = busy.get(socket);
      if (n === undefined) return;
      const left = Math.max(0, n - 1);
      busy.set(socket, left);
      if (draining && left === 0) socket.end();
    });
  });

  return {
    drain() {
      draining = true;
      for (const [socket, n] of busy) if (n === 0) socket.end();
    },
    /** Sockets tracked now (for tests: closed ones must not stay). */
    get tracked() {
      return busy.size;
    },
  };
}
