/**
 * `npm run bench:ws-drop`: sockets opened and dropped mid-stream must leave nothing behind.
 * A built router (its own process, as in `npm run bench`) in front of the fast mock's slow
 * streams; rounds of N sockets (default 10 x 100 = 1,000), each sending a `response.create`
 * whose upstream stream stays open, waiting for its first event, then cut (TCP reset, no
 * close frame). The key has `max_concurrent` = the round size, so a slot leaked by one round
 * refuses a socket of the next. Prints the router's JS heap after a full GC (the router runs
 * with --expose-gc) and its RSS, at start and every few rounds (a leak grows the heap round
 * after round; V8 keeping pages it grew into does not), and what /metrics says is still held
 * (endpoint slots, open sockets).
 *
 *   npm run bench:ws-drop -- [--rounds 10] [--sockets 100] [--no-build]
 */
import { spawnSync } from "node:child_process";
import { parseArgs } from "node:util";
import { WebSocket } from "ws";
import { metricSample } from "../helpers/metrics-text.js";
import { startFastMock } from "./mock-server.js";
import { spawnNode } from "./procs.js";

const { values: f } = parseArgs({ options: { rounds: { type: "string" }, sockets: { type: "string" }, "no-build": { type: "boolean" } } });
const ROUNDS = Number(f.rounds ?? 10);
const SOCKETS = Number(f.sockets ?? 100);
const KEY = "rr-bench-ws-drop-key";
const log = (m: string) => console.error(`[ws-drop] ${m}`);
const mb = (b: number) => (b / 1048576).toFixed(1);

if (!f["no-build"]) spawnSync("npm", ["run", "build", "--silent"], { stdio: "inherit" });
const mock = await startFastMock({ slowHoldMs: 600_000 });
const mockUrl = `http://127.0.0.1:${mock.port}/v1`;
const config = {
  server: { host: "127.0.0.1", port: 0, api_keys: [{ name: "drop", key: KEY, limits: { max_concurrent: SOCKETS } }] },
  endpoints: [
    { name: "chat-ep", url: mockUrl, kind: "chat", max_concurrency: 4096 },
    { name: "oai-ep", url: mockUrl, kind: "openai", api_key: "sk-bench", max_concurrency: 4096 },
  ],
  models: { "chat-slow": { endpoints: ["chat-ep"] }, "oai-slow": { endpoints: ["oai-ep"] } },
  logging: { level: "warn" },
};
const router = await spawnNode({ name: "router", args: ["--expose-gc", "test/bench/router-child.mjs"], env: { BENCH_ROUTER_CONFIG: JSON.stringify(config), NODE_ENV: "production" }, ready: { ipc: true } });
const origin = `http://127.0.0.1:${router.port}`;
const metrics = async () => {
  const text = await (await fetch(`${origin}/metrics`)).text();
  return {
    slots: (metricSample(text, "responses_router_endpoint_in_flight", { upstream: "chat-ep" }) ?? 0) + (metricSample(text, "responses_router_endpoint_in_flight", { upstream: "oai-ep" }) ?? 0),
    sockets: metricSample(text, "responses_router_websocket_connections") ?? -1,
  };
};
const settle = async () => {
  for (let i = 0; i < 200; i++) {
    const m = await metrics();
    if (m.slots === 0 && m.sockets === 0) return m;
    await new Promise((r) => setTimeout(r, 50));
  }
  return metrics();
};

/** The router's memory after a full GC (router-child.mjs answers "gc" under --expose-gc). */
function afterGc(): Promise<string> {
  return new Promise((resolve) => {
    const on = (m: { gc?: NodeJS.MemoryUsage }) => {
      if (!m?.gc) return;
      router.proc.off("message", on);
      resolve(`heap ${mb(m.gc.heapUsed)} MB (total ${mb(m.gc.heapTotal)}), external ${mb(m.gc.external)} MB, RSS ${mb(m.gc.rss)} MB`);
    };
    router.proc.on("message", on);
    router.proc.send("gc");
  });
}

/** One socket streaming: resolves once its first event arrived. */
async function streaming(model: string): Promise<WebSocket> {
  const ws = new WebSocket(`${origin.replace("http", "ws")}/v1/responses`, { headers: { authorization: `Bearer ${KEY}` } });
  await new Promise((resolve, reject) => (ws.once("open", resolve), ws.once("error", reject)));
  const first = new Promise<string>((resolve) => ws.once("message", (d) => resolve(String(d))));
  ws.send(JSON.stringify({ type: "response.create", model, input: "stay open", store: false }));
  const event = JSON.parse(await first) as { type: string };
  if (event.type !== "response.created") throw new Error(`a socket was refused: ${JSON.stringify(event)}`);
  return ws;
}

try {
  // Warm-up round (JIT, pools), then the baseline.
  for (const ws of await Promise.all(Array.from({ length: 20 }, (_, i) => streaming(i % 2 ? "oai-slow" : "chat-slow")))) ws.terminate();
  await settle();
  log(`start: ${await afterGc()}`);
  let peak = 0;
  const t0 = performance.now();
  for (let round = 0; round < ROUNDS; round++) {
    const sockets = await Promise.all(Array.from({ length: SOCKETS }, (_, i) => streaming(i % 2 ? "oai-slow" : "chat-slow")));
    peak = Math.max(peak, router.rssBytes());
    for (const ws of sockets) ws.terminate();
    const m = await settle();
    if (m.slots !== 0 || m.sockets !== 0) throw new Error(`round ${round}: ${m.slots} slots and ${m.sockets} sockets still held`);
    if ((round + 1) % Math.max(1, Math.floor(ROUNDS / 4)) === 0) log(`after ${(round + 1) * SOCKETS} sockets: ${await afterGc()}`);
  }
  const end = await settle();
  const total = ROUNDS * SOCKETS;
  log(`${total} sockets opened and dropped mid-stream in ${ROUNDS} rounds of ${SOCKETS} (${((performance.now() - t0) / 1000).toFixed(1)} s); peak RSS with a round open ${mb(peak)} MB`);
  log(`still held at the end: ${end.slots} endpoint slots, ${end.sockets} open sockets; every round admitted all ${SOCKETS} sockets under max_concurrent ${SOCKETS}`);
} finally {
  await router.stop();
  await mock.close();
}
