import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createStores, jobAbortKind, StoreUnavailableError, type JobContext, type StorageConfig, type Stores } from "../../src/store/index.js";
import type { RedisJobQueue } from "../../src/store/redis/jobs.js";
import { startRedis, type RedisServerHandle } from "../helpers/redis-server.js";
import { aborted, collect, describeStoreContract, ev, makeRecord, newId, sleep, waitFor } from "./contract.js";
import { storedKey } from "./keys-contract.js";

let redis: RedisServerHandle;
let prefixes = 0;
const uniquePrefix = () => `rrtest:${process.pid}:${++prefixes}:`;

beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

const FAST_JOBS = { lock_duration: 1_000, stalled_interval: 300, max_stalled_count: 1 };
const config = (url: string, prefix: string, ttl = 60_000): StorageConfig => ({
  redis_url: url,
  prefix,
  ttl,
  memory: { max_entries: 100, max_bytes: 1_000_000 },
  jobs: FAST_JOBS,
});

// The limiter's own count when Redis is slow is tested on its own (redis-local-limits): here Redis's count, however loaded the machine.
describeStoreContract("redis", async (opts) => {
  const stores = await createStores(config(redis.url, uniquePrefix(), opts?.ttlMs), undefined, { limiterLocalAfterMs: 10_000 });
  expect(await stores.responses.ping()).toBe(true);
  return stores;
});

