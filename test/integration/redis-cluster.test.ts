import { spawn } from "node:child_process";
import OpenAI from "openai";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { callRouter, cancelFromTheOtherInstance, until, writeConfigFile } from "../helpers/background.js";
import { startMockUpstream, type MockUpstream } from "../helpers/mock-upstream.js";
import { startRedisCluster, type RedisCluster } from "../helpers/redis-cluster.js";
import { startTestRouter, type TestRouter } from "../helpers/router.js";

/**
 * Router instances on a real Redis Cluster (3 primaries, 3 replicas on loopback): what one
 * instance stores the other reads, cancel reaches the instance running a job, and a primary
 * killed under load costs 503s with Retry-After while its replica is promoted, never an
 * acknowledged response, a 500 or a hang.
 */
const PASSWORD = "cluster-test-password-7d21e4";
let cluster: RedisCluster;
let prefixes = 0;
const routers: TestRouter[] = [];
const upstreams: MockUpstream[] = [];

function clusterConfig(upstreamUrl: string, prefix: string, storage: Record<string, unknown> = {}) {
  return {
    server: { api_keys: [{ name: "team-a", key: "key-a" }, { name: "ops", key: "key-ops", role: "admin" }] },
    endpoints: [{ name: "box", url: upstreamUrl, kind: "chat", max_concurrency: 16 }],
    models: { local: { endpoints: ["box"], upstream_model: "llama3.1:8b" } },
    routing: { queue_timeout: "500ms", retry: { attempts: 1, max_time: "5s" } },
    storage: { redis: { cluster: cluster.nodes.map((n) => `${n.host}:${n.port}`), password: PASSWORD }, prefix, ...storage },
    background: { concurrency: 2, cancel_wait: "3s", lease: { lock_duration: "3s", stalled_interval: "500ms", max_stalled_count: 1 } },
  };
}

async function upstream(): Promise<MockUpstream> {
  const u = await startMockUpstream();
  upstreams.push(u);
  return u;
}
async function router(upstreamUrl: string, prefix: string, storage?: Record<string, unknown>): Promise<TestRouter> {
  const r = await startTestRouter(clusterConfig(upstreamUrl, prefix, storage), { apiKey: "key-a" });
  routers.push(r);
  // The cluster client learns the slot map and checks cluster_state before it is ready: on a
  // loaded machine longer than the 500 ms a request waits for a store still connecting at start.
  await until(() => r.runtime.stores.status.connected, "the store to connect");
  return r;
}
const uniquePrefix = () => `rrclit:${process.pid}:${++prefixes}:`;

beforeAll(async () => {
  cluster = await startRedisCluster({ password: PASSWORD });
}, 60_000);
afterEach(async () => {
  await Promise.all(routers.splice(0).map((r) => r.close(200)));
  await Promise.all(upstreams.splice(0).map((u) => u.close()));
});
afterAll(async () => {
  await cluster?.stop();
});

describe("two router instances on a Redis Cluster", () => {
  it("a chain and a conversation made on one continue on the other; item references resolve across shards", async () => {
    const up = await upstream();
    const prefix = uniquePrefix();
    const [a, b] = [await router(up.url, prefix), await router(up.url, prefix)];
    let previous: string | undefined;
    for (let turn = 0; turn < 6; turn++) {
      const r = (turn % 2 ? b : a).client;
      previous = (await r.responses.create({ model: "local", input: `turn ${turn}`, previous_response_id: previous })).id;
    }
    const sent = up.requests.at(-1)!.body.messages.map((m: { content: string }) => m.content);
    expect(sent).toEqual(["turn 0", "Hello world", "turn 1", "Hello world", "turn 2", "Hello world", "turn 3", "Hello world", "turn 4", "Hello world", "turn 5"]);
    expect((await a.client.responses.inputItems.list(previous!, { limit: 100 })).data.length).toBe(11);

    const conv = await b.client.conversations.create({ items: [{ type: "message", role: "user", content: "remember 7" }] });
    await a.client.responses.create({ model: "local", input: "what number?", conversation: conv.id });
    await b.client.responses.create({ model: "local", input: "and again?", conversation: conv.id });
    const items = await a.client.conversations.items.list(conv.id);
    expect(items.data.length).toBe(5);
    // An item stored by one instance is found by id alone on the other (its index key is on another slot).
    const first = (await a.client.responses.create({ model: "local", input: "quote me" })) as OpenAI.Responses.Response;
    await b.client.responses.create({ model: "local", input: [{ type: "item_reference", id: first.output[0]!.id! }, { type: "message", role: "user", content: "again" }] as never });
    expect(up.requests.at(-1)!.body.messages.map((m: { content: string }) => m.content)).toEqual(["Hello world", "again"]);
  });

  it("a background job made on one is followed and cancelled from the other, whichever runs it", async () => {
    const [upA, upB] = [await upstream(), await upstream()];
    const prefix = uniquePrefix();
    await cancelFromTheOtherInstance(await router(upA.url, prefix), await router(upB.url, prefix), upA, upB);
  });

  it("/readyz, /health/backends and check --probe report the cluster's state, never its password", async () => {
    const up = await upstream();
    const r = await router(up.url, uniquePrefix());
    const ready = await r.fetch("/readyz");
    const text = await ready.text();
    expect(ready.status).toBe(200);
    expect(JSON.parse(text).store).toEqual({ kind: "redis", connected: true, cluster: { state: "ok", nodes: { total: 6, reachable: 6, primaries: 3 } } });
    expect(text).not.toContain(PASSWORD);
    const health = await r.fetch("/health/backends", { headers: { authorization: "Bearer key-ops" } });
    expect(((await health.json()) as { store: unknown }).store).toEqual({ kind: "redis", reachable: true, cluster: { state: "ok", nodes: { total: 6, reachable: 6, primaries: 3, failing: [] } } });

    up.setDefault("/models", { kind: "json", body: { object: "list", data: [{ id: "llama3.1:8b", object: "model" }] } });
    const file = writeConfigFile(clusterConfig(up.url, uniquePrefix()));
    const out = await new Promise<{ code: number | null; out: string }>((resolve) => {
      const p = spawn(process.execPath, ["--import", "tsx", "src/main.ts", "check", "--probe", "--config", file], { stdio: ["ignore", "pipe", "pipe"] });
      let text = "";
      p.stdout.on("data", (d) => (text += d));
      p.stderr.on("data", (d) => (text += d));
      p.once("exit", (code) => resolve({ code, out: text }));
    });
    expect(out.out).toMatch(/ok\s+store\s+Redis Cluster \(127\.0\.0\.1:\d+.*\): cluster_state ok, 6\/6 nodes reachable, 3 primaries/);
    expect(out.out).not.toContain(PASSWORD);
    expect(out.code).toBe(0);
  }, 60_000);
});

