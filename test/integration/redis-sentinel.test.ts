import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { allEvents, callRouter, slowText, until } from "../helpers/background.js";
import { isTerminalEvent } from "../../src/store/types.js";
import { startMockUpstream, type MockUpstream } from "../helpers/mock-upstream.js";
import { startSentinelGroup, type SentinelGroup } from "../helpers/redis-sentinel.js";
import { startTestRouter, type TestRouter } from "../helpers/router.js";
import { chainTag } from "../../src/store/chain.js";
import { chainKeys } from "../../src/store/redis/chain-scripts.js";

/**
 * A real Sentinel deployment (primary, replica, three sentinels on loopback) under a running
 * router: the primary is killed and the router must follow the failover on its own.
 */
const PASSWORD = "sentinel-test-password-5f1c9a";
let group: SentinelGroup;
let prefixes = 0;
const routers: TestRouter[] = [];
const upstreams: MockUpstream[] = [];

function sentinelConfig(upstreamUrl: string, prefix: string) {
  return {
    server: { api_keys: [{ name: "team-a", key: "key-a" }, { name: "ops", key: "key-ops", role: "admin" }] },
    endpoints: [{ name: "box", url: upstreamUrl, kind: "chat", max_concurrency: 4 }],
    models: { local: { endpoints: ["box"], upstream_model: "llama3.1:8b" } },
    routing: { queue_timeout: "500ms", retry: { attempts: 1, max_time: "5s" } },
    storage: {
      redis: { sentinels: group.sentinels.map((s) => `${s.host}:${s.port}`), name: group.name, password: PASSWORD },
      durability: "replica",
      durability_timeout: "2s",
      prefix,
    },
    background: { concurrency: 2, cancel_wait: "3s", lease: { lock_duration: "3s", stalled_interval: "500ms", max_stalled_count: 1 } },
  };
}

async function setup(): Promise<{ up: MockUpstream; r: TestRouter; call: ReturnType<typeof callRouter> }> {
  // What a test writes must reach a replica in sync: one still resyncing after the last test's
  // failover would be promoted empty by this test's, a second failure rather than a failover.
  await group.waitForHealthy();
  const up = await startMockUpstream();
  upstreams.push(up);
  const r = await startTestRouter(sentinelConfig(up.url, `rrsent:${process.pid}:${++prefixes}:`), { apiKey: "key-a" });
  routers.push(r);
  return { up, r, call: callRouter(r.url, "key-a") };
}

/** Kills the primary, waits for the promotion, and brings the old primary back as a replica. */
async function failover(during?: () => Promise<void>): Promise<void> {
  const old = await group.killPrimary();
  await during?.();
  // An election the sentinels lose is tried again after twice the failover timeout (10 s here).
  await group.waitForNewPrimary(old, 45_000);
  // With storage.durability: replica a write needs a replica again: the old primary rejoins as one.
  await group.rejoin(old);
  await group.waitForHealthy();
}

beforeAll(async () => {
  group = await startSentinelGroup({ replicas: 1, sentinels: 3, downAfterMs: 2_000, failoverTimeoutMs: 5_000, password: PASSWORD });
}, 60_000);
afterEach(async () => {
  await Promise.all(routers.splice(0).map((r) => r.close(200)));
  await Promise.all(upstreams.splice(0).map((u) => u.close()));
});
afterAll(async () => {
  await group?.stop();
});

