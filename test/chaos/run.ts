/**
 * npm run chaos -- [--duration S] [--concurrency N] [--kill-every S] [--down S]
 *                  [--dead] [--redis] [--redis-every S] [--stream-share F] [--chunk-delay MS]
 *
 * Bounded load against a router with three mock backends on 127.0.0.1 while one
 * backend is killed and restarted periodically (and, with --redis, a real
 * redis-server with AOF is restarted too). Prints a table; exits 1 when a stored
 * response was lost, or when a request got an HTTP error without --redis (Redis
 * restarts legitimately fail requests whose response could not be stored).
 */
import { parseArgs } from "node:util";
import { DEFAULTS, formatReport, runChaos } from "./chaos.js";

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
