import net from "node:net";

/**
 * One model ("m") served by several chat endpoints named a, b, c, ... in order,
 * with routing settings small enough for tests. `endpoint` overrides apply to
 * every endpoint (e.g. timeouts, max_concurrency).
 */
export function poolConfig(
  urls: string[],
  opts: { endpoint?: Record<string, unknown>; routing?: Record<string, unknown>; server?: Record<string, unknown>; kind?: "chat" | "openai" } = {},
) {
  const names = urls.map((_, i) => String.fromCharCode(97 + i));
  return {
    server: opts.server ?? {},
    endpoints: urls.map((url, i) => ({ name: names[i], url, kind: opts.kind ?? "chat", max_concurrency: 4, ...opts.endpoint })),
    models: { m: { endpoints: names } },
    routing: {
      queue_timeout: "5s",
      retry: { attempts: 3, max_time: "20s" },
      health: { failure_threshold: 2, cooldown: "60s" },
      ...opts.routing,
    },
  };
}

/**
 * A loopback port where nothing listens: connections are refused at once. A port below 1024
 * that refuses now stays so for the run: a test's server listens on port 0, which the kernel
 * picks from the ephemeral range, so no other test can take it (as it could take a free
 * ephemeral port picked and closed here).
 */
export async function deadPort(): Promise<number> {
  dead ??= (async () => {
    for (const port of [9, 4, 6, 8, 1, 11, 15]) if (await refused(port)) return port;
    throw new Error("every candidate low port on 127.0.0.1 accepted a connection: no dead port for the tests");
  })();
  return dead;
}
let dead: Promise<number> | undefined;

/** A loopback URL where nothing listens (deadPort). */
export async function deadUrl(): Promise<string> {
  return `http://127.0.0.1:${await deadPort()}/v1`;
}

function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(false);
    });
    socket.once("error", (err: NodeJS.ErrnoException) => resolve(err.code === "ECONNREFUSED"));
  });
}
