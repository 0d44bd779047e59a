/**
 * `npm run bench -- --only chain`: what a long agent session costs the router, turn by turn.
 * One chain by `previous_response_id` on `kind: chat` (fast mock upstream), 4 KB of new input
 * a turn, `store: true`, to depth 500, for each store (memory and Redis) and each layout: this
 * build, and with `--chain-baseline DIR` another build's dist/ (e.g. the release before each
 * item was stored once) in the same run. At depths 1, 10, 50, 200 and 500 it reports:
 *
 * - stored bytes over the bytes the client sent: Redis, the bytes of the values under the run's
 *   keys (and MEMORY USAGE beside it: Redis' own overhead in); memory, the store's own count of
 *   the bytes it holds (what its bounds count), with the heap's growth after a full GC in the JSON;
 * - Redis commands for the turn: run (INFO commandstats, those inside scripts included) and
 *   sent (MONITOR lines from clients: a script call is one, a MULTI's commands count each);
 * - what storing adds to the router's time for a turn: the median of 7 `store: true` turns at
 *   that depth (forks of the chain, deleted after) minus the median of 7 `store: false` turns
 *   that send the same history themselves (the upstream and the translation of the context
 *   cost the same on both sides, so they cancel out). Twice: in wall time, and in the router
 *   process's own CPU time for the turn (process.cpuUsage before and after it, asked over IPC),
 *   which other work on a busy machine does not inflate; beside them Redis' own CPU time for the
 *   turn (INFO cpu, its main thread);
 * - the router's RSS.
 */
import { connect } from "node:net";
import { Redis } from "ioredis";
import { spawnNode, type Child } from "./procs.js";

export const CHAIN_DEPTHS = [1, 10, 50, 200, 500];
const SAMPLES = 7;
const TURN_BYTES = 4096;

export interface ChainPoint {
  depth: number;
  sentBytes: number;
  /** Redis: the bytes of the values written; memory: the router's heap growth after a full GC. */
  storedBytes: number;
  /** Redis: MEMORY USAGE over the run's keys (allocator size classes and per-key overhead in). */
  redisMemory: number | null;
  /** Commands Redis ran for the turn (scripts' own calls included) and the client's round trips; null for memory. */
  redisCommands: number | null;
  redisRoundTrips: number | null;
  storedMs: number;
  statelessMs: number;
  addedMs: number;
  /** The router's CPU time for a turn (median), stored and stateless, and the difference. */
  storedCpuMs: number;
  statelessCpuMs: number;
  addedCpuMs: number;
  /** Redis' own CPU time (INFO cpu, main thread) for a stored turn and a stateless one (medians); null for memory. */
  storedRedisMs: number | null;
  statelessRedisMs: number | null;
  /** Memory: the router's heap growth after a full GC (V8's overhead in; noisy by a few hundred KB). */
  heapBytes: number | null;
  rssMb: number;
}

export interface ChainRun {
  store: "memory" | "redis";
  layout: string;
  points: ChainPoint[];
}

export interface ChainLayout {
  label: string;
  dist: string;
  storage?: Record<string, unknown>;
}

export interface ChainBenchOptions {
  mockUrl: string;
  /** A fresh Redis per run (flushed), or null: the Redis runs are skipped. */
  redisUrl: string | null;
  /** dist/ directories to run, by label: this build first; `storage`: config beside the bench's own (e.g. history_cache_bytes: 0), Redis runs only. */
  layouts: ChainLayout[];
  cpus: string;
  maxDepth?: number;
  log: (...a: unknown[]) => void;
}

