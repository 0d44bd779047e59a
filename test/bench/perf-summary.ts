/**
 * Reads a `perf record -g` of a node process started with `--perf-basic-prof` (ab.ts --perf
 * makes one) and prints where its CPU went:
 *
 * - by kind of leaf: kernel, garbage collector, JSON, JIT-compiled JS, V8 builtins, other native;
 * - by owner: each sample goes to the leaf-most JavaScript frame of its stack (a router file, a
 *   package, a node module), so the JSON, string and allocation work a function asks of V8 counts
 *   as that function's; samples with no JavaScript frame are "(no js frame)";
 * - the top leaf symbols.
 *
 * Unlike the inspector's profile (prof-summary.ts) it samples the kernel as well, costs the process
 * next to nothing, and does not inflate the socket writes. Inclusive time is not given: V8's
 * inlined and resumed-async frames make perf's call chains unreliable above the leaf-most frame.
 * Before reading, it drops the stale entries of the recorded process's /tmp/perf-PID.map
 * (`latestCodeOnly`), so reused JIT addresses are named by the code that last had them.
 *
 *   npx tsx test/bench/perf-summary.ts .bench/perf/dist.data [--top 40] [--us 150  (the window's CPU µs per request: shares in µs)]
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { parseArgs } from "node:util";

export interface PerfSummary {
  samples: number;
  kinds: [string, number][];
  owners: [string, number][];
  leaves: [string, number][];
}

/**
 * V8 appends to /tmp/perf-PID.map as it places code and never says when code is freed, so an
 * address that held code V8 has since thrown away (deoptimised, or replaced by a higher tier) and
 * given to other code is named twice; perf then names samples by the stale entry (a socket write
 * under undici's `Request` constructor, 12% of an MCP round's samples). Rewrites the map of the
 * process `file` recorded so that an entry overlapping a later one is dropped: the latest code at
 * an address names it. Samples taken before such a reuse, within the recording, are named by the
 * newer code; a window recorded after warm-up has few of those.
 */
export function latestCodeOnly(file: string): void {
  const header = spawnSync("perf", ["report", "-i", file, "--header-only"], { encoding: "utf8" });
  const pid = / -p (\d+)/.exec(header.stdout ?? "")?.[1];
  const map = `/tmp/perf-${pid}.map`;
  if (pid === undefined || !existsSync(map)) return;
  const lines = readFileSync(map, "utf8").split("\n").filter((l) => /^[0-9a-f]+ [0-9a-f]+ /.test(l));
  /** Kept entries' [start, end), sorted by start, taken from the last line back. */
  const kept: { start: bigint; end: bigint; line: string }[] = [];
  for (let i = lines.length - 1; i >= 0; i--) {
    const [addr, size] = lines[i]!.split(" ", 2);
    const start = BigInt(`0x${addr}`);
    const end = start + BigInt(`0x${size}`);
    let lo = 0;
    let hi = kept.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (kept[mid]!.start < start) lo = mid + 1;
      else hi = mid;
    }
    if ((lo > 0 && kept[lo - 1]!.end > start) || (lo < kept.length && kept[lo]!.start < end)) continue;
    kept.splice(lo, 0, { start, end, line: lines[i]! });
  }
  writeFileSync(map, `${kept.map((k) => k.line).join("\n")}\n`);
}

/** The stacks of a perf.data file, leaf first (`perf script`'s symbol per frame). */
function stacks(file: string): string[][] {
  latestCodeOnly(file);
  const out = spawnSync("perf", ["script", "-i", file, "-F", "ip,sym,dso"], { encoding: "utf8", maxBuffer: 1 << 30 });
  if (out.status !== 0) throw new Error(`perf script failed: ${out.stderr}`);
  const all: string[][] = [];
  let cur: string[] = [];
  for (const line of out.stdout.split("\n")) {
    const t = line.trim();
    if (t === "") {
      if (cur.length > 0) all.push(cur);
      cur = [];
      continue;
    }
    const sp = t.indexOf(" ");
    cur.push(sp === -1 ? t : t.slice(sp + 1));
  }
  if (cur.length > 0) all.push(cur);
  return all;
}

const GC = /Scaveng|Heap::|Marking|Sweeper|GCTracer|Evacuat|RecordWrite|MarkCompact|Collector|MemoryAllocator/;

function kindOf(leaf: string): string {
  if (leaf.includes("[kernel")) return "kernel";
  if (GC.test(leaf)) return "gc";
  if (leaf.includes("Json")) return "json";
  if (leaf.includes("JS:")) return "js";
  if (leaf.includes("Builtins_")) return "builtins";
  return "native (runtime, libc)";
}

/** The router file, package or node module a JS frame belongs to. */
function ownerOf(frame: string): string | null {
  if (!frame.includes("JS:")) return null;
  const pkg = /node_modules\/((?:@[\w-]+\/)?[\w.-]+)/.exec(frame);
  if (pkg && !frame.includes("node-linux")) return pkg[1]!;
  const dist = /\/dist\/([\w/.-]+\.js)/.exec(frame);
  if (dist) return `router:${dist[1]}`;
  const mod = /node:((?:internal\/)?[\w_]+)/.exec(frame);
  if (mod) return `node:${mod[1]}`;
  const bench = /test\/bench\/([\w.-]+)/.exec(frame);
  return bench ? `bench:${bench[1]}` : "js (other)";
}

function top(counts: Map<string, number>, n: number): [string, number][] {
  return [...counts].sort((a, b) => b[1] - a[1]).slice(0, n);
}

export function summarisePerf(file: string, n = 30): PerfSummary {
  const all = stacks(file);
  const kinds = new Map<string, number>();
  const owners = new Map<string, number>();
  const leaves = new Map<string, number>();
  const add = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);
  for (const s of all) {
    const leaf = s[0]!;
    add(kinds, kindOf(leaf));
    let owner: string | null = null;
    for (const f of s) if ((owner = ownerOf(f)) !== null) break;
    add(owners, owner ?? `(no js frame) ${leaf.includes("[kernel") ? "kernel" : "native"}`);
    add(leaves, leaf.replace(/\+0x[0-9a-f]+/, "").replace(/ \(.*\)$/, "").replace("file:///work/main/dist/", "").slice(0, 110));
  }
  return { samples: all.length, kinds: top(kinds, n), owners: top(owners, n), leaves: top(leaves, n) };
}

/** Prints a summary; with `usPerRequest` (the window's CPU per request) each share in µs per request too. */
export function printPerf(s: PerfSummary, usPerRequest?: number, log: (line: string) => void = console.log): void {
  const pct = (v: number) => {
    const share = v / s.samples;
    return `${(100 * share).toFixed(1).padStart(5)}%${usPerRequest === undefined ? "" : `${(share * usPerRequest).toFixed(1).padStart(7)} µs`}`;
  };
  log(`${s.samples} samples`);
  log("\nby kind of leaf:");
  for (const [k, v] of s.kinds) log(`${pct(v)}  ${k}`);
  log("\nby owner (leaf-most JS frame):");
  for (const [k, v] of s.owners) log(`${pct(v)}  ${k}`);
  log("\ntop leaves:");
  for (const [k, v] of s.leaves) log(`${pct(v)}  ${k}`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: "string" }, us: { type: "string" } } });
  if (positionals.length === 0) {
    console.error("usage: npx tsx test/bench/perf-summary.ts FILE.data [--top N]");
    process.exit(2);
  }
  for (const file of positionals) printPerf(summarisePerf(file, Number(values.top ?? 30)), values.us === undefined ? undefined : Number(values.us));
}