describe("a primary killed under load", () => {
  it("its replica is promoted; acknowledged responses and chains survive; the window answers 503 + Retry-After, never a 500 or a hang", async () => {
    await cluster.waitForReplicas();
    const up = await upstream();
    const prefix = uniquePrefix();
    // Every acknowledged write waits for the shard's replica: a SIGKILLed primary loses nothing acknowledged.
    const durable = { durability: "replica", durability_timeout: "2s" };
    const [a, b] = [await router(up.url, prefix, durable), await router(up.url, prefix, durable)];
    const calls = [callRouter(a.url, "key-a"), callRouter(b.url, "key-a")];

    const acked: string[] = [];
    const chains: { last?: string; turns: number }[] = Array.from({ length: 6 }, () => ({ turns: 0 }));
    const seen = { ok: 0, unavailable: 0, other: [] as string[] };
    let stop = false;
    let n = 0;
    const worker = async (chain: { last?: string; turns: number }) => {
      while (!stop) {
        const call = calls[n++ % 2]!;
        const body = { model: "local", input: `turn ${chain.turns}`, ...(chain.last ? { previous_response_id: chain.last } : {}) };
        let res: Response;
        try {
          res = await call("/v1/responses", { body, signal: AbortSignal.timeout(15_000) });
        } catch (err) {
          seen.other.push(`no answer: ${(err as Error).message}`);
          continue;
        }
        const json = (await res.json()) as { id?: string; error?: { code: string } };
        if (res.status === 200) {
          seen.ok++;
          acked.push(json.id!);
          chain.last = json.id;
          chain.turns++;
        } else if (res.status === 503 && json.error?.code === "store_unavailable" && res.headers.get("retry-after") === "1") {
          seen.unavailable++;
          await new Promise((r) => setTimeout(r, 100));
        } else seen.other.push(`${res.status} ${JSON.stringify(json)}`);
      }
    };
    const load = Promise.all(chains.map(worker));
    await until(() => seen.ok >= 30, "the load to be under way", 30_000);

    const [victim] = await cluster.primaryPorts();
    const anyKeyOnIt = `${prefix}resp:{probe}`;
    await cluster.kill(victim!);
    const promoted = await cluster.waitForNewPrimary(anyKeyOnIt, victim!, 45_000).catch(() => null);
    // Whichever slot the probe key hashes to, every slot must be served again.
    await cluster.waitForOk(45_000);
    expect(promoted === null || promoted !== victim).toBe(true);
    // Operators see the dead node; readiness does not take the instances out of service.
    await until(async () => {
      const res = await a.fetch("/health/backends", { headers: { authorization: "Bearer key-ops" } });
      const body = (await res.json()) as { store: { cluster?: { nodes: { failing: string[] } } } };
      return res.status === 503 && body.store.cluster?.nodes.failing.includes(`127.0.0.1:${victim}`);
    }, "/health/backends to name the dead node", 10_000);
    const ready = await a.fetch("/readyz");
    expect(ready.status).toBe(200);
    expect(((await ready.json()) as { store: { cluster: { nodes: { reachable: number } } } }).store.cluster.nodes.reachable).toBe(5);
    // With durability: replica the promoted primary needs a replica again: the killed one rejoins as one.
    await cluster.rejoin(victim!);
    await cluster.waitForReplicas(45_000);
    const okBefore = seen.ok;
    await until(() => seen.ok >= okBefore + 30, "stored requests to succeed again after the failover", 30_000);
    stop = true;
    await load;

    expect(seen.other).toEqual([]);
    expect(seen.unavailable).toBeGreaterThan(0);
    for (const id of acked) {
      expect((await a.client.responses.retrieve(id)).status).toBe("completed");
      expect((await b.client.responses.retrieve(id)).status).toBe("completed");
    }
    // Each chain holds every acknowledged turn, in order: turn n's input is n user turns and n-1 answers.
    for (const chain of chains) {
      if (!chain.last) continue;
      const items = await b.client.responses.inputItems.list(chain.last, { limit: 100, order: "asc" });
      expect(items.data.length).toBe(2 * chain.turns - 1);
    }
  }, 180_000);
});
