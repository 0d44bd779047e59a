/**
 * The router under test, in its own process, running the BUILT code (dist/, what
 * `npm start` runs): `node --import tsx test/bench/router-child.ts` with the config
 * as JSON in BENCH_ROUTER_CONFIG. Logs go to stdout at the configured level (info by
 * default, as in production; the parent points stdout at /dev/null). Reports
 * `{ ready: true, port }` over IPC.
 */
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

type ServerModule = typeof import("../../src/server.js");
type LoadModule = typeof import("../../src/config/load.js");
type LogModule = typeof import("../../src/log.js");

const dist = resolve(process.env.BENCH_ROUTER_DIST ?? "dist");
const load = async <T>(rel: string) => (await import(pathToFileURL(resolve(dist, rel)).href)) as T;

const { startRouter } = await load<ServerModule>("server.js");
const { buildConfig } = await load<LoadModule>("config/load.js");
const { createLogger } = await load<LogModule>("log.js");

const raw = JSON.parse(process.env.BENCH_ROUTER_CONFIG ?? "{}") as Record<string, unknown>;
const config = buildConfig(raw, "<bench>");
const router = await startRouter(config, { logger: createLogger(config.logging.level), host: "127.0.0.1", port: 0, checkStore: true });
const msg = { ready: true, port: router.port };
if (process.send) process.send(msg);
else console.log(JSON.stringify(msg));

const stop = () => void router.close(2_000).then(() => process.exit(0));
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
process.on("disconnect", stop);
