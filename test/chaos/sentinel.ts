import { monitorEventLoopDelay } from "node:perf_hooks";
import { setTimeout as delay } from "node:timers/promises";
import OpenAI from "openai";
import { buildConfig } from "../../src/config/load.js";
import { createLogger } from "../../src/ops/log.js";
import { startRouter, type RunningRouter } from "../../src/server.js";
import { chatCompletion, chatTextChunks, startMockUpstream, type MockUpstream } from "../helpers/mock-upstream.js";
import { startRedisCluster } from "../helpers/redis-cluster.js";
import { startSentinelGroup, type SentinelGroup } from "../helpers/redis-sentinel.js";
import { isTerminalEvent } from "../../src/store/types.js";
import type { StreamEvent } from "../../src/wire/types.js";

/**
 * The Sentinel chaos run: a real primary, two replicas and three sentinels on loopback (with
 * `deployment: "cluster"`, a Redis Cluster of three primaries with two replicas each), two
 * router instances sharing them, constant load (stored responses, half streamed, some in the
 * background) while the primary is SIGKILLed over and over. Each failover is timed, the old
 * primary rejoins as a replica, and afterwards every response a client was told was stored is
 * fetched again through the OTHER instance, and every background job is checked to have ended
 * exactly once.
 */
export interface SentinelChaosOptions {
  durationMs: number;
  concurrency: number;
  /** Kill the primary this long after the previous failover settled. */
  killEveryMs: number;
  durability: "primary" | "replica";
  /** A Sentinel group (default), or a Redis Cluster whose first primary is killed each time. */
  deployment?: "sentinel" | "cluster";
  /** Share of requests streamed (0..1); one request in `backgroundEvery` is a background one. */
  streamShare: number;
  backgroundEvery: number;
  /** One request in `noStoreEvery` is `store: false` (its delay beyond the upstream is measured). */
  noStoreEvery: number;
  maxRequests: number;
  progress?(line: string): void;
}

export const SENTINEL_DEFAULTS: SentinelChaosOptions = {
  durationMs: 30_000,
  concurrency: 8,
  killEveryMs: 5_000,
  durability: "replica",
  streamShare: 0.5,
  backgroundEvery: 10,
  noStoreEvery: 3,
  maxRequests: 100_000,
};

/** What the run needs of a Redis that fails over. */
interface Deployment {
  storage: Record<string, unknown>;
  /** SIGKILLs a primary; its port. */
  killPrimary(): Promise<number>;
  /** Waits until a replica took over from `old`; the new primary's port. */
  waitForNewPrimary(old: number): Promise<number>;
  /** Starts the killed node again, as a replica. */
  rejoin(old: number): Promise<void>;
  /** Waits until every replica is in sync (a kill before that is a second failure). */
  waitForHealthy(): Promise<void>;
  stop(): Promise<void>;
}

async function startDeployment(kind: "sentinel" | "cluster"): Promise<Deployment> {
  if (kind === "sentinel") {
    const group = await startSentinelGroup({ replicas: 2, sentinels: 3, downAfterMs: 2_000, failoverTimeoutMs: 5_000 });
    return {
      storage: { redis: { sentinels: group.sentinels, name: group.name } },
      killPrimary: () => group.killPrimary(),
      waitForNewPrimary: (old) => group.waitForNewPrimary(old, 30_000),
      rejoin: (old) => group.rejoin(old),
      waitForHealthy: () => group.waitForHealthy(),
      stop: () => group.stop(),
    };
  }
  const cluster = await startRedisCluster({ primaries: 3, replicasPer: 2, nodeTimeoutMs: 2_000 });
  let before: number[] = [];
  return {
    storage: { redis: { cluster: cluster.nodes } },
    async killPrimary() {
      before = await cluster.primaryPorts();
      await cluster.kill(before[0]!);
      return before[0]!;
    },
    async waitForNewPrimary() {
      const now = await cluster.waitForOk(30_000);
      return now.find((p) => !before.includes(p))!;
    },
    rejoin: (old) => cluster.rejoin(old),
    waitForHealthy: () => cluster.waitForReplicas(),
    stop: () => cluster.stop(),
  };
}

