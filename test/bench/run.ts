/**
 * `npm run bench`: the router's own cost, side by side with the floor (a bare Node
 * proxy) and a peer (the Portkey gateway), all against one fast mock upstream, in one run.
 *
 * Process placement on this 2-core machine: the server under test (router, bare proxy
 * or Portkey, one at a time under load) is pinned to CPU 1; the load generator (this
 * process), the mock upstream and redis-server share CPU 0. The server under test
 * therefore has a core of its own, the figures are its one-core cost, and the
 * "server CPU" column shows whether it (and not the client core) was the bottleneck.
 *
 * Flags: --duration S (throughput seconds per run, default 3) --rounds N (c=1 rounds,
 * default 2000) --streams N (open streams, default 1000) --latency-ms N (mock latency)
 * --long (duration 15, rounds 10000) --only a,b (latency,rps,cpu,open,storage,limits,ws,tracing,tools)
 * --no-peer --no-build --profile (router child under --cpu-prof) --log-level L
 * --write (record this run: BENCHMARKS.md, test/bench/results/latest.json and chart.svg, all tracked;
 * without it the JSON and chart go to the OS temp dir and BENCHMARKS.md is left alone) --out FILE
 * --paths k1,k2 (only these paths: translated-json, translated-stream, translated-anthropic-json,
 *   translated-anthropic-stream, native-json, native-stream,
 * chat-json, chat-stream) --nice N (priority of the bench and its children, default -10 when root; 0 leaves it)
 * --loops N (section ws: 10-turn tool loops per way and backend kind, default 100)
 * --warmup S (seconds at concurrency 64 per path and server before anything is measured, default 2; 0: none)
 * --rps-rounds N (throughput windows per target and path, interleaved; the median's is reported; default 3).
 * Section chain (only with --only chain): a 500-turn chain per store (chain.ts), and on Redis once more with no
 * history held in the router (as when every turn lands on another instance); --chain-baseline DIR runs another
 * build's dist/ beside this one (named by --chain-baseline-label), --chain-depth N stops the chains earlier.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { freePort } from "../helpers/redis-server.js";
import { openStreams, sampleLatency, sequentialStreams, summarize, throughput, type Target } from "./clients.js";
import { spawnNode, hasTaskset, procRssBytes, type Child } from "./procs.js";
import { renderChart, renderMarkdown, renderTable, updateBenchmarksMd, type BenchResults, type PathResult } from "./report.js";
import { measureLimiter } from "./limiter.js";
import { measureTranslatorCpu } from "./translator-cpu.js";
import { measureTracingCost } from "./tracing-cost.js";
import { measureToolRound, toolRoundLine } from "./tool-round.js";
import { LONG_CHUNKS } from "./mock-server.js";
import { measureToolLoops, renderToolLoops, TURNS } from "./websocket.js";
import { measureChains, renderChains, retried, type ChainLayout } from "./chain.js";

const { values: flags } = parseArgs({
  options: {
    duration: { type: "string" },
    rounds: { type: "string" },
    streams: { type: "string" },
    "latency-ms": { type: "string" },
    long: { type: "boolean" },
    only: { type: "string" },
    "no-peer": { type: "boolean" },
    "no-build": { type: "boolean" },
    profile: { type: "boolean" },
    "log-level": { type: "string" },
    out: { type: "string" },
    write: { type: "boolean" },
    "no-md": { type: "boolean" }, // the default now (see --write); still accepted
    verbose: { type: "boolean" },
    nice: { type: "string" },
    paths: { type: "string" },
    loops: { type: "string" },
    warmup: { type: "string" },
    "rps-rounds": { type: "string" },
    "chain-baseline": { type: "string" },
    "chain-baseline-label": { type: "string" },
    "chain-depth": { type: "string" },
  },
});

const DURATION = Number(flags.duration ?? (flags.long ? 15 : 3));
const ROUNDS = Number(flags.rounds ?? (flags.long ? 10_000 : 2_000));
const OPEN_STREAMS = Number(flags.streams ?? 1000);
const MOCK_LATENCY = Number(flags["latency-ms"] ?? 0);
const SECTIONS = new Set((flags.only ?? "latency,rps,cpu,open,storage,limits,ws,tracing,tools").split(","));
const LOOPS = Number(flags.loops ?? 100);
const WARMUP = Number(flags.warmup ?? 2);
const RPS_ROUNDS = Math.max(1, Number(flags["rps-rounds"] ?? 3));
const LOG_LEVEL = flags["log-level"] ?? "info";
const OUT = resolve(flags.out ?? (flags.write ? "test/bench/results/latest.json" : join(os.tmpdir(), "responses-router-bench", "latest.json")));
const TSX = ["--import", "tsx"];
const SERVER_CPU = "1";
const CLIENT_CPU = "0";

const log = (...a: unknown[]) => console.error("[bench]", ...a);

// ---- the processes ------------------------------------------------------------------

function routerConfig(mockUrl: string, redisUrl = "", storage: Record<string, unknown> = {}) {
  const chat = (name: string, extra: Record<string, unknown> = {}) => ({ endpoints: ["chat-ep"], upstream_model: name, ...extra });
  return {
    server: { host: "127.0.0.1", port: 0 },
    endpoints: [
      { name: "chat-ep", url: mockUrl, kind: "chat", max_concurrency: 4096 },
      { name: "oai-ep", url: mockUrl, kind: "openai", api_key: "sk-bench", max_concurrency: 4096 },
      { name: "ant-ep", url: mockUrl, kind: "anthropic", api_key: "sk-bench", max_concurrency: 4096 },
    ],
    models: {
      "chat-s": chat("chat-s"),
      "chat-long": chat("chat-long"),
      "chat-slow": chat("chat-slow"),
      "chat-cached": chat("chat-s", { cache: { ttl: "1h" } }),
      "oai-s": { endpoints: ["oai-ep"] },
      "oai-long": { endpoints: ["oai-ep"] },
      "oai-slow": { endpoints: ["oai-ep"] },
      "chat-tool": chat("chat-tool"),
      "chat-mcp": chat("chat-mcp"),
      "oai-tool": { endpoints: ["oai-ep"] },
      "ant-s": { endpoints: ["ant-ep"] },
      "ant-long": { endpoints: ["ant-ep"] },
    },
    storage: { redis_url: redisUrl, ...storage },
    logging: { level: LOG_LEVEL },
  };
}

async function startRouterChild(name: string, mockUrl: string, redisUrl = "", profile = false, storage: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): Promise<Child> {
  const profDir = resolve(".bench/prof");
  if (profile) mkdirSync(profDir, { recursive: true });
  return spawnNode({
    name,
    args: [...(profile ? ["--cpu-prof", `--cpu-prof-dir=${profDir}`] : []), "test/bench/router-child.mjs"],
    env: { BENCH_ROUTER_CONFIG: JSON.stringify({ ...routerConfig(mockUrl, redisUrl, storage), ...extra }), NODE_ENV: "production" },
    cpus: SERVER_CPU,
    ready: { ipc: true },
    verbose: flags.verbose,
  });
}

async function startPortkey(): Promise<Child> {
  const port = await freePort();
  return spawnNode({
    name: "portkey",
    args: ["--import", "./test/bench/portkey-preload.mjs", "node_modules/@portkey-ai/gateway/build/start-server.js", `--port=${port}`, "--headless"],
    env: { NODE_ENV: "production" },
    cpus: SERVER_CPU,
    ready: { pollPort: port, path: "/" },
    verbose: flags.verbose,
  });
}

/** A pinned redis-server stopped with the run, or null (logged) when none can be started. */
async function redisForBench(cleanups: (() => Promise<void>)[]): Promise<{ url: string; stop(): Promise<void> } | null> {
  try {
    const redis = await startRedisPinned();
    cleanups.push(() => redis.stop());
    return redis;
  } catch (err) {
    log(`no redis-server: ${(err as Error).message}`);
    return null;
  }
}

