/**
 * npm run chaos -- [--duration S] [--concurrency N] [--kill-every S] [--down S]
 *                  [--dead] [--redis] [--redis-every S] [--stream-share F] [--chunk-delay MS]
 * npm run chaos -- --sentinel|--cluster [--duration S] [--concurrency N] [--kill-every S] [--durability replica|primary]
 *
 * Bounded load against a router with three mock backends on 127.0.0.1 while one
 * backend is killed and restarted periodically (and, with --redis, a real
 * redis-server with AOF is restarted too). Prints a table; exits 1 when a stored
 * response was lost, or when a request got an HTTP error without --redis (Redis
 * restarts legitimately fail requests whose response could not be stored).
 *
 * --sentinel: a real Sentinel deployment (primary, two replicas, three sentinels) under two
 * router instances; the primary is SIGKILLed every --kill-every seconds (default 5). Load: stored
 * requests (chains, half streamed), background jobs and store: false requests, on a key with
 * limits. Prints requests served, failures by class, each failover window, stored responses lost,
 * the slowest store failure (503 store_unavailable), the store: false delay (p50/p99/max) and each
 * finished job's terminal events when re-streamed through both instances; exits 1 when a response
 * was lost, a job never finished, ran twice or re-streamed without exactly one terminal event, a
 * store failure took 2 s or more, or the store: false delay p99 reached 100 ms.
 * --cluster: the same on a Redis Cluster (three primaries, two replicas each); the first
 * primary is SIGKILLed each time.
 */

import { parseArgs } from "node:util";
import { DEFAULTS, formatReport, runChaos } from "./chaos.js";
import { SENTINEL_DEFAULTS, formatSentinelReport, runSentinelChaos } from "./sentinel.js";

/** The bounds the Sentinel run holds (docs/failover.md). */
const STORE_FAILURE_BOUND_MS = 2_000;
const NO_STORE_DELAY_BOUND_MS = 100;

const { values } = parseArgs({
  options: {
    duration: { type: "string" },
    concurrency: { type: "string" },
    "kill-every": { type: "string" },
    down: { type: "string" },
    dead: { type: "boolean" },
    redis: { type: "boolean" },
    "redis-every": { type: "string" },
    "stream-share": { type: "string" },
    "chunk-delay": { type: "string" },
    sentinel: { type: "boolean" },
    cluster: { type: "boolean" },
    durability: { type: "string" },
  },
});

function num(name: string, raw: string | undefined, fallback: number, max: number): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0 || n > max) {
    console.error(`--${name} must be a number between 0 and ${max}`);
    process.exit(2);
  }
  return n;
}

if (values.sentinel || values.cluster) {
  const durability = values.durability ?? SENTINEL_DEFAULTS.durability;
  if (durability !== "replica" && durability !== "primary") {
    console.error("--durability must be replica or primary");
    process.exit(2);
  }
  const sopts = {
    ...SENTINEL_DEFAULTS,
    durationMs: num("duration", values.duration, SENTINEL_DEFAULTS.durationMs / 1000, 600) * 1000,
    concurrency: Math.max(1, Math.round(num("concurrency", values.concurrency, SENTINEL_DEFAULTS.concurrency, 64))),
    killEveryMs: num("kill-every", values["kill-every"], SENTINEL_DEFAULTS.killEveryMs / 1000, 600) * 1000,
    durability: durability as "replica" | "primary",
    deployment: values.cluster ? ("cluster" as const) : ("sentinel" as const),
    progress: (line: string) => console.error(`[chaos] ${line}`),
  };
  console.error(`[chaos] ${sopts.deployment}: ${sopts.durationMs / 1000} s, concurrency ${sopts.concurrency}, two router instances, primary killed every ${sopts.killEveryMs / 1000} s, durability ${durability}`);
  const report = await runSentinelChaos(sopts);
  console.log(formatSentinelReport(report, durability));
  const b = report.background;
  const ends = b.restreamed - b.oneTerminal;
  const slow = report.storeFailures.slowestMs >= STORE_FAILURE_BOUND_MS;
  // The delay the store adds (its admission wait): the whole latency also holds the CPU time of
  // six Redis processes, two routers and the load in one process, on whatever the machine has.
  const delayed = report.noStore.storeWait.p99Ms >= NO_STORE_DELAY_BOUND_MS || report.noStore.failed > 0;
  const bad = report.lost > 0 || b.unfinished > 0 || b.ranTwice > 0 || ends > 0 || slow || delayed;
  if (bad) {
    console.error(
      `[chaos] FAIL: ${report.lost} stored responses lost, ${b.unfinished} background jobs unfinished, ${b.ranTwice} ran twice, ${ends} re-streams without exactly one terminal event, ` +
        `slowest store failure ${report.storeFailures.slowestMs} ms (bound ${STORE_FAILURE_BOUND_MS}), store:false store wait p99 ${report.noStore.storeWait.p99Ms} ms (bound ${NO_STORE_DELAY_BOUND_MS}; latency p99 ${report.noStore.p99Ms} ms), ${report.noStore.failed} store:false failed`,
    );
  }
  process.exit(bad ? 1 : 0);
}

const opts = {
  ...DEFAULTS,
  durationMs: num("duration", values.duration, DEFAULTS.durationMs / 1000, 600) * 1000,
  concurrency: Math.max(1, Math.round(num("concurrency", values.concurrency, DEFAULTS.concurrency, 64))),
  killEveryMs: num("kill-every", values["kill-every"], DEFAULTS.killEveryMs / 1000, 600) * 1000,
  downMs: num("down", values.down, DEFAULTS.downMs / 1000, 600) * 1000,
  deadBackend: values.dead === true,
  redis: values.redis === true,
  redisEveryMs: num("redis-every", values["redis-every"], DEFAULTS.redisEveryMs / 1000, 600) * 1000,
  streamShare: num("stream-share", values["stream-share"], DEFAULTS.streamShare, 1),
  chunkDelayMs: num("chunk-delay", values["chunk-delay"], DEFAULTS.chunkDelayMs, 1000),
  progress: (line: string) => console.error(`[chaos] ${line}`),
};

console.error(
  `[chaos] ${opts.durationMs / 1000} s, concurrency ${opts.concurrency}, kill a backend every ${opts.killEveryMs / 1000} s for ${opts.downMs / 1000} s` +
    `${opts.deadBackend ? ", one backend dead throughout" : ""}${opts.redis ? `, redis restarted every ${opts.redisEveryMs / 1000} s` : ", memory store"}`,
);
const report = await runChaos(opts);
console.log(formatReport(report));
const bad = report.lost > 0 || (!opts.redis && report.failed > 0);
if (bad) console.error(`[chaos] FAIL: ${report.lost} stored responses lost, ${report.failed} requests failed`);
process.exit(bad ? 1 : 0);
