import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import OpenAI from "openai";
import { buildConfig } from "../../src/config/load.js";
import { createLogger } from "../../src/ops/log.js";
import { startRouter, type RunningRouter } from "../../src/server.js";
import { chatTextChunks, startMockUpstream, type MockUpstream } from "../helpers/mock-upstream.js";
import { freePort, startRedis, type RedisServerHandle } from "../helpers/redis-server.js";

/**
 * A bounded chaos run on loopback: a router in front of three mock chat
 * backends, constant load from the openai SDK (store: true, half streamed),
 * one backend killed and restarted over and over (optionally one more dead
 * from the start, and a real redis-server restarted under load). Afterwards
 * every response the clients were told was stored is fetched again.
 */
export interface ChaosOptions {
  durationMs: number;
  concurrency: number;
  /** Kill a live backend this often, and bring it back after downMs. */
  killEveryMs: number;
  downMs: number;
  /** One of the three backends never listens at all. */
  deadBackend: boolean;
  /** Stored responses in a real redis-server (AOF on), restarted every redisEveryMs. */
  redis: boolean;
  redisEveryMs: number;
  /** Share of requests streamed (0..1). */
  streamShare: number;
  /** Delay between stream chunks from the backends: > 0 lets a kill land mid-stream. */
  chunkDelayMs: number;
  /** Hard cap on requests, whatever the duration. */
  maxRequests: number;
  progress?(line: string): void;
}

export interface ChaosReport {
  requests: number;
  served: number;
  /** Answered with an HTTP error: what failover exists to prevent. */
  failed: number;
  /** Streams that broke after their first byte because their backend died (response.failed by design). */
  interrupted: number;
  stored: number;
  lost: number;
  kills: number;
  redisRestarts: number;
  /** Requests served by an endpoint that was ejected at the time (panic routing: every endpoint of the pool was). */
  panicServed: number;
  /** Upstream attempts sent to an ejected endpoint, whatever their outcome. */
  panicAttempts: number;
  /** failed + interrupted by reason (HTTP status + code, or the stream's error code). */
  reasons: Record<string, number>;
  seconds: number;
}

export const DEFAULTS: ChaosOptions = {
  durationMs: 30_000,
  concurrency: 8,
  killEveryMs: 3_000,
  downMs: 1_000,
  deadBackend: false,
  redis: false,
  redisEveryMs: 7_000,
  streamShare: 0.5,
  chunkDelayMs: 2,
  maxRequests: 200_000,
};

class Backend {
  mock: MockUpstream | null = null;
  constructor(
    readonly port: number,
    private readonly chunkDelayMs: number,
  ) {}
  get url(): string {
    return `http://127.0.0.1:${this.port}/v1`;
  }
  async start(): Promise<void> {
    const m = await startMockUpstream(this.port);
    const delayMs = this.chunkDelayMs;
    m.setDefault("/chat/completions", (req) =>
      req.body?.stream ? { kind: "sse", frames: [...chatTextChunks(["Hello", " ", "world"]), "data: [DONE]\n\n"], delayMs } : undefined,
    );
    this.mock = m;
  }
  async kill(): Promise<void> {
    const m = this.mock;
    this.mock = null;
    await m?.close();
  }
}

