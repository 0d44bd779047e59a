/**
 * Counts the promises a server creates per HTTP request it serves, and where: a preload for a
 * router or floor under load, e.g.
 *   npx tsx test/bench/ab.ts --dists "dist@--require=./test/bench/promise-count.cjs" --paths native-stream --rounds 1
 *   npx tsx test/bench/ab.ts --dists dist --floors --floor-flags="--require=./test/bench/promise-count.cjs" --paths native-stream --rounds 1
 * When the process exits it writes .bench/promises/PID.txt: promises per request over its whole
 * life (warm-up included), then the creators of every 64th promise (their first stack frames), as
 * promises per request. A promise is a turn of the microtask queue or more when it settles
 * (BENCHMARKS.md, "What we learnt", round 24: ~0.4 µs per async layer under load). The hook and the
 * sampled stacks slow the process: its CPU figures in that run mean nothing.
 */
const { promiseHooks } = require("node:v8");
const http = require("node:http");
const { mkdirSync, writeFileSync } = require("node:fs");

const SAMPLE_EVERY = 64;
let promises = 0;
let requests = 0;
const creators = new Map();

promiseHooks.onInit(() => {
  promises++;
  if (promises % SAMPLE_EVERY !== 0) return;
  const frames = new Error().stack.split("\n").slice(2, 9);
  const where = frames.map((line) => line.trim().replace(/^at /, "").replace(/file:\/\/\S*?\/(dist|node_modules)\//g, "$1/")).join(" < ");
  creators.set(where, (creators.get(where) ?? 0) + 1);
});

const emit = http.Server.prototype.emit;
http.Server.prototype.emit = function countRequests(event, ...args) {
  if (event === "request") requests++;
  return emit.call(this, event, ...args);
};

let written = false;
function write() {
  if (written || requests === 0) return;
  written = true;
  const lines = [`${(promises / requests).toFixed(1)} promises per request (${promises} over ${requests} requests)`];
  for (const [where, n] of [...creators].sort((a, b) => b[1] - a[1]).slice(0, 60)) lines.push(`${((n * SAMPLE_EVERY) / requests).toFixed(2)}  ${where}`);
  mkdirSync(".bench/promises", { recursive: true });
  writeFileSync(`.bench/promises/${process.pid}.txt`, lines.join("\n") + "\n");
}
process.on("exit", write);
// Written at SIGTERM too: the router's own handler may end the process before "exit" would run
// ours. A process with no handler of its own exits, as it would have without this one.
process.prependListener("SIGTERM", () => {
  write();
  if (process.listenerCount("SIGTERM") === 1) process.exit(143);
});