describe("Redis Sentinel", () => {
  it("across a primary failover: acknowledged responses survive, store requests get 503 store_unavailable + Retry-After, store:false never notices, no restart needed", async () => {
    const { r, call } = await setup();
    // A second instance on the same Sentinel group and prefix reads what the first acknowledged.
    const other = await startTestRouter(sentinelConfig(upstreams[0]!.url, r.config.storage.prefix), { apiKey: "key-a" });
    routers.push(other);
    const acked: string[] = [];
    for (let i = 0; i < 5; i++) acked.push((await r.client.responses.create({ model: "local", input: `before ${i}` })).id);
    const conv = await r.client.conversations.create({ items: [{ type: "message", role: "user", content: "remember 7" }] });
    await r.client.responses.create({ model: "local", input: "turn one", conversation: conv.id });

    const seen = { ok: 0, unavailable: 0, other: [] as string[] };
    let noStoreOk = 0;
    await failover(async () => {
      // The primary is gone and no replica is promoted yet: every stored request ends at once, in 503.
      for (let i = 0; i < 5; i++) {
        const res = await call("/v1/responses", { body: { model: "local", input: "during" } });
        const body = (await res.json()) as { id?: string; error?: { code: string; message: string } };
        if (res.status === 200) {
          seen.ok++;
          acked.push(body.id!);
        } else if (res.status === 503 && body.error?.code === "store_unavailable" && res.headers.get("retry-after") === "1") seen.unavailable++;
        else seen.other.push(`${res.status} ${JSON.stringify(body)}`);
        expect(JSON.stringify(body)).not.toContain(PASSWORD);
        const free = await call("/v1/responses", { body: { model: "local", input: "no store", store: false } });
        if (free.status === 200) noStoreOk++;
        await free.body?.cancel();
      }
    });
    expect(seen.other).toEqual([]);
    expect(seen.unavailable).toBeGreaterThan(0);
    expect(noStoreOk).toBe(5);

    // Recovers by itself: the same router instance stores again on the promoted primary.
    const after = await until(async () => {
      const res = await call("/v1/responses", { body: { model: "local", input: "after" } });
      return res.status === 200 ? ((await res.json()) as { id: string }).id : null;
    }, "stored requests to succeed after the failover", 20_000);
    for (const id of [...acked, after]) {
      expect((await r.client.responses.retrieve(id)).status).toBe("completed");
      expect((await other.client.responses.retrieve(id)).status).toBe("completed");
    }
    const items = await r.client.conversations.items.list(conv.id);
    expect(items.data.length).toBe(3);

    const backends = await fetch(`${r.url}/health/backends`, { headers: { authorization: "Bearer key-ops" } });
    const text = await backends.text();
    expect(text).not.toContain(PASSWORD);
    expect(JSON.parse(text).store).toEqual({ kind: "redis", reachable: true });
  }, 120_000);

  it("a background job running across a failover ends exactly once and stays retrievable", async () => {
    const { up, r } = await setup();
    up.setDefault("/chat/completions", slowText(300));
    const job = await r.client.responses.create({ model: "local", input: "long job", background: true });
    await until(async () => (await r.client.responses.retrieve(job.id)).status === "in_progress", "the job to start");
    await failover();
    let last = "";
    const done = await until(async () => {
      const got = await r.client.responses.retrieve(job.id).catch((e: Error) => ((last = e.message), null));
      if (got) last = got.status ?? "";
      return got && got.status !== "queued" && got.status !== "in_progress" ? got : null;
      // The job waits for the store (up to ~16 s) and the group for its old primary to rejoin as a
      // replica (one replica here): on a loaded machine (the whole suite on 2 cores) that took > 30 s.
    }, "the job to end", 75_000).catch(async (err: Error) => {
      const where = await group.describeKey(chainKeys(r.config.storage.prefix, chainTag(job.id)).hash);
      throw new Error(`${err.message}; last seen: ${last}; upstream calls: ${up.requests.length}; the record: ${where}`);
    });
    // It either finished or failed cleanly; the upstream was asked once (never run twice).
    expect(["completed", "failed"]).toContain(done.status);
    if (done.status === "failed") expect(done.error?.code).toBe("server_error");
    expect(up.requests.filter((q) => q.path.endsWith("/chat/completions")).length).toBe(1);
  }, 120_000);

  it("jobs finishing while their primary is killed: each re-streams with exactly one terminal event, its last and the record's, on both instances", async () => {
    const { up, r } = await setup();
    const other = await startTestRouter(sentinelConfig(up.url, r.config.storage.prefix), { apiKey: "key-a" });
    routers.push(other);
    // Staggered ends: the first job finishes at about the kill, the others while the primary is
    // gone and the group fails over (their final writes and terminal events ride the failover).
    let n = 0;
    up.setDefault("/chat/completions", () => slowText(40 + 25 * n++));
    const jobs: { id: string }[] = [];
    for (let i = 0; i < 6; i++) jobs.push(await (i % 2 ? other : r).client.responses.create({ model: "local", input: `job ${i}`, background: true }));
    await until(async () => (await r.client.responses.retrieve(jobs[0]!.id)).status === "completed", "the first job to complete", 20_000);
    await failover();
    const ended = new Map<string, string>();
    await until(async () => {
      for (const job of jobs) {
        if (ended.has(job.id)) continue;
        const got = await r.client.responses.retrieve(job.id).catch(() => null);
        if (got && got.status !== "queued" && got.status !== "in_progress") ended.set(job.id, got.status!);
      }
      return ended.size === jobs.length;
    }, "every job to end", 75_000);
    for (const job of jobs) {
      const status = ended.get(job.id)!;
      for (const router of [r, other]) {
        const events = await allEvents(await callRouter(router.url, "key-a")(`/v1/responses/${job.id}?stream=true`));
        const terminal = events.filter(isTerminalEvent);
        expect(terminal.map((e) => e.type), `${job.id} (${status})`).toHaveLength(1);
        expect(events.at(-1)).toBe(terminal[0]);
        expect((terminal[0]!.response as { status: string }).status).toBe(status);
      }
    }
  }, 150_000);
});