/** 4 KB of text that differs turn by turn (nothing for a store to share by accident). */
function turnText(turn: number, salt: string): string {
  let s = `turn ${turn} ${salt}: `;
  let x = turn * 2654435761;
  while (s.length < TURN_BYTES) {
    x = (x * 1103515245 + 12345) >>> 0;
    s += x.toString(36) + " ";
  }
  return s.slice(0, TURN_BYTES);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** 503s met (a loaded machine can make a store call time out): each is retried after a pause, and the run says how many there were. */
export let retried = 0;

async function post(origin: string, body: unknown, attempt = 1): Promise<{ ms: number; json: { id: string; output: unknown[] } }> {
  try {
    return await postOnce(origin, body);
  } catch (err) {
    if (attempt >= 3 || !String(err).includes("HTTP 503")) throw err;
    retried++;
    await new Promise((r) => setTimeout(r, 1_000));
    return post(origin, body, attempt + 1);
  }
}

async function postOnce(origin: string, body: unknown): Promise<{ ms: number; json: { id: string; output: unknown[] } }> {
  const text = JSON.stringify(body);
  const t0 = performance.now();
  const res = await fetch(`${origin}/v1/responses`, { method: "POST", headers: { "content-type": "application/json" }, body: text });
  const json = (await res.json()) as { id: string; output: unknown[]; error?: unknown };
  const ms = performance.now() - t0;
  if (!res.ok) throw new Error(`HTTP ${res.status}: ${JSON.stringify(json.error)}`);
  return { ms, json };
}

/** One answer of the router child over IPC: the field `key` of the first message that has it. */
function ask<T>(child: Child, message: string, key: string): Promise<T> {
  return new Promise((resolve) => {
    const onMessage = (m: Record<string, unknown>) => {
      if (!m || !(key in m)) return;
      child.proc.off("message", onMessage);
      resolve(m[key] as T);
    };
    child.proc.on("message", onMessage);
    child.proc.send(message);
  });
}

/** Redis' own CPU time so far, ms (INFO cpu, its main thread: the commands, scripts and replies it wrote). */
async function redisMs(redis: Redis | null): Promise<number> {
  if (!redis) return 0;
  const info = await redis.info("cpu");
  const seconds = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, "m").exec(info)?.[1] ?? Number.NaN);
  return (seconds("used_cpu_user_main_thread") + seconds("used_cpu_sys_main_thread")) * 1000;
}

/** A turn with what it cost: wall time, the router's CPU time, Redis' time. */
async function measuredPost(origin: string, body: unknown, router: Child, redis: Redis | null): Promise<{ ms: number; cpuMs: number; redisMs: number; json: { id: string; output: unknown[] } }> {
  const cpu0 = await ask<NodeJS.CpuUsage>(router, "cpu", "cpu");
  const r0 = await redisMs(redis);
  const turn = await post(origin, body);
  const cpu1 = await ask<NodeJS.CpuUsage>(router, "cpu", "cpu");
  const r1 = await redisMs(redis);
  return { ...turn, cpuMs: (cpu1.user + cpu1.system - cpu0.user - cpu0.system) / 1000, redisMs: r1 - r0 };
}

/** Sums of INFO commandstats: every call, and the top-level ones (what clients sent: not the calls scripts made). */
async function commandCounts(redis: Redis): Promise<Map<string, number>> {
  const info = await redis.info("commandstats");
  const calls = new Map<string, number>();
  for (const m of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) calls.set(m[1]!, Number(m[2]));
  return calls;
}

/** What Redis holds for the run's keys: the bytes of the values the router wrote, and MEMORY USAGE (Redis' own overhead in). */
async function storedRedisBytes(redis: Redis, prefix: string): Promise<{ values: number; memory: number }> {
  let values = 0;
  let memory = 0;
  let cursor = "0";
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
    cursor = next;
    for (const key of keys) {
      if (key.includes(":bull:")) continue;
      memory += (await redis.memory("USAGE", key, "SAMPLES", 0)) ?? 0;
      const type = await redis.type(key);
      if (type === "string") values += await redis.strlen(key);
      else if (type === "hash") {
        const fields = await redis.hkeys(key);
        const p = redis.pipeline();
        for (const f of fields) p.hstrlen(key, f);
        for (const [, n] of (await p.exec()) ?? []) values += n as number;
      } else if (type === "list") for (const v of await redis.lrange(key, 0, -1)) values += Buffer.byteLength(v);
    }
  } while (cursor !== "0");
  return { values, memory };
}