/**
 * A replica of the bench's redis-server (same CPU), for storage.durability: replica, resolved
 * once its link to the primary is up; null (logged) when none can be started.
 */
async function replicaForBench(primaryUrl: string, cleanups: (() => Promise<void>)[]): Promise<{ url: string } | null> {
  try {
    const replica = await startRedisPinned(["--replicaof", "127.0.0.1", new URL(primaryUrl).port]);
    cleanups.push(() => replica.stop());
    const deadline = Date.now() + 10_000;
    while (!/master_link_status:up/.test(spawnSync("redis-cli", ["-u", replica.url, "info", "replication"], { encoding: "utf8" }).stdout ?? "")) {
      if (Date.now() > deadline) throw new Error("the replica did not sync");
      await new Promise((r) => setTimeout(r, 100));
    }
    return replica;
  } catch (err) {
    log(`no redis replica: ${(err as Error).message}`);
    return null;
  }
}

async function startRedisPinned(extra: string[] = []): Promise<{ url: string; stop(): Promise<void> }> {
  const port = await freePort();
  // --dir: a replica's initial sync writes an RDB file there, never into the checkout.
  const dir = mkdtempSync(join(os.tmpdir(), "rr-bench-redis-"));
  const args = ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--daemonize", "no", "--dir", dir, ...extra];
  const proc = hasTaskset() ? spawn("taskset", ["-c", CLIENT_CPU, "redis-server", ...args], { stdio: "ignore" }) : spawn("redis-server", args, { stdio: "ignore" });
  const deadline = Date.now() + 10_000;
  for (;;) {
    const r = spawnSync("redis-cli", ["-p", String(port), "ping"], { encoding: "utf8" });
    if (r.stdout?.trim() === "PONG") break;
    if (Date.now() > deadline || proc.exitCode !== null) throw new Error("redis-server did not start");
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    stop: () =>
      new Promise<void>((res) => {
        const done = () => (rmSync(dir, { recursive: true, force: true }), res());
        if (proc.exitCode !== null) return done();
        proc.once("exit", done);
        proc.kill("SIGTERM");
      }),
  };
}

