/**
 * Load clients of the bench: a sequential (concurrency 1) latency sampler that
 * interleaves several targets in one loop so they see the same machine state, a
 * concurrency-N throughput run on autocannon's API, and a holder of many open streams.
 * Every loop is bounded in count AND time.
 */
import autocannon from "autocannon";
import { setMaxListeners } from "node:events";
import { Client, Pool } from "undici";

export interface Target {
  /** Label in the results ("direct", "router", "bare", "portkey", ...). */
  name: string;
  origin: string;
  path: string;
  body: string;
  headers?: Record<string, string>;
}

export interface Sample {
  /** ms to the whole body. */
  total: number;
  /** ms to the first body bytes (for streams: the first event). */
  first: number;
}

export interface Summary {
  n: number;
  p50: number;
  p90: number;
  p99: number;
  mean: number;
}

export function summarize(values: number[]): Summary {
  const s = [...values].sort((a, b) => a - b);
  const q = (p: number) => (s.length === 0 ? Number.NaN : s[Math.min(s.length - 1, Math.floor(p * s.length))]!);
  return { n: s.length, p50: q(0.5), p90: q(0.9), p99: q(0.99), mean: s.reduce((a, b) => a + b, 0) / (s.length || 1) };
}

async function once(client: Client, t: Target): Promise<Sample> {
  const start = performance.now();
  const res = await client.request({ method: "POST", path: t.path, headers: { "content-type": "application/json", ...t.headers }, body: t.body });
  let first = -1;
  let bytes = 0;
  for await (const chunk of res.body) {
    if (first < 0) first = performance.now() - start;
    bytes += (chunk as Buffer).length;
  }
  const total = performance.now() - start;
  if (res.statusCode !== 200) throw new Error(`${t.name} ${t.path}: HTTP ${res.statusCode}`);
  if (bytes === 0) throw new Error(`${t.name} ${t.path}: empty body`);
  return { total, first: first < 0 ? total : first };
}

/**
 * Round-robin over `targets`, one request at a time on one keep-alive connection per
 * target, for `warmup` rounds (discarded) then up to `rounds` rounds or `maxMs`.
 */
export async function sampleLatency(targets: Target[], opts: { rounds: number; warmup: number; maxMs: number }): Promise<Map<string, Sample[]>> {
  const clients = targets.map((t) => new Client(t.origin, { keepAliveTimeout: 60_000, pipelining: 1 }));
  const out = new Map<string, Sample[]>(targets.map((t) => [t.name, []]));
  try {
    for (let r = 0; r < opts.warmup; r++) for (let i = 0; i < targets.length; i++) await once(clients[i]!, targets[i]!);
    const deadline = performance.now() + opts.maxMs;
    for (let r = 0; r < opts.rounds && performance.now() < deadline; r++) {
      // Rotate who goes first so no target always follows the same neighbour.
      for (let k = 0; k < targets.length; k++) {
        const i = (k + r) % targets.length;
        out.get(targets[i]!.name)!.push(await once(clients[i]!, targets[i]!));
      }
    }
  } finally {
    await Promise.all(clients.map((c) => c.close()));
  }
  return out;
}

export interface ThroughputResult {
  rps: number;
  requests: number;
  errors: number;
  non2xx: number;
  latencyP50: number;
  latencyP99: number;
  seconds: number;
}

/**
 * autocannon at `connections` concurrency for `seconds` (after a short warm-up run); `rate`: requests per second across
 * all connections (autocannon's overallRate), unset as fast as the server answers.
 */
export async function throughput(t: Target, connections: number, seconds: number, warmupSeconds = 1, rate?: number): Promise<ThroughputResult> {
  const run = (duration: number) =>
    autocannon({
      ...(rate ? { overallRate: rate } : {}),
      url: t.origin + t.path,
      method: "POST",
      headers: { "content-type": "application/json", ...t.headers },
      body: t.body,
      connections,
      pipelining: 1,
      duration,
      timeout: 30,
    });
  if (warmupSeconds > 0) await run(warmupSeconds);
  const r = await run(seconds);
  return {
    rps: r.requests.total / r.duration,
    requests: r.requests.total,
    errors: r.errors + r.timeouts,
    non2xx: r.non2xx,
    latencyP50: r.latency.p50,
    latencyP99: r.latency.p99,
    seconds: r.duration,
  };
}

export interface OpenStreams {
  opened: number;
  failed: number;
  /** ms until every stream had its first event. */
  allFirstMs: number;
  close(): Promise<void>;
}

/**
 * Opens `n` streaming requests at once (one connection each) and resolves when each
 * has delivered its first bytes (or failed), bounded by `maxMs`. The streams stay open
 * (the upstream trickles deltas) until close().
 */
export async function openStreams(t: Target, n: number, maxMs: number): Promise<OpenStreams> {
  const pool = new Pool(t.origin, { connections: n, pipelining: 1, keepAliveTimeout: 60_000, bodyTimeout: 0, headersTimeout: maxMs });
  const ac = new AbortController();
  setMaxListeners(n + 16, ac.signal); // one signal for all n requests
  const start = performance.now();
  let opened = 0;
  let failed = 0;
  const firsts: Promise<void>[] = [];
  for (let i = 0; i < n; i++) {
    firsts.push(
      new Promise<void>((resolve) => {
        pool
          .request({ method: "POST", path: t.path, headers: { "content-type": "application/json", ...t.headers }, body: t.body, signal: ac.signal })
          .then((res) => {
            let seen = false;
            res.body.on("data", () => {
              if (!seen) {
                seen = true;
                if (res.statusCode === 200) opened++;
                else failed++;
                resolve();
              }
            });
            res.body.on("error", () => resolve());
            res.body.on("end", () => resolve());
          })
          .catch(() => {
            failed++;
            resolve();
          });
      }),
    );
  }
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([Promise.all(firsts), new Promise<void>((r) => (timer = setTimeout(r, maxMs)))]);
  clearTimeout(timer);
  const allFirstMs = performance.now() - start;
  return {
    opened,
    failed,
    allFirstMs,
    close: async () => {
      ac.abort();
      await pool.destroy().catch(() => {});
    },
  };
}

/** Sends `count` streaming requests one after another (bounded by maxMs); returns how many completed. */
export async function sequentialStreams(t: Target, count: number, maxMs: number): Promise<number> {
  const client = new Client(t.origin, { keepAliveTimeout: 60_000, bodyTimeout: 60_000 });
  const deadline = performance.now() + maxMs;
  let done = 0;
  try {
    for (let i = 0; i < count && performance.now() < deadline; i++) {
      await once(client, t);
      done++;
    }
  } finally {
    await client.close();
  }
  return done;
}
