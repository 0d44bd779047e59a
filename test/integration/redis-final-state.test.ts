import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { buildConfig } from "../../src/config/load.js";
import { createStores, type StoredResponse, type Stores } from "../../src/store/index.js";
import { isTerminalEvent, StoreUnavailableError } from "../../src/store/types.js";
import { isFinished } from "../../src/wire/protocol.js";
import type { StreamEvent } from "../../src/wire/types.js";
import { allEvents, callRouter, expectContiguous, slowText, until } from "../helpers/background.js";
import { metricSample } from "../helpers/metrics-text.js";
import { captureLog, type CapturedLog } from "../helpers/log-capture.js";
import { startMockUpstream, type MockUpstream } from "../helpers/mock-upstream.js";
import { startRedis, type RedisServerHandle } from "../helpers/redis-server.js";
import { startTestRouter, type TestRouter } from "../helpers/router.js";

/**
 * A finished background response stays finished with several instances on one Redis: the
 * first final status stored wins, and a late writer (a job whose lease lapsed and was failed
 * on another instance, a job that read its record just before a cancel) learns it instead of
 * overwriting it. Instance A's response writes pass through a gate the test opens, so each
 * race is played in the same order every run, over the real stores and a real Redis.
 */
const LEASE = { lock_duration: "2s", stalled_interval: "300ms", max_stalled_count: 1 };
const INSTANCE_LOST = "The router instance running this background response stopped before it finished.";

let redis: RedisServerHandle;
let raw: Redis;
let prefixes = 0;
const uniquePrefix = () => `rrfinal:${process.pid}:${++prefixes}:`;

function redisConfig(upstreamUrl: string, prefix: string) {
  return {
    server: { api_keys: [{ name: "team-a", key: "key-a" }] },
    endpoints: [{ name: "box", url: upstreamUrl, kind: "chat", max_concurrency: 4 }],
    models: { local: { endpoints: ["box"], upstream_model: "llama3.1:8b" } },
    routing: { queue_timeout: "500ms", retry: { attempts: 1, max_time: "5s" } },
    storage: { redis_url: redis.url, prefix },
    background: { concurrency: 1, cancel_wait: "1s", lease: LEASE },
  };
}

/** A write of the job's record that the gate holds until the test releases it. */
interface HeldWrite {
  status: string;
  release(): void;
  /** What the store answered, once released. */
  done: Promise<unknown>;
}

/**
 * Stores whose conditional response writes (saveIfExists, saveIfOpen: whichever the router
 * uses) are held while `hold(status)` says so; every other call goes straight through.
 */
function gatedStores(stores: Stores, hold: (status: string) => boolean): { stores: Stores; held: HeldWrite[] } {
  const held: HeldWrite[] = [];
  const responses = stores.responses as unknown as Record<string, (rec: StoredResponse) => Promise<unknown>>;
  for (const name of ["saveIfExists", "saveIfOpen"]) {
    const real = responses[name];
    if (typeof real !== "function") continue;
    responses[name] = (rec) => {
      if (!hold(rec.response.status)) return real.call(stores.responses, rec);
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      const done = gate.then(() => real.call(stores.responses, rec));
      held.push({ status: rec.response.status, release, done });
      return done;
    };
  }
  return { stores, held };
}

const routers: TestRouter[] = [];
const upstreams: MockUpstream[] = [];
let log: CapturedLog;

async function upstream(): Promise<MockUpstream> {
  const u = await startMockUpstream();
  upstreams.push(u);
  return u;
}

/** An instance whose conditional response writes are gated (A; B too in one case). */
async function gatedRouter(upstreamUrl: string, prefix: string, hold: (status: string) => boolean) {
  const config = buildConfig({ ...redisConfig(upstreamUrl, prefix), server: { host: "127.0.0.1", port: 0, api_keys: [{ name: "team-a", key: "key-a" }] } });
  const stores = await createStores({ ...config.storage, jobs: config.background.lease }, log.logger);
  const gated = gatedStores(stores, hold);
  const r = await startTestRouter(redisConfig(upstreamUrl, prefix), { apiKey: "key-a", stores: gated.stores, logger: log.logger });
  routers.push(r);
  return { router: r, held: gated.held, stores };
}

async function plainRouter(upstreamUrl: string, prefix: string): Promise<TestRouter> {
  const r = await startTestRouter(redisConfig(upstreamUrl, prefix), { apiKey: "key-a" });
  routers.push(r);
  return r;
}

const runningJobs = async (r: TestRouter) => metricSample(await (await r.fetch("/metrics")).text(), "responses_router_background_jobs", { status: "in_progress" }) ?? 0;
const statusOn = async (r: TestRouter, id: string) => (await r.client.responses.retrieve(id)).status;
const recorded = async (r: TestRouter, id: string): Promise<StreamEvent[]> => allEvents(await callRouter(r.url, "key-a")(`/v1/responses/${id}?stream=true`));

/**
 * Instance A runs a background job that streams its whole answer; its final write (completed)
 * waits at A's gate, and its lease lapses (as when it cannot renew its lock while Redis fails over).
 */