describe("redis store specifics", () => {
  const opened: Stores[] = [];
  const children: ChildProcess[] = [];
  const open = async (prefix: string, url = redis.url) => {
    const s = await createStores(config(url, prefix));
    opened.push(s);
    return s;
  };
  const ready = (s: Stores) => (s.jobs as RedisJobQueue).waitUntilReady();
  afterEach(async () => {
    for (const c of children.splice(0)) c.kill("SIGKILL");
    await Promise.all(opened.splice(0).map((s) => s.close()));
  });

  /** Spawns a worker process (test/store/fixtures/stall-worker.ts) and resolves with its first "started" line. */
  function spawnStallWorker(prefix: string): { child: ChildProcess; started: Promise<string> } {
    const script = fileURLToPath(new URL("./fixtures/stall-worker.ts", import.meta.url));
    const child = spawn(process.execPath, ["--import", "tsx", script, redis.url, prefix], { stdio: ["ignore", "pipe", "pipe"] });
    children.push(child);
    let out = "";
    let err = "";
    child.stderr!.on("data", (d) => (err += d));
    const started = new Promise<string>((resolve, reject) => {
      child.stdout!.on("data", (d) => {
        out += d;
        const line = out.split("\n").find((l) => l.startsWith("started "));
        if (line) resolve(line);
      });
      child.on("exit", (code) => reject(new Error(`stall worker exited (${code}) before starting a job: ${err}`)));
    });
    return { child, started };
  }

  it("startRedis fails with a clear message when redis-server is not on PATH", async () => {
    const path = process.env.PATH;
    process.env.PATH = "/nonexistent";
    try {
      await expect(startRedis()).rejects.toThrow(/redis-server is not on PATH/);
    } finally {
      process.env.PATH = path;
    }
  });

  it("createStores picks Redis when redis_url is set and reports connected", async () => {
    const s = await open(uniquePrefix());
    expect(s.kind).toBe("redis");
    expect(await s.responses.ping()).toBe(true);
    expect(s.status.connected).toBe(true);
  });

  it("two instances on one Redis see each other's records, events and cache", async () => {
    const prefix = uniquePrefix();
    const a = await open(prefix);
    const b = await open(prefix);
    const id = newId();
    await a.responses.save(makeRecord(id));
    expect(await b.responses.get(id)).toEqual(makeRecord(id));
    await a.cache.set("shared", { response: makeRecord(id).response }, 10_000);
    expect((await b.cache.get("shared"))?.response.id).toBe(id);

    const following = collect(b.events.follow(id, -1, new AbortController().signal));
    await sleep(100);
    await a.events.append(id, ev(0, "response.created"));
    await a.events.append(id, ev(1));
    await a.events.append(id, ev(2, "response.completed", { response: { id, status: "completed" } }));
    expect((await following).map((e) => e.sequence_number)).toEqual([0, 1, 2]);
    // Another prefix is another world.
    expect(await (await open(uniquePrefix())).responses.get(id)).toBeNull();
  });

  it("a job enqueued on one instance runs on another, and is cancelled from the first", async () => {
    const prefix = uniquePrefix();
    const a = await open(prefix);
    const b = await open(prefix);
    let signal: AbortSignal | null = null;
    let ctx: JobContext | null = null;
    b.jobs.start(async (job, s) => {
      ctx = job;
      signal = s;
      await aborted(s);
    }, 1);
    await ready(b);
    const id = newId();
    await a.jobs.enqueue({ responseId: id, payload: { model: "m" } });
    await waitFor(() => signal !== null, 5_000, "job on b");
    expect(ctx).toMatchObject({ responseId: id, payload: { model: "m" }, attempt: 1, redelivered: false });
    const t = Date.now();
    await a.jobs.cancel(id);
    await waitFor(() => signal!.aborted, 2_000, "cancel across instances");
    expect(Date.now() - t).toBeLessThan(1_000);
    expect(jobAbortKind(signal!)).toBe("cancelled");
  });

  it("a job queued behind another and cancelled from another instance never runs", async () => {
    const prefix = uniquePrefix();
    const a = await open(prefix);
    const b = await open(prefix);
    const [first, second, third] = [newId(), newId(), newId()];
    const ran: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    b.jobs.start(async (job) => {
      ran.push(job.responseId);
      if (job.responseId === first) await gate;
    }, 1);
    await a.jobs.enqueue({ responseId: first, payload: null });
    await waitFor(() => ran.length === 1, 5_000, "first job");
    await a.jobs.enqueue({ responseId: second, payload: null });
    await a.jobs.enqueue({ responseId: third, payload: null });
    await a.jobs.cancel(second);
    release();
    await waitFor(() => ran.includes(third), 5_000, "third job");
    expect(ran).toEqual([first, third]);
  });

  it("close() hands unfinished jobs back; another instance gets them as re-deliveries", async () => {
    const prefix = uniquePrefix();
    const a = await open(prefix);
    const id = newId();
    let kind: string | null = null;
    let startedOnA = false;
    a.jobs.start(async (_job, signal) => {
      startedOnA = true;
      await aborted(signal);
      kind = jobAbortKind(signal);
    }, 1);
    await a.jobs.enqueue({ responseId: id, payload: "p" });
    await waitFor(() => startedOnA, 5_000, "job on a");
    await a.jobs.close(200);
    expect(kind).toBe("handed_back");

    const b = await open(prefix);
    const seen: JobContext[] = [];
    b.jobs.start(async (job) => void seen.push(job), 1);
    await waitFor(() => seen.length === 1, 5_000, "re-delivery to b");
    expect(seen[0]).toMatchObject({ responseId: id, payload: "p", attempt: 2, redelivered: true, stalls: 0 });
  });

  it("a job whose worker process died is re-delivered once the lease expires", async () => {
    const prefix = uniquePrefix();
    const main = await open(prefix);
    const id = newId();
    await main.jobs.enqueue({ responseId: id, payload: null });
    const dead = spawnStallWorker(prefix);
    expect(await dead.started).toBe(`started ${id} 1 false`);
    dead.child.kill("SIGKILL");

    const decided: JobContext[] = [];
    const ran: JobContext[] = [];
    main.jobs.start(async (job) => void ran.push(job), 1, {
      onRedelivered: async (job) => {
        decided.push(job);
        return "run";
      },
    });
    await waitFor(() => ran.length === 1, 8_000, "re-delivery");
    expect(decided).toHaveLength(1);
    expect(ran[0]).toMatchObject({ responseId: id, attempt: 2, redelivered: true, stalls: 1 });
  });

  it("a job whose lease lapsed while it still runs here (Redis failing over) is not started a second time", async () => {
    const prefix = uniquePrefix();
    const s = await open(prefix);
    const id = newId();
    const runs: JobContext[] = [];
    const redelivered: JobContext[] = [];
    let finish!: () => void;
    const held = new Promise<void>((r) => (finish = r));
    s.jobs.start(
      async (job) => {
        runs.push(job);
        await held;
      },
      2,
      {
        onRedelivered: async (job) => {
          redelivered.push(job);
          return "run";
        },
      },
    );
    await s.jobs.enqueue({ responseId: id, payload: null });
    await waitFor(() => runs.length === 1, 5_000, "the job to start");
    // What a failover does to a lease: the lock key is gone while the run goes on, and the
    // stalled checker gives the job back to the queue; this instance's worker fetches it again.
    const { Redis } = await import("ioredis");
    const admin = new Redis(redis.url);
    try {
      expect(await admin.del(`${prefix}bull:background:${id}:lock`)).toBe(1);
      // The stalled checker counts the lapse on the job (stc) and the worker fetches it again.
      await waitFor(async () => Number(await admin.hget(`${prefix}bull:background:${id}`, "stc")) > 0, 5_000, "the job to be given back");
      await waitFor(async () => (await s.jobs.waitingCount()) === 0, 5_000, "the job to be fetched again");
      await sleep(300);
      expect(runs).toHaveLength(1);
      finish();
      // The job ends once, and leaves the queue.
      await waitFor(async () => (await s.jobs.waitingCount()) === 0 && (await admin.exists(`${prefix}bull:background:${id}`)) === 0, 5_000, "the job to leave the queue");
      expect(runs).toHaveLength(1);
    } finally {
      finish();
      admin.disconnect();
    }
  });

  it("a job that stalls twice is failed and reported once through onAbandoned", async () => {
    const prefix = uniquePrefix();
    const main = await open(prefix);
    const other = await open(prefix);
    const id = newId();
    await main.jobs.enqueue({ responseId: id, payload: null });
    const first = spawnStallWorker(prefix);
    expect(await first.started).toBe(`started ${id} 1 false`);
    first.child.kill("SIGKILL");
    const second = spawnStallWorker(prefix);
    expect(await second.started).toBe(`started ${id} 2 true`);
    second.child.kill("SIGKILL");

    const abandoned: string[] = [];
    const ran: string[] = [];
    for (const s of [main, other]) {
      s.jobs.start(async (job) => void ran.push(job.responseId), 1, { onAbandoned: (rid, reason) => void abandoned.push(`${rid}: ${reason}`) });
    }
    await Promise.all([ready(main), ready(other)]);
    await waitFor(() => abandoned.length > 0, 8_000, "abandon report");
    await sleep(300);
    expect(abandoned).toHaveLength(1);
    expect(abandoned[0]).toContain(id);
    expect(ran).toEqual([]);
  });

  it("a hung Redis (no replies) makes store calls time out with StoreUnavailableError", async () => {
    const own = await startRedis();
    try {
      const s = await open(uniquePrefix(), own.url);
      const id = newId();
      await s.responses.save(makeRecord(id));
      own.pause();
      const t = Date.now();
      await expect(s.responses.get(id)).rejects.toBeInstanceOf(StoreUnavailableError);
      expect(Date.now() - t).toBeLessThan(2_000);
      expect(await s.cache.get("k")).toBeNull();
      own.resume();
      await waitFor(async () => (await s.responses.get(id).catch(() => null)) !== null, 5_000, "recovery");
    } finally {
      own.resume();
      await own.stop();
    }
  });

  it("a dead Redis makes store calls fail fast and the cache miss; it recovers after a restart", async () => {
    const own = await startRedis();
    try {
      const cacheErrors: string[] = [];
      const s = await createStores(config(own.url, uniquePrefix()), undefined, { onCacheError: (op) => cacheErrors.push(op) });
      opened.push(s);
      const id = newId();
      await s.responses.save(makeRecord(id));
      const transitions: boolean[] = [];
      s.status.onStatusChange((c) => transitions.push(c));
      await s.cache.set("k", { response: makeRecord(id).response }, 60_000);

      await own.stop();
      await waitFor(() => !s.status.connected, 2_000, "disconnect noticed");
      for (const call of [() => s.responses.get(id), () => s.responses.save(makeRecord(id)), () => s.events.read(id, -1), () => s.jobs.enqueue({ responseId: id, payload: null })]) {
        const t = Date.now();
        await expect(call()).rejects.toBeInstanceOf(StoreUnavailableError);
        expect(Date.now() - t).toBeLessThan(2_000);
      }
      expect(await s.cache.get("k")).toBeNull();
      await s.cache.set("k2", { response: makeRecord(id).response }, 60_000);
      expect(cacheErrors).toEqual(["get", "set"]);
      expect(await s.responses.ping()).toBe(false);

      await own.restart();
      await waitFor(() => s.status.connected, 5_000, "reconnect");
      expect(transitions).toEqual([false, true]);
      const id2 = newId();
      await s.responses.save(makeRecord(id2));
      expect(await s.responses.get(id2)).toEqual(makeRecord(id2));
      expect(await s.responses.ping()).toBe(true);
    } finally {
      await own.stop();
    }
  });
});

