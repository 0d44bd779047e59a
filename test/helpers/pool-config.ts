import { freePort } from "./redis-server.js";

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

/** A loopback URL where nothing listens: connections are refused at once. */
export async function deadUrl(): Promise<string> {
  return `http://127.0.0.1:${await freePort()}/v1`;
}