function heapAfterGc(child: Child): Promise<number> {
  return new Promise((resolve) => {
    const onMessage = (m: { gc?: NodeJS.MemoryUsage }) => {
      if (!m.gc) return;
      child.proc.off("message", onMessage);
      // The heap only: request and socket buffers (external, arrayBuffers) come and go with the traffic, strings the store holds are on the heap.
      resolve(m.gc.heapUsed);
    };
    child.proc.on("message", onMessage);
    child.proc.send("gc");
  });
}

function routerConfig(mockUrl: string, redisUrl: string, prefix: string, storage: Record<string, unknown> = {}) {
  return {
    server: { host: "127.0.0.1", port: 0 },
    endpoints: [{ name: "chat-ep", url: mockUrl, kind: "chat", max_concurrency: 64 }],
    models: { "chat-s": { endpoints: ["chat-ep"], upstream_model: "chat-s" } },
    storage: { redis_url: redisUrl, prefix, memory: { max_entries: 100_000, max_bytes: 4 * 1024 ** 3 }, ...storage },
    logging: { level: "warn" },
  };
}

async function runChain(opts: ChainBenchOptions, store: "memory" | "redis", layout: ChainLayout): Promise<ChainRun> {
  const maxDepth = opts.maxDepth ?? 500;
  const prefix = `rrchainbench:${layout.label}:`;
  const redis = store === "redis" ? new Redis(opts.redisUrl!) : null;
  await redis?.flushall();
  const router = await spawnNode({
    name: `router-${store}-${layout.label}`,
    // BENCH_CHAIN_PROFILE=DIR: a CPU profile of each router (node --cpu-prof) in DIR.
    args: ["--expose-gc", ...(process.env.BENCH_CHAIN_PROFILE ? ["--cpu-prof", "--cpu-prof-dir", process.env.BENCH_CHAIN_PROFILE] : []), "test/bench/router-child.mjs"],
    env: { BENCH_ROUTER_CONFIG: JSON.stringify(routerConfig(opts.mockUrl, store === "redis" ? opts.redisUrl! : "", prefix, layout.storage)), BENCH_ROUTER_DIST: layout.dist, NODE_ENV: "production" },
    cpus: opts.cpus,
    ready: { ipc: true },
  });
  const origin = `http://127.0.0.1:${router.port}`;
  const points: ChainPoint[] = [];
  try {
    // Warm-up: every path a turn takes (stored, chained, deleted), so code compiled later does not count as stored bytes.
    for (let i = 0; i < 30; i++) {
      await post(origin, { model: "chat-s", input: "warm up", store: false });
      const a = await post(origin, { model: "chat-s", input: "warm up", store: true });
      const b = await post(origin, { model: "chat-s", input: "warm up", previous_response_id: a.json.id, store: true });
      for (const id of [b.json.id, a.json.id]) await fetch(`${origin}/v1/responses/${id}`, { method: "DELETE" });
    }
    const heapBase = store === "memory" ? await heapAfterGc(router) : 0;
    const storeBase = store === "memory" ? ((await ask<number | null>(router, "storeBytes", "storeBytes")) ?? 0) : 0;
    const usedBase = redis ? await storedRedisBytes(redis, prefix) : { values: 0, memory: 0 };
    // What the client would send itself without the store: every earlier input and output item.
    const history: unknown[] = [];
    let prev: string | null = null;
    let sent = 0;
    for (let depth = 1; depth <= maxDepth; depth++) {
      const message = (salt: string) => ({ type: "message", role: "user", content: turnText(depth, salt) });
      const sample = CHAIN_DEPTHS.includes(depth);
      const stored = { ms: [] as number[], cpuMs: [] as number[], redisMs: [] as number[] };
      const stateless = { ms: [] as number[], cpuMs: [] as number[], redisMs: [] as number[] };
      const keep = (into: typeof stored, turn: { ms: number; cpuMs: number; redisMs: number }) => (into.ms.push(turn.ms), into.cpuMs.push(turn.cpuMs), into.redisMs.push(turn.redisMs));
      if (sample) {
        const forks: string[] = [];
        // Interleaved, so load on the machine falls on both sides alike.
        for (let k = 0; k < SAMPLES; k++) {
          const fork = await measuredPost(origin, { model: "chat-s", input: [message(`fork ${k}`)], previous_response_id: prev ?? undefined, store: true }, router, redis);
          keep(stored, fork);
          forks.push(fork.json.id);
          keep(stateless, await measuredPost(origin, { model: "chat-s", input: [...history, message(`stateless ${k}`)], store: false }, router, redis));
        }
        for (const id of forks) await fetch(`${origin}/v1/responses/${id}`, { method: "DELETE" });
      }
      const input = [message("main")];
      sent += JSON.stringify(input).length;
      const before = redis && sample ? await commandCounts(redis) : null;
      const turn = await post(origin, { model: "chat-s", input, previous_response_id: prev ?? undefined, store: true });
      prev = turn.json.id;
      history.push(...input, ...turn.json.output);
      if (!sample) continue;
      let redisCommands: number | null = null;
      let redisRoundTrips: number | null = null;
      if (redis && before) {
        const after = await commandCounts(redis);
        let all = 0;
        for (const [cmd, n] of after) if (cmd !== "info") all += n - (before.get(cmd) ?? 0);
        redisCommands = all;
        // MONITOR copies every argument to the bench: beyond a few MB a turn (the full-copy layout) it only slows Redis down.
        redisRoundTrips = layout.label.includes("full copy") && depth > 50 ? null : await clientCallsOfOneTurn(origin, opts.redisUrl!, prev, depth).catch(() => null);
      }
      const held = redis ? await storedRedisBytes(redis, prefix) : null;
      const heapBytes = held ? null : (await heapAfterGc(router)) - heapBase;
      const storeBytes = held ? null : ((await ask<number | null>(router, "storeBytes", "storeBytes")) ?? Number.NaN) - storeBase;
      const storedBytes = held ? held.values - usedBase.values : storeBytes!;
      const redisMemory = held ? held.memory - usedBase.memory : null;
      const [storedMs, statelessMs, storedCpuMs, statelessCpuMs] = [stored.ms, stateless.ms, stored.cpuMs, stateless.cpuMs].map(median) as [number, number, number, number];
      const point: ChainPoint = {
        depth,
        sentBytes: sent,
        storedBytes,
        redisMemory,
        redisCommands,
        redisRoundTrips,
        storedMs,
        statelessMs,
        addedMs: storedMs - statelessMs,
        storedCpuMs,
        statelessCpuMs,
        addedCpuMs: storedCpuMs - statelessCpuMs,
        storedRedisMs: redis ? median(stored.redisMs) : null,
        statelessRedisMs: redis ? median(stateless.redisMs) : null,
        heapBytes,
        rssMb: router.rssBytes() / 2 ** 20,
      };
      points.push(point);
      opts.log(
        `chain ${store} ${layout.label} depth ${depth}: stored ${(storedBytes / 2 ** 20).toFixed(1)} MB (${(storedBytes / sent).toFixed(2)}x sent), ` +
          `redis ${redisCommands ?? "-"} commands / ${redisRoundTrips ?? "-"} round trips, stored ${storedMs.toFixed(1)} ms vs stateless ${statelessMs.toFixed(1)} ms, ` +
          `cpu ${storedCpuMs.toFixed(1)} vs ${statelessCpuMs.toFixed(1)} ms, redis ${point.storedRedisMs?.toFixed(1) ?? "-"} ms, rss ${point.rssMb.toFixed(0)} MB`,
      );
    }
  } finally {
    await router.stop();
    await redis?.flushall();
    redis?.disconnect();
  }
  return { store, layout: layout.label, points };
}