type Measured = Required<Pick<PathResult["targets"][string], "rps" | "rpsErrors" | "rpsLatencyP50" | "rpsLatencyP99" | "serverCpu" | "cpuUsPerRequest">>;

/** The window of median CPU per request (windows without a completed request left out; the first if none completed). */
function medianWindow(ws: Measured[]): Measured {
  const ok = ws.filter((w) => Number.isFinite(w.cpuUsPerRequest)).sort((a, b) => a.cpuUsPerRequest - b.cpuUsPerRequest);
  return ok.length === 0 ? ws[0]! : ok[Math.floor(ok.length / 2)]!;
}

// ---- the workloads ------------------------------------------------------------------

const INPUT = "Say hi in one short sentence.";
const responsesBody = (model: string, stream: boolean, extra: Record<string, unknown> = {}) => JSON.stringify({ model, input: INPUT, stream, store: false, ...extra });
const chatBody = (model: string, stream: boolean) =>
  JSON.stringify({ model, messages: [{ role: "user", content: INPUT }], stream, ...(stream ? { stream_options: { include_usage: true } } : {}) });

const messagesBody = (model: string, stream: boolean) => JSON.stringify({ model, max_tokens: 8192, messages: [{ role: "user", content: [{ type: "text", text: INPUT }] }], ...(stream ? { stream } : {}) });

interface PathSpec {
  key: string;
  label: string;
  stream: boolean;
  /** The request as the upstream receives it (direct to the mock, and through the bare proxy). */
  upstream: { path: string; body: string };
  router: { path: string; body: string } | null;
  /** Portkey's form of the request, or why it has none. */
  peer: { path: string; body: string } | string;
}

function pathSpecs(hasChatPassThrough: boolean): PathSpec[] {
  const specs: PathSpec[] = [];
  for (const stream of [false, true]) {
    const s = stream ? "stream" : "json";
    specs.push({
      key: `translated-${s}`,
      label: `translated ${s}`,
      stream,
      upstream: { path: "/v1/chat/completions", body: chatBody("chat-s", stream) },
      router: { path: "/v1/responses", body: responsesBody("chat-s", stream) },
      peer: "Portkey 1.15.2 has no Responses->chat adapter: /v1/responses answers 'createModelResponse is not supported by <provider>' for every chat provider (ollama, groq, together-ai, ...)",
    });
  }
  for (const stream of [false, true]) {
    const s = stream ? "stream" : "json";
    specs.push({
      key: `native-${s}`,
      label: `native ${s}`,
      stream,
      upstream: { path: "/v1/responses", body: responsesBody("oai-s", stream) },
      router: { path: "/v1/responses", body: responsesBody("oai-s", stream) },
      peer: { path: "/v1/responses", body: responsesBody("oai-s", stream) },
    });
  }
  for (const stream of [false, true]) {
    const s = stream ? "stream" : "json";
    specs.push({
      key: `translated-anthropic-${s}`,
      label: `translated anthropic ${s}`,
      stream,
      upstream: { path: "/v1/messages", body: messagesBody("ant-s", stream) },
      router: { path: "/v1/responses", body: responsesBody("ant-s", stream) },
      peer: "not measured: the bench starts Portkey without an Anthropic provider config",
    });
  }
  for (const stream of [false, true]) {
    const s = stream ? "stream" : "json";
    specs.push({
      key: `chat-${s}`,
      label: `chat pass-through ${s}`,
      stream,
      upstream: { path: "/v1/chat/completions", body: chatBody("chat-s", stream) },
      router: hasChatPassThrough ? { path: "/v1/chat/completions", body: chatBody("chat-s", stream) } : null,
      peer: { path: "/v1/chat/completions", body: chatBody("chat-s", stream) },
    });
  }
  return specs;
}

async function probe(origin: string, path: string, body: string, headers: Record<string, string> = {}): Promise<{ ok: boolean; status: number; text: string }> {
  try {
    const r = await fetch(origin + path, { method: "POST", headers: { "content-type": "application/json", ...headers }, body, signal: AbortSignal.timeout(10_000) });
    const text = await r.text();
    return { ok: r.status === 200, status: r.status, text: text.slice(0, 300) };
  } catch (err) {
    return { ok: false, status: 0, text: (err as Error).message };
  }
}

/**
 * Rough wall time of a run from its settings, printed up front: per path and target, the
 * c=1 latency rounds (~1 ms each) and a throughput run (warm-up + DURATION); plus start-up,
 * the open-streams and CPU sections and the store comparison. Good to a minute or so.
 */