async function lapsedJobOnA() {
  log = captureLog("info");
  const up = await upstream();
  up.setDefault("/chat/completions", () => slowText(10));
  const prefix = uniquePrefix();
  const a = await gatedRouter(up.url, prefix, (status) => isFinished(status));
  const created = await a.router.client.responses.create({ model: "local", input: "hello", background: true });
  const finalWrite = await until(() => a.held.find((w) => w.status === "completed"), "A's final write");
  expect(await raw.del(`${prefix}bull:background:${created.id}:lock`)).toBe(1);
  return { up, prefix, created, finalWrite };
}

/** The event log has no gap and ends with its one terminal event, response.failed. */
function expectEndsFailed(events: StreamEvent[]): void {
  expectContiguous(events);
  expect(events.filter(isTerminalEvent).map((e) => e.type)).toEqual(["response.failed"]);
  expect(events.at(-1)!.type).toBe("response.failed");
}

beforeAll(async () => {
  redis = await startRedis();
  raw = new Redis(redis.url);
});
afterEach(async () => {
  await Promise.all(routers.splice(0).map((r) => r.close(300)));
  await Promise.all(upstreams.splice(0).map((u) => u.close()));
});
afterAll(async () => {
  raw?.disconnect();
  await redis?.stop();
});

describe("a finished background response is never overwritten by a late writer (two instances, one Redis)", () => {
  it("a job whose lease lapsed and was failed on B does not turn failed into completed when its run ends on A", async () => {
    const { up, prefix, created, finalWrite } = await lapsedJobOnA();
    // B's stalled checker gives the job back, B takes it, sees it had streamed and fails it.
    const b = await plainRouter(up.url, prefix);
    await until(async () => (await statusOn(b, created.id)) === "failed", "B to fail the re-delivered job", 15_000);

    // A's run ends now: its completed comes too late.
    finalWrite.release();
    await finalWrite.done;
    const after = await b.client.responses.retrieve(created.id);
    expect(after.status).toBe("failed");
    expect(after.error).toEqual({ code: "server_error", message: INSTANCE_LOST });

    // The log agrees with the stored object: one terminal event, response.failed, and nothing after it.
    expectEndsFailed(await recorded(b, created.id));
    expect(log.lines().some((l) => l.responseId === created.id && /already finished/.test(l.msg) && l.finished === "failed")).toBe(true);
  }, 30_000);

  it("the failed close-out's terminal event goes after an event the lapsed job on A recorded meanwhile: the log still ends with it", async () => {
    const { up, prefix, created, finalWrite } = await lapsedJobOnA();
    // B closes the re-delivered job out; its failed write waits at B's gate.
    const b = await gatedRouter(up.url, prefix, (status) => status === "failed");
    const closeOut = await until(() => b.held.find((w) => w.status === "failed"), "B's close-out write", 15_000);
    // Meanwhile A (still streaming, as far as it knows) records one more event: the sequence
    // number B read as next.
    const last = (await b.stores.events.read(created.id, -1)).at(-1)!;
    await b.stores.events.append(created.id, { type: "response.output_text.delta", sequence_number: last.sequence_number + 1, item_id: "msg_late", output_index: 0, content_index: 0, delta: "late", logprobs: [] });
    closeOut.release();
    await closeOut.done;
    finalWrite.release();
    await finalWrite.done;

    await until(async () => (await statusOn(b.router, created.id)) === "failed", "the response to be failed");
    const events = await recorded(b.router, created.id);
    expectEndsFailed(events);
    expect(events.at(-2)!.delta).toBe("late");
  }, 30_000);

  it("a cancel on B between A's read of the queued job and its in_progress write stays cancelled", async () => {
    log = captureLog("info");
    const up = await upstream();
    up.setDefault("/chat/completions", () => slowText(10));
    const prefix = uniquePrefix();
    // Every conditional write of A's job waits at the gate: first its in_progress.
    const a = await gatedRouter(up.url, prefix, () => true);
    const created = await a.router.client.responses.create({ model: "local", input: "hello", background: true });
    const started = await until(() => a.held.find((w) => w.status === "in_progress"), "A's in_progress write");

    const b = await plainRouter(up.url, prefix);
    const cancelled = await b.client.responses.cancel(created.id);
    expect(cancelled.status).toBe("cancelled");

    // A's in_progress write lands after the cancel: the response stays cancelled.
    started.release();
    await started.done;
    expect(await statusOn(b, created.id)).toBe("cancelled");
    // Let whatever else A's job writes through, until it has ended.
    await until(async () => {
      for (const w of a.held) w.release();
      return (await runningJobs(a.router)) === 0;
    }, "A's job to end");
    await Promise.all(a.held.map((w) => w.done));
    expect(await statusOn(b, created.id)).toBe("cancelled");
    const events = await recorded(b, created.id);
    expectContiguous(events);
    expect(events.filter(isTerminalEvent)).toHaveLength(1);
    expect((events.at(-1)!.response as { status: string }).status).toBe("cancelled");
    // The job never asked the upstream.
    expect(up.requests).toHaveLength(0);
    expect(log.lines().some((l) => l.responseId === created.id && /already finished/.test(l.msg) && l.finished === "cancelled")).toBe(true);
  }, 30_000);
});