/**
 * The client round trips of one more turn at this depth (a fork, deleted after): MONITOR on
 * a socket of the bench's own, lines from scripts ("lua") and the job queue's left out.
 */
async function clientCallsOfOneTurn(origin: string, redisUrl: string, prev: string | null, depth: number): Promise<number> {
  const socket = connect(Number(new URL(redisUrl).port), "127.0.0.1");
  let text = "";
  socket.on("data", (d) => (text += d));
  socket.write("MONITOR\r\n");
  while (!text.startsWith("+OK")) await new Promise((r) => setTimeout(r, 5));
  try {
    const fork = await post(origin, { model: "chat-s", input: [{ type: "message", role: "user", content: turnText(depth, "monitored") }], previous_response_id: prev ?? undefined, store: true });
    await new Promise((r) => setTimeout(r, 100));
    const counted = text.split("\r\n").filter((line) => / \[\d+ [\d.:]+\] /.test(line) && !line.includes(":bull:")).length;
    await fetch(`${origin}/v1/responses/${fork.json.id}`, { method: "DELETE" });
    return counted;
  } finally {
    socket.destroy();
  }
}

export async function measureChains(opts: ChainBenchOptions): Promise<ChainRun[]> {
  const runs: ChainRun[] = [];
  for (const store of ["memory", "redis"] as const) {
    if (store === "redis" && !opts.redisUrl) continue;
    for (const layout of opts.layouts) if (store === "redis" || !layout.storage) runs.push(await runChain(opts, store, layout));
  }
  return runs;
}