function estimateSeconds(): number {
  const paths = flags.paths ? flags.paths.split(",").length : 8;
  const targets = flags["no-peer"] ? 4 : 5;
  let s = flags["no-build"] ? 10 : 25;
  if (SECTIONS.has("latency") || SECTIONS.has("rps")) s += paths * targets * WARMUP;
  if (SECTIONS.has("latency")) s += paths * targets * (ROUNDS + 200) * 0.001;
  if (SECTIONS.has("rps")) s += paths * targets * (DURATION + 1.5) * RPS_ROUNDS;
  if (SECTIONS.has("open")) s += 10 + OPEN_STREAMS * 0.01;
  if (SECTIONS.has("cpu")) s += 15;
  if (SECTIONS.has("storage")) s += 3 * (5 * (Math.min(ROUNDS, 1500) + 100) * 0.0015 + 3);
  if (SECTIONS.has("limits")) s += 5;
  // Four ways x two kinds x LOOPS loops of TURNS turns, ~1 ms a turn on this machine.
  if (SECTIONS.has("ws")) s += 2 * 4 * (LOOPS + 3) * TURNS * 0.0015;
  if (SECTIONS.has("tracing")) s += 3 * 3 * 2 * (DURATION + 1);
  if (SECTIONS.has("tools")) s += 3 * 3 * (DURATION + 1) + 3;
  return Math.round(s);
}

