// Preloaded into a server by `ab.ts --gc` (`node --import ./test/bench/gc-observer.mjs ...`): the
// process's garbage-collection pauses so far, young generation and the rest (mark-compact and
// its incremental steps), in ms, answered over IPC to the message "gc-time".
import { PerformanceObserver, constants } from "node:perf_hooks";

let young = 0;
let old = 0;
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    if (e.detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR) young += e.duration;
    else old += e.duration;
  }
}).observe({ entryTypes: ["gc"] });

process.on("message", (m) => {
  // Entries are delivered after the GC's own turn: answer a turn later.
  if (m === "gc-time") setImmediate(() => process.send?.({ gcTime: { young, old } }));
});