export async function runChaos(opts: ChaosOptions): Promise<ChaosReport> {
  const say = opts.progress ?? (() => {});
  const backends = await Promise.all([0, 1, 2].map(async () => new Backend(await freePort(), opts.chunkDelayMs)));
  const live = opts.deadBackend ? backends.slice(1) : backends;
  for (const b of live) await b.start();
  const redisDir = opts.redis ? mkdtempSync(join(tmpdir(), "rr-chaos-redis-")) : null;
  let redis: RedisServerHandle | null = null;
  let router: RunningRouter | null = null;
  const report: ChaosReport = { requests: 0, served: 0, failed: 0, interrupted: 0, stored: 0, lost: 0, kills: 0, redisRestarts: 0, panicServed: 0, panicAttempts: 0, reasons: {}, seconds: 0 };
  const started = Date.now();
  try {
    if (redisDir) redis = await startRedis({ persistDir: redisDir });
    const config = buildConfig({
      server: { host: "127.0.0.1", port: 0 },
      endpoints: backends.map((b, i) => ({ name: `box-${i}`, url: b.url, kind: "chat", max_concurrency: 4, timeouts: { connect: "1s", first_byte: "5s", idle: "5s" } })),
      models: { m: { endpoints: backends.map((_, i) => `box-${i}`) } },
      routing: { queue_timeout: "10s", retry: { attempts: 3, max_time: "15s" }, health: { failure_threshold: 2, cooldown: "500ms", max_cooldown: "2s" } },
      // Room for every response the run may store: an LRU eviction is not a loss, but the run could not tell them apart.
      storage: { redis_url: redis?.url ?? "", memory: { max_entries: opts.maxRequests, max_bytes: 2 * 1024 ** 3 } },
      logging: { level: "silent" },
    });
    router = await startRouter(config, { logger: createLogger("silent") });
    const client = new OpenAI({ baseURL: `${router.url}/v1`, apiKey: "chaos", maxRetries: 0, timeout: 30_000 });
    const ids: string[] = [];
    const deadline = started + opts.durationMs;
    const note = (reason: string) => (report.reasons[reason] = (report.reasons[reason] ?? 0) + 1);

    const worker = async (w: number) => {
      for (let i = 0; Date.now() < deadline && report.requests < opts.maxRequests; i++) {
        report.requests++;
        const stream = (i * 7 + w * 13) % 100 < opts.streamShare * 100;
        const input = `w${w} #${i}`;
        try {
          if (stream) {
            let last: { type: string; response?: { id: string; error?: { code?: string } | null } } | undefined;
            try {
              for await (const ev of await client.responses.create({ model: "m", input, store: true, stream: true })) last = ev as typeof last;
            } catch (err) {
              if (err instanceof OpenAI.APIError && err.status !== undefined) throw err;
              report.interrupted++;
              note("stream cut");
              continue;
            }
            if (last?.type === "response.completed") {
              report.served++;
              ids.push(last.response!.id);
            } else {
              report.interrupted++;
              note(`${last?.type ?? "no events"}: ${last?.response?.error?.code ?? "-"}`);
            }
          } else {
            const r = await client.responses.create({ model: "m", input, store: true });
            report.served++;
            ids.push(r.id);
          }
        } catch (err) {
          report.failed++;
          note(err instanceof OpenAI.APIError ? `HTTP ${err.status ?? "-"} ${(err.error as { code?: string } | undefined)?.code ?? err.message}` : String(err));
        }
      }
    };

    // The chaos: rotate kills over the live backends; restart Redis now and then.
    const chaos = async () => {
      let victim = 0;
      let nextKill = Date.now() + opts.killEveryMs;
      let nextRedis = Date.now() + opts.redisEveryMs;
      while (Date.now() < deadline) {
        await delay(Math.max(10, Math.min(nextKill, nextRedis, deadline) - Date.now()));
        if (Date.now() >= deadline) break;
        if (Date.now() >= nextKill) {
          const b = live[victim++ % live.length]!;
          await b.kill();
          report.kills++;
          say(`killed backend :${b.port}`);
          await delay(Math.min(opts.downMs, Math.max(0, deadline - Date.now())));
          await b.start();
          nextKill = Date.now() + opts.killEveryMs;
        }
        if (redis && Date.now() >= nextRedis) {
          await redis.restart();
          report.redisRestarts++;
          say("restarted redis-server");
          nextRedis = Date.now() + opts.redisEveryMs;
        }
      }
    };

    const ticker = setInterval(() => say(`${Math.round((Date.now() - started) / 1000)} s: ${report.requests} requests, ${report.served} served, ${report.failed} failed, ${report.interrupted} interrupted`), 5_000);
    ticker.unref();
    // Keep the backends' request logs from growing for the whole run.
    const trim = setInterval(() => backends.forEach((b) => b.mock && (b.mock.requests.length = 0)), 1_000);
    trim.unref();
    try {
      await Promise.all([chaos(), ...Array.from({ length: opts.concurrency }, (_, w) => worker(w))]);
    } finally {
      clearInterval(ticker);
      clearInterval(trim);
    }

    // Everything back up, then every stored id must still be there.
    for (const b of live) if (!b.mock) await b.start();
    report.stored = ids.length;
    say(`verifying ${ids.length} stored responses`);
    let next = 0;
    const verify = async () => {
      while (next < ids.length) {
        const id = ids[next++]!;
        if (!(await stillStored(client, id))) report.lost++;
      }
    };
    await Promise.all(Array.from({ length: opts.concurrency }, verify));
  } finally {
    report.seconds = Math.round((Date.now() - started) / 100) / 10;
    for (const v of (await router?.runtime.metrics.panicRouted.get())?.values ?? []) {
      report.panicAttempts += v.value;
      if (v.labels.outcome === "ok") report.panicServed += v.value;
    }
    await router?.close(2_000);
    for (const b of backends) await b.kill();
    await redis?.stop();
    if (redisDir) rmSync(redisDir, { recursive: true, force: true });
  }
  return report;
}

/** GET the response; a 404 means lost. A store that is briefly unreachable (503) is asked again, a bounded number of times. */
async function stillStored(client: OpenAI, id: string): Promise<boolean> {
  for (let attempt = 0; attempt < 20; attempt++) {
    try {
      return (await client.responses.retrieve(id)).id === id;
    } catch (err) {
      if (err instanceof OpenAI.NotFoundError) return false;
      await delay(250);
    }
  }
  return false;
}

export function formatReport(r: ChaosReport): string {
  const rows: [string, string | number][] = [
    ["duration (s)", r.seconds],
    ["requests", r.requests],
    ["served", r.served],
    ["failed (HTTP error)", r.failed],
    ["interrupted mid-stream", r.interrupted],
    ["stored responses", r.stored],
    ["stored responses lost", r.lost],
    ["backend kills", r.kills],
    ["redis restarts", r.redisRestarts],
    ["served in panic mode", r.panicServed],
    ["panic-routed attempts", r.panicAttempts],
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  const lines = rows.map(([k, v]) => `${k.padEnd(width)}  ${String(v).padStart(8)}`);
  for (const [reason, n] of Object.entries(r.reasons)) lines.push(`  ${reason}: ${n}`);
  return lines.join("\n");
}
