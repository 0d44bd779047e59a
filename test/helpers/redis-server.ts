import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import net from "node:net";
import { Redis } from "ioredis";

export interface RedisServerHandle {
  url: string;
  port: number;
  /** Stops the server (SIGTERM, then SIGKILL) and waits for it to exit. */
  stop(): Promise<void>;
  /** Starts it again on the same port (stopping it first if it runs). */
  restart(): Promise<void>;
  /** Freezes the server (SIGSTOP): connections stay open but nothing answers. */
  pause(): void;
  /** Thaws a paused server (SIGCONT). */
  resume(): void;
}

/** A free loopback port: bind port 0, read it, release it. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/** Runs one command on a short-lived loopback connection; null when nothing answers. */
export async function askRedis(port: number, password: string | undefined, ...args: string[]): Promise<unknown> {
  const client = new Redis({ host: "127.0.0.1", port, password, lazyConnect: true, connectTimeout: 500, commandTimeout: 1_000, maxRetriesPerRequest: 0, retryStrategy: () => null, enableOfflineQueue: false });
  client.on("error", () => {});
  try {
    await client.connect();
    return await client.call(args[0]!, ...args.slice(1));
  } catch {
    return null;
  } finally {
    client.disconnect();
  }
}

/** Polls `probe` every 100 ms until it gives a value; throws `${who}: timed out waiting for ${what}` after timeoutMs. */
export async function pollUntil<T>(who: string, what: string, timeoutMs: number, probe: () => Promise<T | null | undefined | false>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`${who}: timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Thrown by a launch whose process exited before it was up: the port picked for it was taken meanwhile. */
export class PortTaken extends Error {}

/**
 * Launches a process on a port picked free here. Another test's process (a server, an outgoing
 * connection's source port) may take the port before the new one binds it; the new one then exits
 * at once and `launch` throws PortTaken: another port, up to 5 times.
 */
export async function onFreePort<T>(launch: (port: number) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await launch(await freePort());
    } catch (err) {
      if (attempt >= 5 || !(err instanceof PortTaken)) throw err;
    }
  }
}

function requireRedisServer(): void {
  const found = spawnSync("redis-server", ["--version"], { stdio: "ignore" });
  if (found.error || found.status !== 0) {
    throw new Error(
      "redis-server is not on PATH. The Redis store suites need a real Redis: install it " +
        "(apt-get install -y redis-server) and re-run. They fail rather than skip so CI cannot pass without them.",
    );
  }
}

/** Answers true once the server replies +PONG. */
function pingOnce(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = net.connect({ host: "127.0.0.1", port });
    const done = (ok: boolean) => {
      sock.destroy();
      resolve(ok);
    };
    sock.setTimeout(500, () => done(false));
    sock.on("error", () => done(false));
    sock.on("connect", () => sock.write("PING\r\n"));
    sock.on("data", (buf) => done(buf.toString().startsWith("+PONG")));
  });
}

/**
 * Spawns a real, throw-away redis-server (no persistence) on a free loopback port and
 * waits until it answers PING. Fails with a clear message when redis-server is missing.
 * With `persistDir`, every write is appended and fsynced there (AOF, appendfsync always),
 * so the data survives restart() - for chaos runs that restart Redis under load.
 */
export async function startRedis(opts: { persistDir?: string } = {}): Promise<RedisServerHandle> {
  requireRedisServer();
  let port = 0;
  let proc: ChildProcess | null = null;
  let stderr = "";

  const launch = async () => {
    stderr = "";
    const persistence = opts.persistDir ? ["--dir", opts.persistDir, "--appendonly", "yes", "--appendfsync", "always"] : ["--appendonly", "no"];
    const child = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", ...persistence, "--daemonize", "no"], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    child.stderr?.on("data", (d) => (stderr += d));
    proc = child;
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      if (child.exitCode !== null) throw new PortTaken(`redis-server exited with ${child.exitCode} on port ${port}: ${stderr}`);
      if (await pingOnce(port)) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    child.kill("SIGKILL");
    throw new Error(`redis-server did not answer PING on port ${port} within 10 s: ${stderr}`);
  };

  const stop = async () => {
    const child = proc;
    proc = null;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    child.kill("SIGCONT");
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 3_000);
    await exited;
    clearTimeout(timer);
  };

  // A restart keeps the port it started on.
  await onFreePort((picked) => {
    port = picked;
    return launch();
  });
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    stop,
    async restart() {
      await stop();
      await launch();
    },
    pause: () => void (proc as ChildProcess | null)?.kill("SIGSTOP"),
    resume: () => void (proc as ChildProcess | null)?.kill("SIGCONT"),
  };
}
