import net from "node:net";
import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { createRedisClient, type RedisClient } from "../../src/store/redis/client.js";
import { startRedis, type RedisServerHandle } from "../helpers/redis-server.js";
import { waitUntil } from "../helpers/wait.js";

/**
 * A sentinel under the test's control (RESP over loopback) in front of a real redis-server, so the
 * moment a +switch-master announcement arrives can be placed exactly: while the client is between
 * connections, asking a sentinel where the primary now is. A real failover puts it there often
 * (the old primary's connection drops first, the announcement follows the promotion).
 */
interface FakeSentinel {
  port: number;
  /** Hold get-master-addr-by-name replies until released. */
  hold: boolean;
  held: (() => void)[];
  announce(payload: string): void;
  close(): Promise<void>;
}

const bulk = (s: string) => `$${Buffer.byteLength(s)}\r\n${s}\r\n`;
const array = (items: string[]) => `*${items.length}\r\n${items.map(bulk).join("")}`;

/** Splits RESP arrays of bulk strings (what a client sends) out of a buffer; returns the rest. */
function parseCommands(buf: string): { commands: string[][]; rest: string } {
  const commands: string[][] = [];
  let at = 0;
  for (;;) {
    if (buf[at] !== "*") break;
    let eol = buf.indexOf("\r\n", at);
    if (eol < 0) break;
    const n = Number(buf.slice(at + 1, eol));
    let pos = eol + 2;
    const args: string[] = [];
    for (let i = 0; i < n; i++) {
      eol = buf.indexOf("\r\n", pos);
      if (eol < 0) return { commands, rest: buf.slice(at) };
      const len = Number(buf.slice(pos + 1, eol));
      if (buf.length < eol + 2 + len + 2) return { commands, rest: buf.slice(at) };
      args.push(buf.slice(eol + 2, eol + 2 + len));
      pos = eol + 2 + len + 2;
    }
    commands.push(args);
    at = pos;
  }
  return { commands, rest: buf.slice(at) };
}

async function startFakeSentinel(primaryPort: number): Promise<FakeSentinel> {
  const subscribers = new Set<net.Socket>();
  const sockets = new Set<net.Socket>();
  const fake: FakeSentinel = {
    port: 0,
    hold: false,
    held: [],
    announce(payload) {
      for (const s of subscribers) s.write(array(["message", "+switch-master", payload]));
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
  const server = net.createServer((sock) => {
    sockets.add(sock);
    sock.on("close", () => (sockets.delete(sock), subscribers.delete(sock)));
    sock.on("error", () => {});
    let pending = "";
    sock.on("data", (chunk) => {
      const { commands, rest } = parseCommands(pending + chunk.toString("latin1"));
      pending = rest;
      for (const [name = "", sub = ""] of commands) {
        const cmd = name.toLowerCase();
        if (cmd === "sentinel" && sub.toLowerCase() === "get-master-addr-by-name") {
          const reply = () => sock.writable && sock.write(array(["127.0.0.1", String(primaryPort)]));
          if (fake.hold) fake.held.push(reply);
          else reply();
        } else if (cmd === "sentinel") sock.write("*0\r\n");
        else if (cmd === "subscribe") {
          subscribers.add(sock);
          sock.write(`*3\r\n${bulk("subscribe")}${bulk("+switch-master")}:1\r\n`);
        } else sock.write("+OK\r\n");
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  fake.port = (server.address() as net.AddressInfo).port;
  return fake;
}

let redis: RedisServerHandle | undefined;
let fake: FakeSentinel | undefined;
const clients: RedisClient[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) c.disconnect();
  await fake?.close();
  await redis?.stop();
});

describe("a Sentinel client between connections", () => {
  it("a +switch-master announced while it asks where the primary is does not end the client for good", async () => {
    redis = await startRedis();
    fake = await startFakeSentinel(redis.port);
    const client = createRedisClient({ sentinels: [{ host: "127.0.0.1", port: fake.port }], name: "grp" });
    clients.push(client);
    const admin = new Redis(redis.url);
    clients.push(admin);
    const statuses: string[] = [];
    client.on("end", () => statuses.push("end"));

    await waitUntil("the client to be ready", () => client.status === "ready");
    // The failover detector subscribes once the connection is up.
    await new Promise((r) => setTimeout(r, 200));

    // The primary drops the connection; the client asks the sentinel again, and that answer waits.
    fake.hold = true;
    await admin.client("KILL", "TYPE", "normal", "SKIPME", "yes");
    await waitUntil("the client to ask the sentinel for the primary", () => fake!.held.length > 0, 5_000);
    // The announcement of the promotion lands while the question is open.
    fake.announce(`grp 127.0.0.1 1 127.0.0.1 ${redis.port}`);
    await new Promise((r) => setTimeout(r, 100));
    fake.hold = false;
    for (const reply of fake.held.splice(0)) reply();

    await waitUntil("the client to be ready again", () => client.status === "ready", 5_000).catch((err: Error) => {
      throw new Error(`${err.message}; status ${client.status}, events ${statuses.join(",")}`);
    });
    expect(await client.ping()).toBe("PONG");
    expect(statuses).toEqual([]);
  }, 20_000);
});