export interface FailoverWindow {
  /** Seconds from the kill until a replica was promoted. */
  promotedAfter: number;
  /** Seconds from the kill until a client's stored request succeeded again (null: none did before the next kill). */
  storingAgainAfter: number | null;
}

export interface SentinelChaosReport {
  requests: number;
  served: number;
  /** HTTP errors (by class in `reasons`): during a failover stored requests answer 503 store_unavailable. */
  failed: number;
  /** Streams whose response could not be stored ended in response.failed (by design, never a silent loss). */
  interrupted: number;
  stored: number;
  lost: number;
  kills: number;
  windows: FailoverWindow[];
  background: {
    created: number;
    completed: number;
    failed: number;
    unfinished: number;
    ranTwice: number;
    /** Finished jobs re-streamed through each instance: how many ended with exactly one terminal event, last, saying the record's status. */
    restreamed: number;
    oneTerminal: number;
    /** Re-streams by their terminal-event count ("0", "1", "2", ... and "not last"/"wrong status"). */
    terminalCounts: Record<string, number>;
  };
  /** Stored requests that failed with 503 store_unavailable: how many, the slowest (ms), and whether each had Retry-After. */
  storeFailures: { count: number; slowestMs: number; withoutRetryAfter: number };
  /** store: false requests: their time beyond the upstream's (ms), overall and while a failover was on. */
  noStore: {
    count: number;
    failed: number;
    p50Ms: number;
    p99Ms: number;
    maxMs: number;
    duringFailover: { count: number; p99Ms: number; maxMs: number };
    /** What the store itself made requests wait: their limiter admission (all a store: false request asks of Redis besides usage, which is off its path). */
    storeWait: { count: number; p99Ms: number; maxMs: number; duringFailoverMaxMs: number };
    /** The run's own event-loop delay (routers and load share one process): every figure above includes it. */
    loopDelayP99Ms: number;
  };
  reasons: Record<string, number>;
  seconds: number;
}

