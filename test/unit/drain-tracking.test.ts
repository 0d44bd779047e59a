import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { trackConnections } from "../../src/http/drain.js";
import { waitUntil } from "../helpers/wait.js";

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r) ?? r(undefined));
});

describe("connection tracking for shutdown", () => {
  it("forgets the sockets of clients that went away mid-response", async () => {
    let opened = 0;
    server = createServer((_req, res) => {
      opened++;
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("data: first\n\n"); // then stays open, as a stream would
    });
    const tracker = trackConnections(server);
    await new Promise<void>((r) => server!.listen(0, "127.0.0.1", r));
    const port = (server.address() as AddressInfo).port;
    const drops = 50;
    await Promise.all(
      Array.from({ length: drops }, () =>
        new Promise<void>((resolve) => {
          const req = request({ host: "127.0.0.1", port, path: "/", agent: false }, (res) =>
            res.once("data", () => {
              req.destroy();
              resolve();
            }),
          );
          req.on("error", () => {});
          req.end();
        }),
      ),
    );
    expect(opened).toBe(drops);
    await waitUntil("every dropped socket forgotten", () => tracker.tracked === 0);
  });
});
