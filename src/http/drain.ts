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
export function trackConnections(server: Server): { drain(): void } {
  const busy = new Map<Socket, number>();
  let draining = false;

  server.on("connection", (socket: Socket) => {
    busy.set(socket, 0);
    socket.once("close", () => busy.delete(socket));
  });
  // An upgraded socket (WebSocket) is no longer an HTTP connection: its owner closes it on shutdown.
  server.on("upgrade", (req: IncomingMessage) => busy.delete(req.socket));
  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket;
    busy.set(socket, (busy.get(socket) ?? 0) + 1);
    if (draining && !res.headersSent) res.setHeader("connection", "close");
    res.once("close", () => {
      const left = Math.max(0, (busy.get(socket) ?? 1) - 1);
      busy.set(socket, left);
      if (draining && left === 0) socket.end();
    });
  });

  return {
    drain() {
      draining = true;
      for (const [socket, n] of busy) if (n === 0) socket.end();
    },
  };
}