/** The runs as one Markdown table, layouts side by side per store and depth. */
export function renderChains(runs: ChainRun[]): string {
  const lines = [
    "| store | layout | depth | sent | stored | stored / sent | Redis MEMORY USAGE | Redis commands run (sent) | wall: stored / stateless | wall: storing adds | router CPU: stored / stateless | Redis CPU: stored / stateless | CPU storing adds (router + Redis) | router RSS |",
    "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
  ];
  const mb = (b: number) => (b >= 2 ** 20 ? `${(b / 2 ** 20).toFixed(1)} MB` : `${Math.round(b / 1024)} KB`);
  for (const store of ["memory", "redis"]) {
    for (const depth of CHAIN_DEPTHS) {
      for (const run of runs.filter((r) => r.store === store)) {
        const p = run.points.find((q) => q.depth === depth);
        if (!p) continue;
        const cmds = p.redisCommands === null ? "-" : `${p.redisCommands} (${p.redisRoundTrips ?? "not counted"})`;
        const usage = p.redisMemory === null ? "-" : `${mb(p.redisMemory)} (${(p.redisMemory / p.sentBytes).toFixed(2)}x)`;
        lines.push(
          `| ${store} | ${run.layout} | ${depth} | ${mb(p.sentBytes)} | ${mb(p.storedBytes)} | ${(p.storedBytes / p.sentBytes).toFixed(2)}x | ${usage} | ${cmds} | ` +
            `${p.storedMs.toFixed(1)} / ${p.statelessMs.toFixed(1)} ms | ${p.addedMs.toFixed(1)} ms | ${p.storedCpuMs.toFixed(1)} / ${p.statelessCpuMs.toFixed(1)} ms | ` +
            `${p.storedRedisMs === null ? "-" : `${p.storedRedisMs.toFixed(1)} / ${p.statelessRedisMs!.toFixed(1)} ms`} | ${(p.addedCpuMs + (p.storedRedisMs ?? 0) - (p.statelessRedisMs ?? 0)).toFixed(1)} ms | ${p.rssMb.toFixed(0)} MB |`,
        );
      }
    }
  }
  return lines.join("\n");
}
