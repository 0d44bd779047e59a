/**
 * The garbage collector's settings for the cores this process may run on. V8 scavenges the
 * young generation with helper threads (parallel scavenge). On one core (CPU affinity, or a
 * cgroup CPU quota of one core or less) they can only take turns with the main thread, and a
 * scavenge waits for whichever one the scheduler left mid-task: a router pinned to one CPU spent
 * 18-22 µs of young-generation GC per request that way under load, against 2-3 µs with the
 * scavenge on the main thread (BENCHMARKS.md, "What we learnt", round 15). With more cores the helpers
 * run beside the main thread and V8's default stays.
 *
 * Allocation-site pretenuring is turned off. V8 counts, per place in the code that allocates
 * objects, how many of them outlive a young-generation collection, and above a threshold
 * allocates that place's objects in the old generation from then on. Under a router's load the
 * objects of requests in flight outlive a scavenge often enough for a site of per-request objects
 * to be tenured, and a per-request object that dies in the old generation still keeps whatever
 * young objects it points to alive through every scavenge (the scavenger takes old-to-young
 * pointers as roots) until the next full collection. Whether it happens depends on the process's
 * early history: in about half the router processes of one build under a mix of streams, young
 * collections kept 22-30% of what was allocated and cost 18-23 µs per request; with pretenuring
 * off, 2-3% and 3-5 µs in every process (BENCHMARKS.md, "What we learnt", round 23). A server whose
 * long-lived data is built once at start and whose per-request objects die young loses nothing
 * by it: what does live long is copied once more before it is promoted.
 */
import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { setFlagsFromString } from "node:v8";

export interface GcSettings {
  /** Cores this process may use: its CPU affinity, capped by a cgroup CPU quota. */
  cores: number;
  /** Whether young-generation collections use helper threads (V8's default). */
  parallelScavenge: boolean;
  /** Where the scavenge setting came from: the operator's own node flag, or the core count. */
  source: "node flag" | "cores";
  /** Whether V8 pretenures by allocation site: off, unless the operator's own node flag says otherwise. */
  pretenuring: boolean;
}

/**
 * Sets the scavenger for `cores` (default: this process's), unless node was started with a
 * scavenge flag of the operator's own, and turns allocation-site pretenuring off, unless node was
 * started with a pretenuring flag. Before the heap grows: what V8 has already tenured stays so.
 */
export function tuneGc(cores = usableCores(), execArgv: readonly string[] = process.execArgv): GcSettings {
  const ownPretenuring = lastFlag(execArgv, /^--(no-)?allocation[-_]site[-_]pretenuring$/);
  const pretenuring = ownPretenuring !== undefined && !ownPretenuring.startsWith("--no-");
  if (ownPretenuring === undefined) setFlagsFromString("--no-allocation-site-pretenuring");
  const own = lastFlag(execArgv, /^--(no-)?parallel[-_]scavenge$/);
  if (own !== undefined) return { cores, parallelScavenge: !own.startsWith("--no-"), source: "node flag", pretenuring };
  const parallelScavenge = cores > 1;
  if (!parallelScavenge) setFlagsFromString("--no-parallel-scavenge");
  return { cores, parallelScavenge, source: "cores", pretenuring };
}

function lastFlag(execArgv: readonly string[], flag: RegExp): string | undefined {
  return execArgv.findLast((a) => flag.test(a));
}

/** The CPUs this process may run on, capped by its cgroup's CPU quota (v2 `cpu.max`, or v1 `cpu.cfs_quota_us`) when one is set. */
export function usableCores(): number {
  const cpus = availableParallelism();
  const v2 = readOr("/sys/fs/cgroup/cpu.max");
  const v1 = () => `${readOr("/sys/fs/cgroup/cpu/cpu.cfs_quota_us") ?? "max"} ${readOr("/sys/fs/cgroup/cpu/cpu.cfs_period_us") ?? ""}`;
  const quota = quotaCores(v2 ?? v1());
  return quota === null ? cpus : Math.min(cpus, quota);
}

function readOr(path: string): string | null {
  try {
    return readFileSync(path, "utf8").trim();
  } catch {
    return null; // no such controller here
  }
}

/** Whole cores a quota and period ("<quota> <period>"; "max" or v1's -1: none) allow, rounded up; null when unlimited or unreadable. */
export function quotaCores(cpuMax: string): number | null {
  const [quota, period] = cpuMax.trim().split(/\s+/);
  const q = Number(quota);
  const p = Number(period ?? 100_000);
  if (quota === "max" || !(q > 0) || !(p > 0)) return null;
  return Math.max(1, Math.ceil(q / p));
}
