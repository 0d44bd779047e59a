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
 * router instances; the primary is SIGKILLed every --kill-every seconds (default 5). Prints
 * requests served, failures by class, each failover window and stored responses lost; exits 1
 * when one was lost, or a background job never finished or ran twice.
 * --cluster: the same on a Redis Cluster (three primaries, two replicas each); the first
 * primary is SIGKILLed each time.
 */
import { parseArgs } from "node:util";
import { DEFAULTS, formatReport, runChaos } from "./chaos.js";
import { SENTINEL_DEFAULTS, formatSentinelReport, runSentinelChaos } from "./sentinel.js";

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
  const bad = report.lost > 0 || report.background.unfinished > 0 || report.background.ranTwice > 0;
  if (bad) console.error(`[chaos] FAIL: ${report.lost} stored responses lost, ${report.background.unfinished} background jobs unfinished, ${report.background.ranTwice} ran twice`);
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