/** The terminal events of a stream, and whether the last one ends it. */
function expectOneTerminalLast(events: StreamEvent[], status: string): void {
  const terminal = events.filter(isTerminalEvent);
  expect(terminal).toHaveLength(1);
  expect(events.at(-1)).toBe(terminal[0]);
  expect((terminal[0]!.response as { status: string }).status).toBe(status);
}

/**
 * Instances A and B on one prefix, each on stores `patch` changed first (a failover's effect,
 * played in order): whichever instance's worker takes the job, the patch is in its path.
 */
async function patchedPair(slowMs: number, patch: (stores: Stores) => void) {
  log = captureLog("info");
  const up = await upstream();
  up.setDefault("/chat/completions", () => slowText(slowMs));
  const prefix = uniquePrefix();
  const config = buildConfig({ ...redisConfig(up.url, prefix), server: { host: "127.0.0.1", port: 0, api_keys: [{ name: "team-a", key: "key-a" }] } });
  const instance = async () => {
    const stores = await createStores({ ...config.storage, jobs: config.background.lease }, log.logger);
    patch(stores);
    const r = await startTestRouter(redisConfig(up.url, prefix), { apiKey: "key-a", stores, logger: log.logger });
    routers.push(r);
    return { r, stores };
  };
  const [a, b] = [await instance(), await instance()];
  return { a: a.r, b: b.r, stores: a.stores };
}

describe("the event log agrees with the record: a final record's stream has exactly one terminal event, its last", () => {
  it("a final write stored but whose reply was lost (the retry finds it finished) still records the terminal event", async () => {
    let lost = 0;
    const { a, b, stores } = await patchedPair(10, (stores) => {
      // The completed write reaches Redis, then its reply is lost (as when the primary dies right after replicating it).
      const real = stores.responses.saveIfOpen.bind(stores.responses);
      stores.responses.saveIfOpen = async (rec) => {
        const out = await real(rec);
        if (rec.response.status === "completed" && lost === 0) {
          lost++;
          throw new StoreUnavailableError("responses.save: Connection is closed.");
        }
        return out;
      };
    });
    const created = await a.client.responses.create({ model: "local", input: "hello", background: true });
    await until(async () => (await statusOn(b, created.id)) === "completed", "the job to complete");
    expect(lost).toBe(1);
    await until(async () => (await stores.events.read(created.id, -1)).some(isTerminalEvent), "the terminal event to be recorded");
    // In the log itself, not only in what a re-stream derives.
    const logged = await stores.events.read(created.id, -1);
    expectContiguous(logged);
    expectOneTerminalLast(logged, "completed");
    for (const r of [a, b]) expectOneTerminalLast(await recorded(r, created.id), "completed");
  }, 30_000);

  it("a terminal event acknowledged and then lost: followers end with the record's, re-streams on both instances derive exactly one, and the log is repaired", async () => {
    let dropped = 0;
    const { a, b, stores } = await patchedPair(150, (stores) => {
      // A's terminal appends are answered "recorded" and never reach the log (a primary that died before its replica had them).
      const real = stores.events.appendIfExists.bind(stores.events);
      stores.events.appendIfExists = async (id, event) => (isTerminalEvent(event) && dropped === 0 ? ++dropped === 1 : real(id, event));
    });
    const created = await a.client.responses.create({ model: "local", input: "hello", background: true });
    // A follower on B from the start, one resuming mid-way on A.
    const following = recorded(b, created.id);
    await until(async () => (await stores.events.read(created.id, -1)).length >= 4, "the job to stream");
    const resuming = allEvents(await callRouter(a.url, "key-a")(`/v1/responses/${created.id}?stream=true&starting_after=2`));
    const [followed, resumed] = await Promise.all([following, resuming]);
    expect(dropped).toBe(1);
    expect(await statusOn(b, created.id)).toBe("completed");
    expectContiguous(followed);
    expectOneTerminalLast(followed, "completed");
    expectContiguous(resumed, 3);
    expectOneTerminalLast(resumed, "completed");
    // Re-streamed once finished, from both instances: one terminal event, the record's.
    for (const r of [a, b]) {
      const events = await recorded(r, created.id);
      expectContiguous(events);
      expectOneTerminalLast(events, "completed");
      expect((events.at(-1)!.response as { output: unknown[] }).output).toEqual((await r.client.responses.retrieve(created.id)).output);
    }
    // The re-stream repaired the log; a client resuming after the end gets nothing more.
    await until(async () => (await stores.events.read(created.id, -1)).some(isTerminalEvent), "the log to be repaired");
    const logged = await stores.events.read(created.id, -1);
    expectOneTerminalLast(logged, "completed");
    expect(await recorded(b, created.id)).toEqual(logged);
    expect(await allEvents(await callRouter(b.url, "key-a")(`/v1/responses/${created.id}?stream=true&starting_after=${logged.at(-1)!.sequence_number}`))).toEqual([]);
  }, 30_000);
});