async function main(): Promise<void> {
  const startedAt = new Date();
  const est = estimateSeconds();
  log(`estimated duration: ~${est >= 90 ? `${Math.round(est / 60)} min` : `${est} s`} (sections ${[...SECTIONS].join(",")}; --only / --paths / --rounds / --duration shorten it)`);
  log(flags.write ? "--write: this run will rewrite BENCHMARKS.md and test/bench/results/" : `results go to ${OUT}; BENCHMARKS.md is left alone (--write records the run)`);
  const loadBefore = loadavg();
  // Other work on a shared machine skews wall-clock figures: the bench and its children
  // (which inherit it) run at a higher priority when allowed (root). --nice 0 turns it off.
  const niceness = Number(flags.nice ?? -10);
  if (niceness !== 0) spawnSync("renice", ["-n", String(niceness), "-p", String(process.pid)], { stdio: "ignore" });
  if (hasTaskset()) spawnSync("taskset", ["-a", "-p", "-c", CLIENT_CPU, String(process.pid)], { stdio: "ignore" });
  if (!flags["no-build"]) {
    log("building dist/ (npm run build)");
    const b = spawnSync("npm", ["run", "build", "--silent"], { stdio: "inherit" });
    if (b.status !== 0) log("build reported errors; dist/ as emitted is used");
  }

  const children: Child[] = [];
  const cleanups: (() => Promise<void>)[] = [];
  const stopAll = async () => {
    for (const c of children.reverse()) await c.stop().catch(() => {});
    for (const f of cleanups.reverse()) await f().catch(() => {});
  };
  process.once("SIGINT", () => void stopAll().then(() => process.exit(130)));

  try {
    if (SECTIONS.has("chain")) {
      await chainSection(children, cleanups);
      if (SECTIONS.size === 1) return;
    }
    const mock = await spawnNode({
      name: "mock",
      args: [...TSX, "test/bench/mock-server.ts", "--latency-ms", String(MOCK_LATENCY)],
      cpus: CLIENT_CPU,
      ready: { ipc: true },
    });
    children.push(mock);
    const mockOrigin = `http://127.0.0.1:${mock.port}`;
    const mockUrl = `${mockOrigin}/v1`;
    const router = await startRouterChild("router", mockUrl, "", flags.profile);
    children.push(router);
    const bare = await spawnNode({ name: "bare", args: [...TSX, "test/bench/bare-proxy.ts", "--upstream", mockOrigin], cpus: SERVER_CPU, ready: { ipc: true } });
    children.push(bare);
    const hono = await spawnNode({ name: "hono", args: [...TSX, "test/bench/hono-proxy.ts", "--upstream", mockOrigin], cpus: SERVER_CPU, ready: { ipc: true } });
    children.push(hono);
    let peer: Child | null = null;
    let peerError: string | null = null;
    if (!flags["no-peer"]) {
      try {
        peer = await startPortkey();
        children.push(peer);
      } catch (err) {
        peerError = `the Portkey gateway did not start: ${(err as Error).message}`;
        log(peerError);
      }
    }
    const routerOrigin = `http://127.0.0.1:${router.port}`;
    const bareOrigin = `http://127.0.0.1:${bare.port}`;
    const honoOrigin = `http://127.0.0.1:${hono.port}`;
    const peerOrigin = peer ? `http://127.0.0.1:${peer.port}` : "";
    const peerHeaders = { "x-portkey-provider": "openai", "x-portkey-custom-host": mockUrl, authorization: "Bearer sk-bench" };

    const chatProbe = await probe(routerOrigin, "/v1/chat/completions", chatBody("chat-s", false));
    const hasChat = chatProbe.ok;
    log(hasChat ? "router serves /v1/chat/completions: measured" : `router has no chat pass-through (HTTP ${chatProbe.status}): not measured`);
    const only = flags.paths ? new Set(flags.paths.split(",")) : null;
    const specs = pathSpecs(hasChat).filter((p) => !only || only.has(p.key));

    // Every server first runs every path for WARMUP seconds: a fresh process compiles its code and
    // grows its heap on the pinned core, which cost the first path measured 2-3.5x its steady
    // state (BENCHMARKS.md, "What we learnt", round 5); ab.ts's medians never had it.
    if (WARMUP > 0 && (SECTIONS.has("latency") || SECTIONS.has("rps"))) {
      log(`warm-up: every path through every server for ${WARMUP}s at concurrency 64`);
      for (const spec of specs) {
        const warm: Target[] = [
          { name: "direct", origin: mockOrigin, ...spec.upstream },
          { name: "bare", origin: bareOrigin, ...spec.upstream },
          { name: "hono", origin: honoOrigin, ...spec.upstream },
        ];
        if (spec.router) warm.push({ name: "router", origin: routerOrigin, ...spec.router });
        if (peer && typeof spec.peer !== "string") warm.push({ name: "portkey", origin: peerOrigin, ...spec.peer, headers: peerHeaders });
        for (const t of warm) await throughput(t, 64, WARMUP, 0);
      }
    }

    const paths: PathResult[] = [];
    for (const spec of specs) {
      const pr: PathResult = { key: spec.key, label: spec.label, stream: spec.stream, targets: {}, notes: [] };
      const targets: Target[] = [
        { name: "direct", origin: mockOrigin, ...spec.upstream },
        { name: "bare", origin: bareOrigin, ...spec.upstream },
        { name: "hono", origin: honoOrigin, ...spec.upstream },
      ];
      if (spec.router) targets.push({ name: "router", origin: routerOrigin, ...spec.router });
      else pr.notes.push(`router: no /v1/chat/completions route yet (HTTP ${chatProbe.status})`);
      if (typeof spec.peer === "string") pr.notes.push(`portkey: ${spec.peer}`);
      else if (peer) {
        const p = await probe(peerOrigin, spec.peer.path, spec.peer.body, peerHeaders);
        if (p.ok) targets.push({ name: "portkey", origin: peerOrigin, ...spec.peer, headers: peerHeaders });
        else pr.notes.push(`portkey: HTTP ${p.status} ${p.text}`);
      } else if (peerError) pr.notes.push(`portkey: ${peerError}`);
      for (const t of targets) {
        const p = await probe(t.origin, t.path, t.body, t.headers);
        if (!p.ok) throw new Error(`${spec.key} via ${t.name}: HTTP ${p.status} ${p.text}`);
      }

      if (SECTIONS.has("latency")) {
        log(`${spec.key}: concurrency 1, ${targets.map((t) => t.name).join(" / ")} interleaved`);
        const samples = await sampleLatency(targets, { rounds: ROUNDS, warmup: 200, maxMs: spec.stream ? 8_000 : 5_000 });
        const direct = summarize(samples.get("direct")!.map((s) => s.total));
        const directFirst = summarize(samples.get("direct")!.map((s) => s.first));
        for (const t of targets) {
          const tot = summarize(samples.get(t.name)!.map((s) => s.total));
          const first = summarize(samples.get(t.name)!.map((s) => s.first));
          pr.targets[t.name] = {
            ...pr.targets[t.name],
            latency: tot,
            first: spec.stream ? first : undefined,
            addedP50: tot.p50 - direct.p50,
            addedP99: tot.p99 - direct.p99,
            addedFirstP50: spec.stream ? first.p50 - directFirst.p50 : undefined,
            addedFirstP99: spec.stream ? first.p99 - directFirst.p99 : undefined,
          };
        }
      }
      if (SECTIONS.has("rps")) {
        const servers: Record<string, Child | undefined> = { router, bare, hono, portkey: peer ?? undefined, direct: mock };
        // RPS_ROUNDS windows per target, the targets interleaved; each target's figures are its
        // window of median CPU per request (one window moves 1.3-2x on a shared machine).
        const windows = new Map<string, Measured[]>(targets.map((t) => [t.name, []]));
        for (let round = 0; round < RPS_ROUNDS; round++) {
          // Each window starts at the next target: in a fixed order, a server's place in it moved its CPU per request by 5-10%.
          for (let i = 0; i < targets.length; i++) {
            const t = targets[(i + round) % targets.length]!;
            log(`${spec.key}: concurrency 64 through ${t.name} for ${DURATION}s (window ${round + 1}/${RPS_ROUNDS})`);
            const proc = servers[t.name];
            await throughput(t, 64, 1, 0); // warm-up
            const cpu0 = proc?.cpuSeconds() ?? Number.NaN;
            const w0 = performance.now();
            const r = await throughput(t, 64, DURATION, 0);
            const wall = (performance.now() - w0) / 1000;
            const cpuSeconds = (proc?.cpuSeconds() ?? Number.NaN) - cpu0;
            windows.get(t.name)!.push({
              rps: r.rps,
              rpsErrors: r.errors + r.non2xx,
              rpsLatencyP50: r.latencyP50,
              rpsLatencyP99: r.latencyP99,
              serverCpu: cpuSeconds / wall,
              cpuUsPerRequest: r.requests > 0 ? (cpuSeconds * 1e6) / r.requests : Number.NaN,
            });
          }
        }
        for (const t of targets) pr.targets[t.name] = { ...pr.targets[t.name], ...medianWindow(windows.get(t.name)!) };
        const floor = pr.targets.bare;
        for (const name of Object.keys(pr.targets)) {
          const t = pr.targets[name]!;
          if (t.rps !== undefined && floor?.rps) t.rpsVsBare = t.rps / floor.rps;
          // The contention-proof form of the same ratio: one core's worth of requests at each one's CPU cost.
          if (t.cpuUsPerRequest !== undefined && floor?.cpuUsPerRequest) t.cpuVsBare = floor.cpuUsPerRequest / t.cpuUsPerRequest;
        }
      }
      paths.push(pr);
    }

    // ---- streams: CPU per chunk ----
    const streamsCpu: BenchResults["streamsCpu"] = {};
    if (SECTIONS.has("cpu")) {
      log("translator CPU per chunk, in process");
      streamsCpu.inProcess = await measureTranslatorCpu(200, 10_000);
      const perChunk = async (child: Child, origin: string, path: string, body: string, count: number) => {
        await sequentialStreams({ name: child.name, origin, path, body }, 2, 20_000);
        const c0 = child.cpuSeconds();
        const done = await sequentialStreams({ name: child.name, origin, path, body }, count, 60_000);
        return ((child.cpuSeconds() - c0) * 1e6) / (done * LONG_CHUNKS);
      };
      log(`router process CPU over long streams (${LONG_CHUNKS} chunks each)`);
      streamsCpu.routerTranslatedUs = await perChunk(router, routerOrigin, "/v1/responses", responsesBody("chat-long", true), 20);
      streamsCpu.routerNativeUs = await perChunk(router, routerOrigin, "/v1/responses", responsesBody("oai-long", true), 20);
      streamsCpu.routerAnthropicUs = await perChunk(router, routerOrigin, "/v1/responses", responsesBody("ant-long", true), 20);
      streamsCpu.bareUs = await perChunk(bare, bareOrigin, "/v1/chat/completions", chatBody("chat-long", true), 20);
      streamsCpu.honoUs = await perChunk(hono, honoOrigin, "/v1/chat/completions", chatBody("chat-long", true), 20);
      if (hasChat) streamsCpu.routerChatUs = await perChunk(router, routerOrigin, "/v1/chat/completions", chatBody("chat-long", true), 20);
      if (peer) streamsCpu.peerChatUs = await perChunk(peer, peerOrigin, "/v1/chat/completions", chatBody("chat-long", true), 20).catch(() => undefined);
    }

    // The load servers are done: the rest measures fresh routers alone on the server core.
    await bare.stop();
    await hono.stop();
    if (peer) await peer.stop();
    await router.stop();

    // ---- open streams: RSS ----
    let openResult: BenchResults["openStreams"];
    if (SECTIONS.has("open")) {
      openResult = [];
      for (const [label, model] of [
        ["translated", "chat-slow"],
        ["native", "oai-slow"],
      ] as const) {
        const r = await startRouterChild(`router-open-${label}`, mockUrl);
        children.push(r);
        const origin = `http://127.0.0.1:${r.port}`;
        await sequentialStreams({ name: "warm", origin, path: "/v1/responses", body: responsesBody("chat-s", true) }, 50, 10_000);
        await new Promise((res) => setTimeout(res, 500));
        const idleRss = r.rssBytes();
        log(`${label}: opening ${OPEN_STREAMS} streams through a fresh router`);
        const open = await openStreams({ name: "open", origin, path: "/v1/responses", body: responsesBody(model, true) }, OPEN_STREAMS, 60_000);
        await new Promise((res) => setTimeout(res, 2_500)); // a couple of trickled deltas on every stream
        const rss = r.rssBytes();
        const mockRss = procRssBytes(mock.pid);
        await open.close();
        await r.stop();
        openResult.push({ label, streams: open.opened, failed: open.failed, allOpenMs: open.allFirstMs, idleRssMb: idleRss / 2 ** 20, rssMb: rss / 2 ** 20, perStreamKb: (rss - idleRss) / 1024 / Math.max(1, open.opened), mockRssMb: mockRss / 2 ** 20 });
      }
    }

    // ---- storage: store:true vs false, cache hit (memory and Redis) ----
    let storage: BenchResults["storage"];
    if (SECTIONS.has("storage")) {
      storage = [];
      const redis = await redisForBench(cleanups);
      // The last kind: every stored write also waits for a replica (WAIT 1), the cost of storage.durability: replica.
      const replica = redis ? await replicaForBench(redis.url, cleanups) : null;
      const kinds: [string, string, Record<string, unknown>][] = [["memory", "", {}]];
      if (redis) kinds.push(["redis", redis.url, {}]);
      if (redis && replica) kinds.push(["redis + replica, durability: replica", redis.url, { durability: "replica" }]);
      for (const [kind, url, extra] of kinds) {
        const r = await startRouterChild(`router-${kind.split(" ")[0]}`, mockUrl, url, false, extra);
        children.push(r);
        const origin = `http://127.0.0.1:${r.port}`;
        const targets: Target[] = [
          { name: "store:false", origin, path: "/v1/responses", body: responsesBody("chat-s", false) },
          { name: "store:true", origin, path: "/v1/responses", body: responsesBody("chat-s", false, { store: true }) },
          { name: "cache hit", origin, path: "/v1/responses", body: responsesBody("chat-cached", false) },
          { name: "store:true stream", origin, path: "/v1/responses", body: responsesBody("chat-s", true, { store: true }) },
          { name: "store:false stream", origin, path: "/v1/responses", body: responsesBody("chat-s", true) },
        ];
        for (const t of targets) {
          const p = await probe(t.origin, t.path, t.body);
          if (!p.ok) throw new Error(`${kind} ${t.name}: HTTP ${p.status} ${p.text}`);
        }
        log(`${kind} store: store:true vs store:false vs cache hit, concurrency 1`);
        const samples = await sampleLatency(targets, { rounds: Math.min(ROUNDS, 1500), warmup: 100, maxMs: 8_000 });
        const s = (name: string) => summarize(samples.get(name)!.map((x) => x.total));
        const base = s("store:false");
        const stored = s("store:true");
        const hit = s("cache hit");
        const sBase = s("store:false stream");
        const sStored = s("store:true stream");
        storage.push({
          kind,
          storeFalse: base,
          storeTrue: stored,
          cacheHit: hit,
          addedByStoreP50: stored.p50 - base.p50,
          addedByStoreP99: stored.p99 - base.p99,
          addedByStoreStreamP50: sStored.p50 - sBase.p50,
          cacheHitVsUpstreamP50: hit.p50 - base.p50,
        });
        await r.stop();
      }
    }

    // ---- per-key limits: admit + settle per request, in process (memory and Redis) ----
    let limiter: BenchResults["limiter"];
    if (SECTIONS.has("limits")) {
      log("per-key limits: admit + settle per request, in process");
      const redis = await redisForBench(cleanups);
      limiter = await measureLimiter(redis?.url ?? null);
    }

    // ---- tool loops: one WebSocket vs HTTP per turn, both kinds ----
    let toolLoops: BenchResults["toolLoops"];
    if (SECTIONS.has("ws")) {
      const r = await startRouterChild("router-ws", mockUrl);
      children.push(r);
      toolLoops = await measureToolLoops({ router: `http://127.0.0.1:${r.port}`, routerPid: r.pid, mock: mockOrigin, loops: LOOPS, log });
      console.log(renderToolLoops(toolLoops));
      await r.stop();
    }

    // ---- tracing: CPU per request off vs on (100% sampled, exporting) ----
    let tracing: BenchResults["tracing"];
    if (SECTIONS.has("tracing")) {
      log("tracing off vs on: CPU per request, interleaved rounds at concurrency 64");
      tracing = await measureTracingCost({
        start: async (name, extra) => {
          const c = await startRouterChild(name, mockUrl, "", false, {}, extra);
          children.push(c);
          return c;
        },
        paths: [
          { key: "translated-json", path: "/v1/responses", body: responsesBody("chat-s", false) },
          { key: "translated-stream", path: "/v1/responses", body: responsesBody("chat-s", true) },
          { key: "native-stream", path: "/v1/responses", body: responsesBody("oai-s", true) },
        ],
        rounds: 3,
        seconds: DURATION,
        log,
      });
    }

    // ---- hosted tools: CPU per response, a plain answer next to one MCP tool round ----
    let toolRound: BenchResults["toolRound"];
    if (SECTIONS.has("tools")) {
      log("hosted tool round: CPU per response, plain vs one MCP call over loopback vs its hono floor, interleaved rounds");
      toolRound = await measureToolRound({
        start: async (name, extra) => {
          const c = await startRouterChild(name, mockUrl, "", flags.profile === true, {}, extra);
          children.push(c);
          return c;
        },
        startFloor: async (mcpUrl) => {
          const c = await spawnNode({ name: "hono-tools", args: [...TSX, "test/bench/hono-proxy.ts", "--upstream", mockOrigin, "--mcp", mcpUrl], cpus: SERVER_CPU, ready: { ipc: true } });
          children.push(c);
          return c;
        },
        rounds: 3,
        seconds: DURATION,
        log,
      });
      console.log(toolRoundLine(toolRound));
    }

    const results: BenchResults = {
      startedAt: startedAt.toISOString(),
      machine: machine(),
      load: { before: loadBefore, after: loadavg(), niceness: os.getPriority() },
      settings: { duration: DURATION, rounds: ROUNDS, openStreams: OPEN_STREAMS, mockLatencyMs: MOCK_LATENCY, logLevel: LOG_LEVEL, placement: hasTaskset() ? `server under test on CPU ${SERVER_CPU} (router and floors alike scavenge on the main thread there: runtime/gc.ts); client, mock and redis on CPU ${CLIENT_CPU}` : "unpinned (no taskset)" },
      command: `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(" ")}` : ""}`,
      chatPassThrough: hasChat,
      peer: peer ? "@portkey-ai/gateway " + peerVersion() : null,
      paths,
      streamsCpu,
      openStreams: openResult,
      storage,
      limiter,
      toolLoops,
      tracing,
      toolRound,
    };
    mkdirSync(resolve(OUT, ".."), { recursive: true });
    writeFileSync(OUT, JSON.stringify(results, null, 2) + "\n");
    const chartPath = resolve(OUT, "..", "chart.svg");
    writeFileSync(chartPath, renderChart(results));
    console.log(renderTable(results));
    if (flags.write) updateBenchmarksMd(resolve("BENCHMARKS.md"), renderMarkdown(results));
    log(`wrote ${OUT}, ${chartPath}${flags.write ? " and BENCHMARKS.md" : ""}; took ${Math.round((Date.now() - startedAt.getTime()) / 1000)} s (estimated ${est} s)`);
  } finally {
    await stopAll();
  }
}

/** Section chain: its own mock and redis-server, the routers one at a time; prints the table and writes chain.json beside the results. */
async function chainSection(children: Child[], cleanups: (() => Promise<void>)[]): Promise<void> {
  const mock = await spawnNode({ name: "mock", args: [...TSX, "test/bench/mock-server.ts"], cpus: CLIENT_CPU, ready: { ipc: true } });
  children.push(mock);
  const redis = await redisForBench(cleanups);
  const layouts: ChainLayout[] = [
    { label: "this build", dist: resolve("dist") },
    { label: "this build, history not held", dist: resolve("dist"), storage: { history_cache_bytes: 0 } },
  ];
  if (flags["chain-baseline"]) layouts.push({ label: flags["chain-baseline-label"] ?? "full copy (baseline)", dist: resolve(flags["chain-baseline"]) });
  log(`chain: ${layouts.map((l) => l.label).join(" vs ")}, memory${redis ? " and Redis" : ""}, to depth ${flags["chain-depth"] ?? 500}`);
  const runs = await measureChains({ mockUrl: `http://127.0.0.1:${mock.port}/v1`, redisUrl: redis?.url ?? null, layouts, cpus: SERVER_CPU, maxDepth: flags["chain-depth"] ? Number(flags["chain-depth"]) : undefined, log });
  const table = renderChains(runs);
  console.log(table);
  if (retried > 0) log(`chain: ${retried} request(s) met a 503 (a store call timed out on the loaded machine) and were retried`);
  mkdirSync(resolve(OUT, ".."), { recursive: true });
  writeFileSync(resolve(OUT, "..", "chain.json"), JSON.stringify({ startedAt: new Date().toISOString(), load: loadavg(), retried, runs }, null, 2) + "\n");
}

function machine(): BenchResults["machine"] {
  const cpuinfo = spawnSync("sh", ["-c", "grep -m1 'model name' /proc/cpuinfo | cut -d: -f2"], { encoding: "utf8" }).stdout.trim();
  return {
    nproc: Number(spawnSync("nproc", ["--all"], { encoding: "utf8" }).stdout.trim()), // --all: this process is pinned to one CPU
    node: process.version,
    cpu: cpuinfo || "unknown",
    memGb: Math.round(Number(/MemTotal:\s+(\d+)/.exec(spawnSync("cat", ["/proc/meminfo"], { encoding: "utf8" }).stdout)?.[1] ?? 0) / 2 ** 20),
  };
}

/** 1, 5 and 15 minute load averages: how busy the machine was around the run. */
function loadavg(): number[] {
  return readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).map(Number);
}

function peerVersion(): string {
  try {
    return (JSON.parse(spawnSync("cat", ["node_modules/@portkey-ai/gateway/package.json"], { encoding: "utf8" }).stdout) as { version: string }).version;
  } catch {
    return "?";
  }
}

await main();