export async function runSentinelChaos(opts: SentinelChaosOptions): Promise<SentinelChaosReport> {
  const say = opts.progress ?? (() => {});
  const report: SentinelChaosReport = {
    requests: 0,
    served: 0,
    failed: 0,
    interrupted: 0,
    stored: 0,
    lost: 0,
    kills: 0,
    windows: [],
    background: { created: 0, completed: 0, failed: 0, unfinished: 0, ranTwice: 0, restreamed: 0, oneTerminal: 0, terminalCounts: {} },
    storeFailures: { count: 0, slowestMs: 0, withoutRetryAfter: 0 },
    noStore: { count: 0, failed: 0, p50Ms: 0, p99Ms: 0, maxMs: 0, duringFailover: { count: 0, p99Ms: 0, maxMs: 0 }, storeWait: { count: 0, p99Ms: 0, maxMs: 0, duringFailoverMaxMs: 0 }, loopDelayP99Ms: 0 },
    reasons: {},
    seconds: 0,
  };
  const started = Date.now();
  let group: Deployment | null = null;
  let upstream: MockUpstream | null = null;
  const routers: RunningRouter[] = [];
  // Upstream calls per background input: a job run twice would ask twice.
  const upstreamCalls = new Map<string, number>();
  try {
    const kind = opts.deployment ?? "sentinel";
    say(kind === "sentinel" ? "starting redis-server x3 and redis-sentinel x3" : "starting a Redis Cluster: 3 primaries x 2 replicas");
    group = await startDeployment(kind);
    upstream = await startMockUpstream();
    upstream.setDefault("/chat/completions", (req) => {
      const input = String(req.body?.messages?.at(-1)?.content ?? "");
      if (input.startsWith("bg ")) upstreamCalls.set(input, (upstreamCalls.get(input) ?? 0) + 1);
      if (req.body?.stream) return { kind: "sse", frames: [...chatTextChunks(["Hello", " ", "world"]), "data: [DONE]\n\n"], delayMs: input.startsWith("bg ") ? 50 : 2 };
      // store: false (and every other JSON) answers come at once: a store: false request's whole latency is its delay beyond the upstream.
      return { kind: "json", body: chatCompletion("Hello world") };
    });
    const config = buildConfig({
      // A key with limits (generous ones): every request goes through the shared limiter and usage.
      server: { host: "127.0.0.1", port: 0, api_keys: [{ name: "chaos", key: CHAOS_KEY, limits: { requests_per_minute: 1_000_000, tokens_per_minute: 100_000_000, max_concurrent: 1_000 }, budget: { tokens_per_day: 1_000_000_000 } }] },
      endpoints: [{ name: "box", url: upstream.url, kind: "chat", max_concurrency: 64 }],
      models: { m: { endpoints: ["box"] } },
      storage: { ...group.storage, durability: opts.durability, prefix: "chaos:" },
      background: { concurrency: 8, lease: { lock_duration: "5s", stalled_interval: "1s", max_stalled_count: 1 } },
      logging: { level: "silent" },
    });
    const level = (process.env.CHAOS_LOG_LEVEL ?? "silent") as "silent";
    for (let i = 0; i < 2; i++) routers.push(await startRouter(config, { logger: createLogger(level) }));
    const loop = monitorEventLoopDelay({ resolution: 10 });
    loop.enable();
    // The time each request's limiter admission took, on both instances.
    const storeWaits: number[] = [];
    let storeWaitDuringFailover = 0;
    for (const r of routers) {
      const limiter = r.runtime.stores.limiter;
      const admit = limiter.admit.bind(limiter);
      limiter.admit = async (req) => {
        const t = performance.now();
        const during = failingOver();
        try {
          return await admit(req);
        } finally {
          const ms = performance.now() - t;
          storeWaits.push(ms);
          if (during || failingOver()) storeWaitDuringFailover = Math.max(storeWaitDuringFailover, ms);
        }
      };
    }
    const clients = routers.map((r) => new OpenAI({ baseURL: `${r.url}/v1`, apiKey: CHAOS_KEY, maxRetries: 0, timeout: 30_000 }));
    const stored: { id: string; by: number }[] = [];
    const backgroundIds: { id: string; by: number; input: string }[] = [];
    // The load runs for durationMs once the deployment is up (starting it takes seconds).
    const deadline = Date.now() + opts.durationMs;
    const note = (reason: string) => (report.reasons[reason] = (report.reasons[reason] ?? 0) + 1);
    // Failover windows as clients see them: the first stored request started after the kill that succeeds.
    let killedAt = 0;
    let firstStoredAfterKill: number | null = null;
    const storedOk = (startedAt: number) => {
      if (killedAt > 0 && startedAt > killedAt && firstStoredAfterKill === null) firstStoredAfterKill = Date.now();
    };
    // While a failover is on: from the kill until stored requests succeed again.
    const failingOver = () => killedAt > 0 && firstStoredAfterKill === null;
    const noStoreDelays: number[] = [];
    const noStoreDuringFailover: number[] = [];
    const chains = new Map<number, string>();

    const worker = async (w: number) => {
      for (let i = 0; Date.now() < deadline && report.requests < opts.maxRequests; i++) {
        report.requests++;
        const by = (w + i) % 2;
        const client = clients[by]!;
        const background = opts.backgroundEvery > 0 && i % opts.backgroundEvery === opts.backgroundEvery - 1;
        const free = !background && opts.noStoreEvery > 0 && i % opts.noStoreEvery === 1;
        const stream = !background && !free && (i * 7 + w * 13) % 100 < opts.streamShare * 100;
        const input = `${background ? "bg " : free ? "free " : ""}w${w} #${i}`;
        const startedAt = Date.now();
        try {
          if (free) {
            const during = failingOver();
            await client.responses.create({ model: "m", input, store: false });
            const delay = Date.now() - startedAt;
            noStoreDelays.push(delay);
            if (during || failingOver()) noStoreDuringFailover.push(delay);
            report.served++;
          } else if (background) {
            const r = await client.responses.create({ model: "m", input, background: true });
            report.served++;
            backgroundIds.push({ id: r.id, by, input });
          } else if (stream) {
            let last: { type: string; response?: { id: string; error?: { code?: string } | null } } | undefined;
            for await (const ev of await client.responses.create({ model: "m", input, stream: true })) last = ev as typeof last;
            if (last?.type === "response.completed") {
              report.served++;
              stored.push({ id: last.response!.id, by });
              storedOk(startedAt);
            } else {
              report.interrupted++;
              note(`stream ${last?.type ?? "no events"}: ${last?.response?.error?.code ?? "-"}`);
            }
          } else {
            // Every other stored request continues this worker's chain (previous_response_id).
            const previous = i % 2 === 0 ? chains.get(w) : undefined;
            const r = await client.responses.create({ model: "m", input, ...(previous ? { previous_response_id: previous } : {}) });
            report.served++;
            stored.push({ id: r.id, by });
            chains.set(w, r.id);
            storedOk(startedAt);
          }
        } catch (err) {
          if (free) report.noStore.failed++;
          if (err instanceof OpenAI.APIError && err.status === 503 && (err.error as { code?: string } | undefined)?.code === "store_unavailable") {
            report.storeFailures.count++;
            report.storeFailures.slowestMs = Math.max(report.storeFailures.slowestMs, Date.now() - startedAt);
            if (!err.headers?.get("retry-after")) report.storeFailures.withoutRetryAfter++;
          }
          // A chain whose last turn failed starts again.
          chains.delete(w);
          report.failed++;
          note(err instanceof OpenAI.APIError ? `HTTP ${err.status ?? "-"} ${(err.error as { code?: string } | undefined)?.code ?? err.message}` : String(err));
          // A client honouring Retry-After would wait; a short pause keeps the run from spinning on 503s.
          await delay(50);
        }
      }
    };

    const chaos = async () => {
      // Each failover gets its window inside the run (promotion takes a few seconds).
      while (Date.now() + opts.killEveryMs + 5_000 < deadline) {
        await delay(opts.killEveryMs);
        firstStoredAfterKill = null;
        killedAt = Number.MAX_SAFE_INTEGER;
        const old = await group!.killPrimary();
        // From the moment the process is gone: nothing that starts later can reach it.
        killedAt = Date.now();
        report.kills++;
        say(`killed primary :${old}`);
        const now = await group!.waitForNewPrimary(old);
        const window: FailoverWindow = { promotedAfter: (Date.now() - killedAt) / 1000, storingAgainAfter: null };
        report.windows.push(window);
        say(`promoted :${now} after ${window.promotedAfter.toFixed(1)} s`);
        await group!.rejoin(old);
        // The next kill comes once the group is whole again (every replica in sync): a kill during
        // the resync would be a second failure, which no durability setting survives.
        await group!.waitForHealthy();
        const probeUntil = Date.now() + 10_000;
        while (firstStoredAfterKill === null && Date.now() < probeUntil) await delay(50);
        if (firstStoredAfterKill !== null) window.storingAgainAfter = (firstStoredAfterKill - killedAt) / 1000;
      }
    };

    const ticker = setInterval(() => say(`${Math.round((Date.now() - started) / 1000)} s: ${report.requests} requests, ${report.served} served, ${report.failed} failed, ${report.interrupted} interrupted`), 5_000);
    ticker.unref();
    const trim = setInterval(() => (upstream!.requests.length = 0), 1_000);
    trim.unref();
    try {
      await Promise.all([chaos(), ...Array.from({ length: opts.concurrency }, (_, w) => worker(w))]);
    } finally {
      clearInterval(ticker);
      clearInterval(trim);
    }

    // Every acknowledged response, read through the other instance.
    report.stored = stored.length;
    say(`verifying ${stored.length} stored responses and ${backgroundIds.length} background jobs`);
    let next = 0;
    const verify = async () => {
      while (next < stored.length) {
        const { id, by } = stored[next++]!;
        if ((await fetchStored(clients[1 - by]!, id)) === null) report.lost++;
      }
    };
    await Promise.all(Array.from({ length: opts.concurrency }, verify));

    // Background jobs: each ends (completed or failed cleanly), none is lost, none ran twice.
    report.background.created = backgroundIds.length;
    const status = new Map<string, string>();
    const settleBy = Date.now() + 30_000;
    let pending = backgroundIds;
    while (pending.length > 0 && Date.now() < settleBy) {
      for (const { id, by } of pending) status.set(id, (await fetchStored(clients[1 - by]!, id))?.status ?? "lost");
      pending = pending.filter(({ id }) => status.get(id) === "queued" || status.get(id) === "in_progress");
      if (pending.length > 0) await delay(250);
    }
    // Every finished job's stream, re-streamed through both instances: exactly one terminal event, last, the record's status.
    for (const { id } of backgroundIds) {
      const s = status.get(id);
      if (s !== "completed" && s !== "failed" && s !== "cancelled" && s !== "incomplete") continue;
      for (const router of routers) {
        const verdict = await terminalVerdict(router.url, id, s);
        report.background.restreamed++;
        report.background.terminalCounts[verdict] = (report.background.terminalCounts[verdict] ?? 0) + 1;
        if (verdict === "1") report.background.oneTerminal++;
        else note(`background ${id} (${s}) re-streamed with terminal events: ${verdict}`);
      }
    }
    for (const { id, input } of backgroundIds) {
      const s = status.get(id);
      if (s === "completed") report.background.completed++;
      else if (s === "failed") report.background.failed++;
      else if (s === "lost") report.lost++;
      else {
        report.background.unfinished++;
        note(`background left ${s}`);
      }
      if ((upstreamCalls.get(input) ?? 0) > 1) report.background.ranTwice++;
    }
    loop.disable();
    report.noStore.loopDelayP99Ms = Math.round(loop.percentile(99) / 1e6);
    const waits = storeWaits.sort((a, b) => a - b);
    report.noStore.storeWait = { count: waits.length, p99Ms: Math.round(pct(waits, 0.99)), maxMs: Math.round(waits.at(-1) ?? 0), duringFailoverMaxMs: Math.round(storeWaitDuringFailover) };
    const sorted = [...noStoreDelays].sort((a, b) => a - b);
    const during = [...noStoreDuringFailover].sort((a, b) => a - b);
    report.noStore = { ...report.noStore, count: sorted.length, p50Ms: pct(sorted, 0.5), p99Ms: pct(sorted, 0.99), maxMs: sorted.at(-1) ?? 0, duringFailover: { count: during.length, p99Ms: pct(during, 0.99), maxMs: during.at(-1) ?? 0 } };
  } finally {
    report.seconds = Math.round((Date.now() - started) / 100) / 10;
    await Promise.all(routers.map((r) => r.close(2_000)));
    await upstream?.close();
    await group?.stop();
  }
  return report;
}

