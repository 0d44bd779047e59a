/**
 * Finds objects V8 keeps as dictionaries ("slow" properties) on their way to JSON.stringify: a
 * preload for a router under load, or for the test suite, e.g.
 *   npx tsx test/bench/ab.ts --dists "dist@--require=./test/bench/dict-probe.cjs" --paths native-stream --rounds 1
 *   NODE_OPTIONS="--require=./test/bench/dict-probe.cjs" npx vitest run --pool=forks test/integration
 * An object becomes a dictionary when a member other than its last is deleted, or when many are
 * added to it by computed key; JSON.stringify then takes its slow path over it, and every read of
 * it is a hash lookup (BENCHMARKS.md, "What we learnt", round 27). Every value passed to JSON.stringify is
 * walked (4 levels, the first 8 entries of an array); a dictionary found there is recorded once per
 * place, with the router's frames that serialised it, in .bench/dict/PID.txt as it is found (a
 * test worker may be killed rather than exit). The walk slows the process: its CPU figures mean
 * nothing.
 */
const { setFlagsFromString } = require("node:v8");
const { appendFileSync, mkdirSync } = require("node:fs");

setFlagsFromString("--allow-natives-syntax"); // NODE_OPTIONS may not carry it
const hasFastProperties = new Function("o", "return %HasFastProperties(o)");
const out = `.bench/dict/${process.pid}.txt`;
const seen = new Set();

/** The path to the first dictionary inside `value`, with its first keys; null when there is none. */
function dictionaryIn(value, depth, path) {
  if (depth > 4 || typeof value !== "object" || value === null) return null;
  if (Array.isArray(value)) {
    for (let i = 0; i < Math.min(value.length, 8); i++) {
      const found = dictionaryIn(value[i], depth + 1, `${path}[${i}]`);
      if (found) return found;
    }
    return null;
  }
  if (!hasFastProperties(value)) return `${path || "(value)"} {${Object.keys(value).slice(0, 5).join(",")}}`;
  for (const key in value) {
    const found = dictionaryIn(value[key], depth + 1, `${path}.${key}`);
    if (found) return found;
  }
  return null;
}

const stringify = JSON.stringify;
JSON.stringify = function probedStringify(value, replacer, space) {
  const found = dictionaryIn(value, 0, "");
  if (found) {
    const frames = new Error().stack.split("\n").slice(2);
    const own = frames.filter((line) => /\/(src|dist)\//.test(line) && !line.includes("node_modules")).slice(0, 3);
    const where = (own.length > 0 ? own : frames.slice(0, 3)).map((line) => line.trim().replace(/^at /, "").replace(/\(?file:\/\/\S*?\/(src|dist)\//g, "$1/")).join(" < ");
    const line = `${found}  @ ${where}`;
    if (!seen.has(line)) {
      seen.add(line);
      mkdirSync(".bench/dict", { recursive: true });
      appendFileSync(out, line + "\n");
    }
  }
  return stringify.call(JSON, value, replacer, space);
};
