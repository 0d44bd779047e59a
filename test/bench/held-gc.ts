/**
 * What it costs the garbage collector when a long-lived object holds each request while it
 * runs: `npx tsx test/bench/held-gc.ts [--requests N]`. Each way runs in a fresh process pinned
 * to one core: 64 requests at a time, each a graph of ~20 KB that lives ~1 ms and is held,
 * while it runs, by
 *   none      nothing (the floor)
 *   set       a long-lived Set (add, delete)
 *   map       a long-lived Map keyed by a counter
 *   listener  a long-lived AbortSignal's listeners (addEventListener, removeEventListener)
 *   slots     ops/slots.ts (an array's slots and a free list)
 * and prints young- and old-generation GC time per request. A Set, a Map or a signal keeps what
 * it held in tables it has replaced, which live in the old generation until a full GC: the
 * requests they point to are promoted instead of dying young (see ops/slots.ts).
 */
import { spawnSync } from "node:child_process";
import { parseArgs } from "node:util";

const WAYS = ["none", "set", "map", "listener", "slots"] as const;
type Way = (typeof WAYS)[number];

const { values } = parseArgs({ options: { requests: { type: "string" }, way: { type: "string" } } });
const total = Number(values.requests ?? 200_000);

if (values.way) await run(values.way as Way, total);
else {
  console.log(`node ${process.version}; ${total} requests per way, 64 at a time, each ~20 KB held ~1 ms`);
  console.log("way        young GC µs/req  old GC µs/req  CPU µs/req  young GCs");
  for (const way of WAYS) {
    const args = ["--import", "tsx", "test/bench/held-gc.ts", "--way", way, "--requests", String(total)];
    const out = spawnSync("taskset", ["-c", "1", process.execPath, ...args], { encoding: "utf8" });
    const fallback = out.error ? spawnSync(process.execPath, args, { encoding: "utf8" }) : out;
    process.stdout.write(fallback.stdout || fallback.stderr);
  }
}

async function run(way: Way, requests: number): Promise<void> {
  const { PerformanceObserver, constants } = await import("node:perf_hooks");
  const { Slots } = await import("../../src/ops/slots.js");
  const set = new Set<() => number>();
  const map = new Map<number, () => number>();
  const signal = new AbortController().signal;
  const slots = new Slots<() => number>();
  let nextId = 0;
  let young = 0;
  let old = 0;
  let youngCount = 0;
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const kind = (e as unknown as { detail: { kind: number } }).detail.kind;
      if (kind === constants.NODE_PERFORMANCE_GC_MINOR) {
        young += e.duration;
        youngCount++;
      } else old += e.duration;
    }
  }).observe({ entryTypes: ["gc"] });

  const graph = () => {
    const parts: object[] = [];
    for (let i = 0; i < 100; i++) parts.push({ i, s: `part ${i}`, a: [i, i + 1], o: { k: i } });
    return parts;
  };
  let done = 0;
  const cpu0 = process.cpuUsage();
  await new Promise<void>((finished) => {
    const request = () => {
      const parts = graph();
      const onAbort = () => parts.length;
      const id = nextId++;
      let slot = -1;
      if (way === "set") set.add(onAbort);
      else if (way === "map") map.set(id, onAbort);
      else if (way === "listener") signal.addEventListener("abort", onAbort);
      else if (way === "slots") slot = slots.add(onAbort);
      setTimeout(() => {
        if (way === "set") set.delete(onAbort);
        else if (way === "map") map.delete(id);
        else if (way === "listener") signal.removeEventListener("abort", onAbort);
        else if (way === "slots") slots.remove(slot);
        // The request's own short-lived work.
        for (let i = 0; i < 50; i++) JSON.stringify({ i, part: parts[i] });
        if (++done === requests) finished();
        else if (done + 64 <= requests) request();
      }, 1);
    };
    for (let i = 0; i < 64; i++) request();
  });
  const cpu = process.cpuUsage(cpu0);
  await new Promise((r) => setTimeout(r, 50));
  const per = (ms: number) => ((ms * 1000) / requests).toFixed(2);
  console.log(`${way.padEnd(10)} ${per(young).padStart(15)} ${per(old).padStart(14)} ${(((cpu.user + cpu.system) / requests)).toFixed(1).padStart(11)} ${String(youngCount).padStart(10)}`);
}