const CHAOS_KEY = "rr-chaos-key-7d1e";

/** The q-quantile of sorted numbers (nearest rank); 0 for none. */
function pct(sorted: number[], q: number): number {
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
}

/**
 * A finished job's stream through one instance: "1" when it has exactly one terminal event,
 * its last, whose status is the record's; else how many it had (or "not last", "wrong status",
 * "HTTP n"). A store still failing over (503) is asked again.
 */
async function terminalVerdict(baseUrl: string, id: string, status: string): Promise<string> {
  for (let attempt = 0; ; attempt++) {
    const res = await fetch(`${baseUrl}/v1/responses/${id}?stream=true`, { headers: { authorization: `Bearer ${CHAOS_KEY}` }, signal: AbortSignal.timeout(15_000) });
    if (res.status === 503 && attempt < 20) {
      await res.body?.cancel();
      await delay(250);
      continue;
    }
    if (res.status !== 200) return `HTTP ${res.status}`;
    const events = (await res.text())
      .split("\n")
      .filter((l) => l.startsWith("data: "))
      .map((l) => JSON.parse(l.slice(6)) as StreamEvent);
    const terminal = events.filter(isTerminalEvent);
    if (terminal.length !== 1) return String(terminal.length);
    if (events.at(-1) !== terminal[0]) return "not last";
    return (terminal[0]!.response as { status?: string } | undefined)?.status === status ? "1" : "wrong status";
  }
}

