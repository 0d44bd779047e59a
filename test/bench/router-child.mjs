// The router under test, in its own process, running the BUILT code (dist/, what
// `npm start` runs) with plain node (no TypeScript loader in the process, so its RSS
// and profile are the router's own): `node test/bench/router-child.mjs`, config as JSON
// in BENCH_ROUTER_CONFIG. Logs go to stdout at the configured level (info by default,
// as in production; the bench points stdout at /dev/null). Reports { ready, port } over IPC.
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

const dist = resolve(process.env.BENCH_ROUTER_DIST ?? "dist");
const load = (rel) => import(pathToFileURL(resolve(dist, rel)).href);

const { startRouter } = await load("server.js");
const { buildConfig } = await load("config/load.js");
// ops/log.js since the regroup; log.js in builds from before it (ab.ts compares builds across it).
const { createLogger } = await load("ops/log.js").catch(() => load("log.js"));

// As the CLI does before it starts the router (dist/cli.js): the young-generation GC for this process's cores.
// Builds from before it have no runtime/gc.js.
const gc = await load("runtime/gc.js").catch(() => null);
gc?.tuneGc();
const config = buildConfig(JSON.parse(process.env.BENCH_ROUTER_CONFIG ?? "{}"), "<bench>");
const router = await startRouter(config, { logger: createLogger(config.logging.level), host: "127.0.0.1", port: 0, checkStore: true });
const msg = { ready: true, port: router.port };
if (process.send) process.send(msg);
else console.log(JSON.stringify(msg));

// "cpu" over IPC answers with the process's CPU time so far (bench:chain measures a turn's CPU by the difference);
// "storeBytes" with the embedded store's own count of the bytes it holds (null for Redis, or a build without one).
process.on("message", (m) => {
  if (m === "cpu") process.send?.({ cpu: process.cpuUsage() });
  if (m === "storeBytes") {
    const responses = router.runtime.stores.responses;
    process.send?.({ storeBytes: router.runtime.stores.kind === "memory" && typeof responses.bytes === "number" ? responses.bytes : null });
  }
});

// Under --expose-gc, "gc" over IPC collects and answers with the memory figures after it (bench:ws-drop).
if (typeof globalThis.gc === "function") {
  process.on("message", (m) => {
    if (m !== "gc") return;
    globalThis.gc();
    process.send?.({ gc: process.memoryUsage() });
  });
}

const stop = () => void router.close(2_000).then(() => process.exit(0));
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
process.on("disconnect", stop);
