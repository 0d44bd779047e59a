// test/bench/router-child.mjs with an in-process profiler: started on SIGUSR2, stopped and
// written on SIGUSR1 (PROF_OUT), so a profile holds the steady state only, not start-up and
// warm-up. Used by ab.ts --prof. With PROF_MAIN (a module exporting `main`) it profiles that
// server instead: ab.ts --prof hono runs hono-proxy.ts so.
// PROF_KIND=alloc takes a sampling heap profile of everything allocated in the window, the
// objects either GC collected included (what makes the young generation fill), instead of a
// CPU profile: .bench/prof/steady.heapprofile, read with test/bench/alloc-summary.ts. PROF_KIND=kept
// leaves out what young-generation collections freed: what they copied, or promoted.
import { Session } from "node:inspector/promises";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
const kind = process.env.PROF_KIND;
/** A heap profile (of what was allocated, or of what young collections kept) instead of a CPU profile. */
const heap = kind === "alloc" || kind === "kept";
const s = new Session();
s.connect();
if (heap) await s.post("HeapProfiler.enable");
else {
  await s.post("Profiler.enable");
  await s.post("Profiler.setSamplingInterval", { interval: 200 });
}
const start = () =>
  heap
    ? s.post("HeapProfiler.startSampling", { samplingInterval: 1024, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: kind === "alloc" })
    : s.post("Profiler.start");
process.on("SIGUSR2", () => void start());
process.on("SIGUSR1", async () => {
  const { profile } = await s.post(heap ? "HeapProfiler.stopSampling" : "Profiler.stop");
  const out = process.env.PROF_OUT ?? `.bench/prof/steady.${heap ? "heapprofile" : "cpuprofile"}`;
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, JSON.stringify(profile));
  process.send?.({ profiled: true });
});
if (process.env.PROF_MAIN) await (await import(process.env.PROF_MAIN)).main();
else await import("./router-child.mjs");
