// test/bench/router-child.mjs with an in-process CPU profiler: started on SIGUSR2, stopped and
// written on SIGUSR1 (PROF_OUT, default .bench/prof/steady.cpuprofile), so a profile holds the
// steady state only, not start-up and warm-up. Used by ab.ts --prof. With PROF_MAIN (a module
// exporting `main`) it profiles that server instead: ab.ts --prof hono runs hono-proxy.ts so.
import { Session } from "node:inspector/promises";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
const s = new Session();
s.connect();
await s.post("Profiler.enable");
await s.post("Profiler.setSamplingInterval", { interval: 200 });
process.on("SIGUSR2", () => void s.post("Profiler.start"));
process.on("SIGUSR1", async () => {
  const { profile } = await s.post("Profiler.stop");
  const out = process.env.PROF_OUT ?? ".bench/prof/steady.cpuprofile";
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, JSON.stringify(profile));
  process.send?.({ profiled: true });
});
if (process.env.PROF_MAIN) await (await import(process.env.PROF_MAIN)).main();
else await import("./router-child.mjs");
