/**
 * Steady-state A/B of router builds: one router child per dist directory (optionally the hono
 * and bare floors too) against one mock, all pinned to CPU 1, measured in interleaved rounds
 * (3 s at concurrency 64 each, after a 1 s warm-up) as server CPU µs per request; prints the
 * median and every round (the servers' order turns by one each round). The first round of a fresh process carries its JIT/heap warm-up
 * (see BENCHMARKS.md), so compare medians of 4+ rounds. Build the "before" into its own dir:
 *   npm run build && cp -r dist .bench/dist-base   (then change, build, and:)
 *   npx tsx test/bench/ab.ts --dists .bench/dist-base,dist --paths translated-json,native-stream --rounds 5 [--floors]
 * --prof DIR profiles that child's last round only (test/bench/prof-child.mjs -> .bench/prof/steady.cpuprofile; `--prof hono` the floor's, with --floors;
 *   PROF_KIND=alloc or kept: a heap profile of what it allocated, or of what young collections kept, instead);
 * --perf NAME[,NAME] records those servers' last round with Linux perf (`perf record -g`, the process under --perf-basic-prof;
 *   -> .bench/perf/NAME.data) and prints test/bench/perf-summary.ts's view of each: kernel included, by router file, in µs per request.
 * --strace NAME[,NAME] counts those servers' system calls over their last round (`strace -f -c`) and prints them per request:
 *   a write more than the floor's per request shows there, where a CPU profile only shows its cost spread out.
 * --floor-flags="FLAGS" starts the floors with those node flags too (space-separated), as a dist's come after "@".
 * --rate N holds every server to N requests per second (autocannon's overallRate) instead of as many as it answers: CPU per
 *   request at equal load, where a faster server does not keep its peers (client, mock) busier than a slower one does.
 * --c1 N first sends N sequential requests per server and path (the warm-up of the latency section).
 * Paths: the bench's (translated-json ... chat-stream, plus -store and -cached variants), chat-stream-long, translated-stream-long, anthropic-stream-long and native-stream-long
 * (2,000 deltas each, c=8: CPU per request / 2,000 is a chunk's), mcp-round (one hosted MCP tool round, c=16; its hono
 * floor with --floors; mcp-round-streamed against a floor that streams round 1 to the client too; mcp-round-json the round
 * answered as JSON) and mcp-round-long (the same, its second round a long answer: a tool-loop round's chunk).
 * --gc also reports each server's garbage-collection pauses per request (young + the rest, µs; test/bench/gc-observer.mjs) and
 *   the share of the young generation its young collections found alive (kept young or promoted: what they copy).
 * A dist may carry node flags after "@" (comma-free, space-separated): `--dists dist,dist@--max-semi-space-size=32`.
 * AB_VERBOSE=1 keeps the routers' stdout and stderr (their log lines too): with `dist@--trace-gc`, each scavenge's size and pause.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { parseArgs } from "node:util";
import { throughput, type Target } from "./clients.js";
import { spawnNode, type Child } from "./procs.js";
import { startMcpServer } from "../helpers/mcp-server.js";
import { FLOOR_BODY } from "./tool-round.js";
import { printPerf, summarisePerf } from "./perf-summary.js";

const { values: f } = parseArgs({ options: { dists: { type: "string" }, paths: { type: "string" }, rounds: { type: "string" }, duration: { type: "string" }, floors: { type: "boolean" }, prof: { type: "string" }, c1: { type: "string" }, gc: { type: "boolean" }, perf: { type: "string" }, rate: { type: "string" }, strace: { type: "string" }, "floor-flags": { type: "string" } } });
const dists = (f.dists ?? "dist").split(",");
const rounds = Number(f.rounds ?? 3);
const rate = f.rate ? Number(f.rate) : undefined;
const dur = Number(f.duration ?? 3);
spawnSync("renice", ["-n", "-10", "-p", String(process.pid)], { stdio: "ignore" });
spawnSync("taskset", ["-a", "-p", "-c", "0", String(process.pid)], { stdio: "ignore" });

const INPUT = "Say hi in one short sentence.";
const rb = (model: string, stream: boolean, store = false) => JSON.stringify({ model, input: INPUT, stream, store });
const cb = (model: string, stream: boolean) => JSON.stringify({ model, messages: [{ role: "user", content: INPUT }], stream, ...(stream ? { stream_options: { include_usage: true } } : {}) });
const mb = (model: string, stream: boolean) => JSON.stringify({ model, max_tokens: 8192, messages: [{ role: "user", content: [{ type: "text", text: INPUT }] }], ...(stream ? { stream } : {}) });
/** A response request that lists the bench's MCP server (the model calls its tool once). */
const mcpBody = (model: string, stream: boolean) => JSON.stringify({ model, input: "hi", stream, store: false, tools: [{ type: "mcp", server_label: "bench" }] });
/** `up`: the same request as a floor sends it (none: the path is the router's alone); `c`: concurrency (64 unless given). */
const PATHS: Record<string, { up?: { path: string; body: string }; r: { path: string; body: string }; c?: number; honoOnly?: boolean }> = {
  "translated-json": { up: { path: "/v1/chat/completions", body: cb("chat-s", false) }, r: { path: "/v1/responses", body: rb("chat-s", false) } },
  "translated-stream": { up: { path: "/v1/chat/completions", body: cb("chat-s", true) }, r: { path: "/v1/responses", body: rb("chat-s", true) } },
  // store: true (the API's default, what an SDK sends unless told otherwise): the memory store keeps each response.
  "translated-json-store": { up: { path: "/v1/chat/completions", body: cb("chat-s", false) }, r: { path: "/v1/responses", body: rb("chat-s", false, true) } },
  "translated-stream-store": { up: { path: "/v1/chat/completions", body: cb("chat-s", true) }, r: { path: "/v1/responses", body: rb("chat-s", true, true) } },
  // A response-cache hit on every request after the first (key over the request, lookup, a new response from the cached one).
  "translated-json-cached": { up: { path: "/v1/chat/completions", body: cb("chat-s", false) }, r: { path: "/v1/responses", body: rb("chat-cached", false) } },
  "native-json": { up: { path: "/v1/responses", body: rb("oai-s", false) }, r: { path: "/v1/responses", body: rb("oai-s", false) } },
  "native-stream": { up: { path: "/v1/responses", body: rb("oai-s", true) }, r: { path: "/v1/responses", body: rb("oai-s", true) } },
  "anthropic-json": { up: { path: "/v1/messages", body: mb("ant-s", false) }, r: { path: "/v1/responses", body: rb("ant-s", false) } },
  // store: true, as an SDK sends by default: the answer is stored and answered from one serialisation when nothing in it is hidden.
  "anthropic-json-store": { up: { path: "/v1/messages", body: mb("ant-s", false) }, r: { path: "/v1/responses", body: rb("ant-s", false, true) } },
  "anthropic-stream": { up: { path: "/v1/messages", body: mb("ant-s", true) }, r: { path: "/v1/responses", body: rb("ant-s", true) } },
  "chat-json": { up: { path: "/v1/chat/completions", body: cb("chat-s", false) }, r: { path: "/v1/chat/completions", body: cb("chat-s", false) } },
  "chat-stream": { up: { path: "/v1/chat/completions", body: cb("chat-s", true) }, r: { path: "/v1/chat/completions", body: cb("chat-s", true) } },
  // Long streams (2,000 deltas written one by one, as tokens arrive): CPU per request / 2,000 is the cost of a chunk.
  // The router's model name is not the backend's (as in most configs): every chunk's `model` is renamed.
  "chat-stream-long": { up: { path: "/v1/chat/completions", body: cb("chat-long", true) }, r: { path: "/v1/chat/completions", body: cb("team-long", true) }, c: 8 },
  "translated-stream-long": { up: { path: "/v1/chat/completions", body: cb("chat-long", true) }, r: { path: "/v1/responses", body: rb("team-long", true) }, c: 8 },
  "anthropic-stream-long": { up: { path: "/v1/messages", body: mb("ant-long", true) }, r: { path: "/v1/responses", body: rb("ant-long", true) }, c: 8 },
  "native-stream-long": { up: { path: "/v1/responses", body: rb("oai-long", true) }, r: { path: "/v1/responses", body: rb("oai-long", true) }, c: 8 },
  // One hosted MCP tool round per streamed response (listing, round 1 with the call, the call, round 2), as the bench's tools section, at its concurrency.
  // Its hono floor (--floors) makes the same exchanges, parsing nothing: test/bench/hono-proxy.ts /floor/mcp-round.
  "mcp-round": { up: { path: "/floor/mcp-round", body: FLOOR_BODY }, r: { path: "/v1/responses", body: mcpBody("chat-mcp", true) }, c: 16, honoOnly: true },
  // The same with a long answer (2,000 deltas) in the second round: CPU per response / 2,000 is a tool-loop round's chunk.
  // The same, against a floor that also streams round 1 to the client as it comes (as the router must).
  "mcp-round-streamed": { up: { path: "/floor/mcp-round-streamed", body: FLOOR_BODY }, r: { path: "/v1/responses", body: mcpBody("chat-mcp", true) }, c: 16, honoOnly: true },
  // The same round answered as JSON (rounds and answer unstreamed): what streaming the loop costs.
  "mcp-round-json": { r: { path: "/v1/responses", body: mcpBody("chat-mcp", false) }, c: 16 },
  "mcp-round-long": { r: { path: "/v1/responses", body: mcpBody("chat-mcp-long", true) }, c: 8 },
};
const paths = (f.paths ?? Object.keys(PATHS).join(",")).split(",");
// Every child runs on this process's node: `npx tsx` (or `npm run`) finds the project's node
// (node_modules/.bin/node), a bare `node --import tsx` the system's, which may be another major.
console.log(`node ${process.version} (${process.execPath})`);