/** GET a response; null when it is gone (404). A store still failing over (503) is asked again, a bounded number of times. */
async function fetchStored(client: OpenAI, id: string): Promise<{ status?: string } | null> {
  for (let attempt = 0; attempt < 40; attempt++) {
    try {
      return await client.responses.retrieve(id);
    } catch (err) {
      if (err instanceof OpenAI.NotFoundError) return null;
      await delay(250);
    }
  }
  return null;
}

export function formatSentinelReport(r: SentinelChaosReport, durability: string): string {
  const rows: [string, string | number][] = [
    ["durability", durability],
    ["duration (s)", r.seconds],
    ["requests", r.requests],
    ["served", r.served],
    ["failed (HTTP error)", r.failed],
    ["interrupted mid-stream", r.interrupted],
    ["stored responses", r.stored],
    ["stored responses lost", r.lost],
    ["primary kills", r.kills],
    ["background jobs", r.background.created],
    ["  completed", r.background.completed],
    ["  failed cleanly", r.background.failed],
    ["  never finished", r.background.unfinished],
    ["  ran twice", r.background.ranTwice],
    ["  re-streams (2 instances)", r.background.restreamed],
    ["  with exactly 1 terminal", r.background.oneTerminal],
    ["store failures (503)", r.storeFailures.count],
    ["  slowest (ms)", r.storeFailures.slowestMs],
    ["  without Retry-After", r.storeFailures.withoutRetryAfter],
    ["store:false requests", r.noStore.count],
    ["  failed", r.noStore.failed],
    ["  delay p50 (ms)", r.noStore.p50Ms],
    ["  delay p99 (ms)", r.noStore.p99Ms],
    ["  delay max (ms)", r.noStore.maxMs],
    ["  in failovers", r.noStore.duringFailover.count],
    ["  in failovers p99 (ms)", r.noStore.duringFailover.p99Ms],
    ["  in failovers max (ms)", r.noStore.duringFailover.maxMs],
    ["limiter admissions", r.noStore.storeWait.count],
    ["  store wait p99 (ms)", r.noStore.storeWait.p99Ms],
    ["  store wait max (ms)", r.noStore.storeWait.maxMs],
    ["  in failovers max (ms)", r.noStore.storeWait.duringFailoverMaxMs],
    ["event-loop delay p99 (ms)", r.noStore.loopDelayP99Ms],
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  const lines = rows.map(([k, v]) => `${k.padEnd(width)}  ${String(v).padStart(8)}`);
  r.windows.forEach((w, i) => lines.push(`failover ${i + 1}: promoted after ${w.promotedAfter.toFixed(1)} s, storing again after ${w.storingAgainAfter === null ? "-" : `${w.storingAgainAfter.toFixed(1)} s`}`));
  lines.push(`terminal events per re-stream: ${Object.entries(r.background.terminalCounts).map(([k, n]) => `${k}: ${n}`).join(", ") || "-"}`);
  for (const [reason, n] of Object.entries(r.reasons)) lines.push(`  ${reason}: ${n}`);
  return lines.join("\n");
}