describe("redis: recorded events expire before the responses they belong to", () => {
  it("uses storage.events_ttl for the event stream key and ttl for the response", async () => {
    const prefix = uniquePrefix();
    const stores = await createStores({ ...config(redis.url, prefix, 600_000), events_ttl: 5_000 });
    const { default: Redis } = await import("ioredis");
    const raw = new Redis(redis.url);
    try {
      const rec = makeRecord(newId());
      await stores.responses.save(rec);
      await stores.events.append(rec.response.id, ev(0, "response.created"));
      const keys = await raw.keys(`${prefix}*`);
      const ttlOf = async (part: string) => raw.pttl(keys.find((k) => k.includes(part))!);
      expect(await ttlOf("events:")).toBeLessThanOrEqual(5_000);
      expect(await ttlOf("events:")).toBeGreaterThan(0);
      expect(await ttlOf("chain:")).toBeGreaterThan(500_000);
    } finally {
      raw.disconnect();
      await stores.close();
    }
  });
});

describe("redis: made keys are shared by every instance", () => {
  it("a key made through one instance's stores is seen and watched by another's, hashed only", async () => {
    const prefix = uniquePrefix();
    const [a, b] = [await createStores(config(redis.url, prefix)), await createStores(config(redis.url, prefix))];
    const { default: Redis } = await import("ioredis");
    const raw = new Redis(redis.url);
    try {
      let told = 0;
      b.keys.watch(() => told++);
      await new Promise((r) => setTimeout(r, 100));
      const key = storedKey("shared", { hash: "f".repeat(64) });
      expect(await a.keys.create(key)).toBe("created");
      expect(await b.keys.get(key.id)).toEqual(key);
      expect(await b.keys.create(storedKey("shared"))).toBe("name_taken");
      await expect.poll(() => told).toBe(1);
      expect(await b.keys.version()).toBe(await a.keys.version());
      // Every key lives under one hash tag (one Cluster slot); the record holds the digest, no secret field.
      expect((await raw.keys(`${prefix}*keys*`)).sort()).toEqual(["names", "records", "version"].map((n) => `${prefix}{keys}:${n}`));
      expect(Object.keys(JSON.parse((await raw.hget(`${prefix}{keys}:records`, key.id))!)).sort()).toEqual(["created_at", "expires_at", "hash", "id", "metadata", "name", "redacted_value", "role"]);
      await a.keys.revoke(key.id);
      await expect.poll(() => told).toBe(2);
      expect(await b.keys.list()).toEqual([]);
    } finally {
      raw.disconnect();
      await Promise.all([a.close(), b.close()]);
    }
  });
});