// The MCP server of the mcp-round path: the SDK's own, in this process (the client core).
const mcp = paths.some((p) => p.startsWith("mcp-round")) ? await startMcpServer() : null;
const mock = await spawnNode({ name: "mock", args: ["--import", "tsx", "test/bench/mock-server.ts", "--latency-ms", "0"], cpus: "0", ready: { ipc: true } });
const mockOrigin = `http://127.0.0.1:${mock.port}`;
const cfg = {
  server: { host: "127.0.0.1", port: 0 },
  endpoints: [
    { name: "chat-ep", url: `${mockOrigin}/v1`, kind: "chat", max_concurrency: 4096 },
    { name: "oai-ep", url: `${mockOrigin}/v1`, kind: "openai", api_key: "sk-bench", max_concurrency: 4096 },
    { name: "ant-ep", url: `${mockOrigin}/v1`, kind: "anthropic", api_key: "sk-bench", max_concurrency: 4096 },
  ],
  ...(mcp ? { tools: { mcp: { servers: [{ label: "bench", url: mcp.url, require_approval: "never", allowed_tools: ["echo"] }] } } } : {}),
  models: { "chat-mcp": { endpoints: ["chat-ep"], upstream_model: "chat-mcp" }, "chat-mcp-long": { endpoints: ["chat-ep"], upstream_model: "chat-mcp-long" }, "chat-s": { endpoints: ["chat-ep"], upstream_model: "chat-s" }, "team-long": { endpoints: ["chat-ep"], upstream_model: "chat-long" }, "oai-long": { endpoints: ["oai-ep"] }, "ant-long": { endpoints: ["ant-ep"] }, "chat-cached": { endpoints: ["chat-ep"], upstream_model: "chat-s", cache: { ttl: "1h" } }, "oai-s": { endpoints: ["oai-ep"] }, "ant-s": { endpoints: ["ant-ep"] } },
  logging: { level: "info" },
};
const GC_ARGS = f.gc ? ["--import", "./test/bench/gc-observer.mjs"] : [];
/** Node flags of the server --perf records: JIT code named in /tmp/perf-PID.map for perf. */
const perfed = new Set(f.perf?.split(",") ?? []);
const perfArgs = (name: string): string[] => (perfed.has(name) ? ["--perf-basic-prof"] : []);
const straced = new Set(f.strace?.split(",") ?? []);
/** System calls per request of each straced window, by server. */
const syscalls = new Map<string, string>();
/** CPU µs per request of each recorded window, by server. */
const perfUs = new Map<string, number>();
/** A server's GC pauses so far (ms), when it runs gc-observer.mjs. */
type GcTime = { young: number; old: number; youngBytes: number; survivedBytes: number };
const gcTime = (child: Child): Promise<GcTime> =>
  new Promise((ok) => {
    const on = (m: { gcTime?: GcTime }) => {
      if (!m?.gcTime) return;
      child.proc.off("message", on);
      ok(m.gcTime);
    };
    child.proc.on("message", on);
    child.proc.send("gc-time");
  });
