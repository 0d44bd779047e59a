// Preloaded into a server by `ab.ts --gc` (`node --import ./test/bench/gc-observer.mjs ...`): the
// process's garbage-collection pauses so far, young generation and the rest (mark-compact and
// its incremental steps), in ms, and what its young-generation collections found still alive,
// answered over IPC to the message "gc-time".
import { PerformanceObserver, constants } from "node:perf_hooks";
import v8 from "node:v8";

let young = 0;
let old = 0;
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    if (e.detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR) young += e.duration;
    else old += e.duration;
  }
}).observe({ entryTypes: ["gc"] });

// Bytes in the young generation when its collections began, and how many of them survived
// (still young after it, or promoted into the old generation by it).
let youngBytes = 0;
let survivedBytes = 0;
const used = (stats, names) => stats.heapSpaceStatistics.reduce((sum, s) => (names.includes(s.spaceName) ? sum + s.spaceUsedSize : sum), 0);
const YOUNG = ["new_space", "new_large_object_space"];
const OLD = ["old_space", "large_object_space"];
let profiler = new v8.GCProfiler();
profiler.start();
/** The young collections since the last call, added to the totals (the profiler restarts). */
function takeProfile() {
  const { statistics } = profiler.stop();
  profiler = new v8.GCProfiler();
  profiler.start();
  for (const gc of statistics) {
    if (gc.gcType !== "Scavenge" && gc.gcType !== "MinorMarkSweep") continue;
    youngBytes += used(gc.beforeGC, YOUNG);
    survivedBytes += used(gc.afterGC, YOUNG) + Math.max(0, used(gc.afterGC, OLD) - used(gc.beforeGC, OLD));
  }
}

process.on("message", (m) => {
  // Entries are delivered after the GC's own turn: answer a turn later.
  if (m !== "gc-time") return;
  setImmediate(() => {
    takeProfile();
    process.send?.({ gcTime: { young, old, youngBytes, survivedBytes } });
  });
});