const servers: { name: string; child: Child; up: boolean }[] = [];
for (const d of dists) {
  const [dir, flags = ""] = d.split("@");
  const child = await spawnNode({
    name: d,
    args: [...flags.split(" ").filter(Boolean), ...perfArgs(d), ...GC_ARGS, f.prof === d ? "test/bench/prof-child.mjs" : "test/bench/router-child.mjs"],
    env: { BENCH_ROUTER_CONFIG: JSON.stringify(cfg), BENCH_ROUTER_DIST: dir!, NODE_ENV: "production" },
    cpus: "1",
    ready: { ipc: true },
    verbose: process.env.AB_VERBOSE === "1",
  });
  servers.push({ name: d, child, up: false });
}
if (f.floors) {
  const floorFlags = (f["floor-flags"] ?? "").split(" ").filter(Boolean);
  const honoArgs = ["--upstream", mockOrigin, ...(mcp ? ["--mcp", mcp.url] : [])];
  const honoMain = f.prof === "hono" ? "test/bench/prof-child.mjs" : "test/bench/hono-proxy.ts";
  servers.push({ name: "hono", child: await spawnNode({ name: "hono", args: [...floorFlags, ...perfArgs("hono"), ...GC_ARGS, "--import", "tsx", honoMain, ...honoArgs], env: { PROF_MAIN: "./hono-proxy.ts" }, cpus: "1", ready: { ipc: true } }), up: true });
  servers.push({ name: "bare", child: await spawnNode({ name: "bare", args: [...floorFlags, ...perfArgs("bare"), ...GC_ARGS, "--import", "tsx", "test/bench/bare-proxy.ts", "--upstream", mockOrigin], cpus: "1", ready: { ipc: true } }), up: true });
}
const res: Record<string, Record<string, number[]>> = {};
// Cores the server used in each window: near 1 it was saturated; well under 1 the client core was the bottleneck, and an
// unsaturated server's CPU per request is higher (fewer requests per event-loop turn), so compare windows alike.
const cores: Record<string, Record<string, number[]>> = {};
const gcYoung: Record<string, Record<string, number[]>> = {};
const gcOld: Record<string, Record<string, number[]>> = {};
const gcSurvived: Record<string, Record<string, number[]>> = {};
if (f.c1) for (const s of servers) for (const p of paths) {
  const spec = s.up ? PATHS[p]!.up : PATHS[p]!.r;
  if (!spec || (s.name === "bare" && PATHS[p]!.honoOnly)) continue;
  const c0 = s.child.cpuSeconds();
  for (let i = 0; i < Number(f.c1); i++) await (await fetch(`http://127.0.0.1:${s.child.port}${spec.path}`, { method: "POST", headers: { "content-type": "application/json" }, body: spec.body })).text();
  console.log(`c=1 warm ${s.name} ${p}: ${(((s.child.cpuSeconds() - c0) * 1e6) / Number(f.c1)).toFixed(0)} us/req`);
}
for (let r = 0; r < rounds; r++) {
  for (const p of paths) {
    // Each round starts at the next server: measured in a fixed order, the one that came second paid 5-10% for its place.
    for (let i = 0; i < servers.length; i++) {
      const s = servers[(i + r) % servers.length]!;
      const spec = s.up ? PATHS[p]!.up : PATHS[p]!.r;
      if (!spec || (s.name === "bare" && PATHS[p]!.honoOnly)) continue;
      const conc = PATHS[p]!.c ?? 64;
      const t: Target = { name: s.name, origin: `http://127.0.0.1:${s.child.port}`, ...spec };
      await throughput(t, conc, 1, 0, rate);
      const profiling = f.prof === s.name && r === rounds - 1;
      if (profiling) s.child.proc.kill("SIGUSR2");
      const recording = perfed.has(s.name) && r === rounds - 1 ? startPerf(s.name, s.child.proc.pid!) : null;
      const tracing = straced.has(s.name) && r === rounds - 1 ? await startStrace(s.child.proc.pid!) : null;
      const g0 = f.gc ? await gcTime(s.child) : null;
      const c0 = s.child.cpuSeconds();
      const w0 = performance.now();
      const out = await throughput(t, conc, dur, 0, rate);
      if (g0) {
        const g1 = await gcTime(s.child);
        const per = (ms: number) => (out.requests > 0 ? (ms * 1000) / out.requests : Number.NaN);
        ((gcYoung[p] ??= {})[s.name] ??= []).push(per(g1.young - g0.young));
        ((gcOld[p] ??= {})[s.name] ??= []).push(per(g1.old - g0.old));
        const youngBytes = g1.youngBytes - g0.youngBytes;
        ((gcSurvived[p] ??= {})[s.name] ??= []).push(youngBytes > 0 ? (100 * (g1.survivedBytes - g0.survivedBytes)) / youngBytes : Number.NaN);
      }
      ((cores[p] ??= {})[s.name] ??= []).push((s.child.cpuSeconds() - c0) / ((performance.now() - w0) / 1000));
      // A window in which no request completed (the machine stalled the client or the server) has no figure.
      const us = out.requests > 0 ? ((s.child.cpuSeconds() - c0) * 1e6) / out.requests : Number.NaN;
      if (profiling) {
        const done = new Promise((ok) => s.child.proc.once("message", ok));
        s.child.proc.kill("SIGUSR1");
        await done;
        console.log(`profiled ${s.name}'s last round of ${p}: ${out.requests} requests`);
      }
      if (tracing) syscalls.set(`${s.name}, ${p}`, perRequest(await tracing.stop(), out.requests));
      if (recording) {
        await recording.stop();
        perfUs.set(s.name, us);
      }
      ((res[p] ??= {})[s.name] ??= []).push(us);
      if (out.errors + out.non2xx > 0) console.error(`${p} ${s.name}: ${out.errors} errors ${out.non2xx} non2xx`);
    }
  }
}
const med = (all: number[]) => {
  const a = all.filter(Number.isFinite).sort((x, y) => x - y);
  return a.length === 0 ? Number.NaN : a[Math.floor(a.length / 2)]!;
};
for (const p of paths) console.log(p.padEnd(18), servers.filter((s) => res[p]![s.name]).map((s) => `${s.name}=${med(res[p]![s.name]!).toFixed(0)} [${res[p]![s.name]!.map((x) => x.toFixed(0)).join(",")}] cores ${med(cores[p]![s.name]!).toFixed(2)}${f.gc ? ` gc ${med(gcYoung[p]![s.name]!).toFixed(1)}+${med(gcOld[p]![s.name]!).toFixed(1)} survived ${med(gcSurvived[p]![s.name]!).toFixed(1)}%` : ""}`).join("  "));
for (const s of servers) await s.child.stop();
for (const [name, table] of syscalls) console.log(`\nsystem calls per request, ${name} (last round, strace -f -c):\n${table}`);
for (const [name, us] of perfUs) {
  console.log(`\nperf, ${name}, last round of ${paths.at(-1)}, ${us.toFixed(0)} µs per request (.bench/perf/${perfFile(name)}):`);
  printPerf(summarisePerf(`.bench/perf/${perfFile(name)}`), us);
}
await mock.stop();
await mcp?.close();

function perfFile(name: string): string {
  return `${name.replace(/[^\w.-]+/g, "_")}.data`;
}

/** `perf record -g` of one process until `stop` (SIGINT: perf writes its file and exits). */
function startPerf(name: string, pid: number): { stop(): Promise<void> } {
  mkdirSync(".bench/perf", { recursive: true });
  const rec = spawn("perf", ["record", "-F", "1999", "-g", "-p", String(pid), "-o", `.bench/perf/${perfFile(name)}`], { stdio: "ignore" });
  const exited = new Promise<void>((ok) => {
    rec.once("exit", () => ok());
    rec.once("error", (err) => {
      console.error(`perf record: ${err.message} (is linux perf installed?)`);
      ok();
    });
  });
  return {
    stop: () => {
      rec.kill("SIGINT");
      return exited;
    },
  };
}

/** `strace -f -c` attached to `pid` until stopped; resolves with its summary table. */
async function startStrace(pid: number): Promise<{ stop(): Promise<string> }> {
  const tr = spawn("strace", ["-f", "-c", "-p", String(pid)], { stdio: ["ignore", "ignore", "pipe"] });
  let text = "";
  tr.stderr.setEncoding("utf8").on("data", (d: string) => (text += d));
  const exited = new Promise<string>((ok) => {
    tr.once("exit", () => ok(text));
    tr.once("error", (err) => ok(`strace: ${err.message} (is strace installed?)`));
  });
  // Attaching takes a moment; a window that starts before it would be counted short.
  await new Promise((ok) => setTimeout(ok, 300));
  return {
    stop: () => {
      tr.kill("SIGINT");
      return exited;
    },
  };
}

/** strace's summary rows as calls per request, busiest first. */
function perRequest(table: string, requests: number): string {
  const rows: string[] = [];
  for (const line of table.split("\n")) {
    const m = /^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:(\d+)\s+)?(\w+)\s*$/.exec(line);
    if (m && m[3] !== "total") rows.push(`${(Number(m[1]) / requests).toFixed(2).padStart(8)}  ${m[3]}${m[2] ? ` (${(Number(m[2]) / requests).toFixed(2)} failed)` : ""}`);
  }
  return rows.length > 0 ? rows.join("\n") : table;
}
