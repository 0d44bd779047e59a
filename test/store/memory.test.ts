import { describe, expect, it } from "vitest";
import { createStores, jobAbortKind, MemoryResponseCache, MemoryResponseStore, type StorageConfig } from "../../src/store/index.js";
import { MemoryEventLog } from "../../src/store/memory/events.js";
import type { StreamEvent } from "../../src/wire/types.js";
import { aborted, describeStoreContract, makeRecord, makeResponse, newId, waitFor } from "./contract.js";

const config = (ttl = 60_000, memory = { max_entries: 10_000, max_bytes: 64 * 1024 * 1024 }): StorageConfig => ({
  redis_url: "",
  prefix: "rr:",
  ttl,
  memory,
});

describeStoreContract("memory", async (opts) => await createStores(config(opts?.ttlMs)));

describe("memory store specifics", () => {
  it("createStores picks memory without a redis_url and reports connected", async () => {
    const stores = await createStores(config());
    expect(stores.kind).toBe("memory");
    expect(stores.status.connected).toBe(true);
  });

  it("evicts the least recently used record beyond max_entries; get() refreshes recency", async () => {
    const store = new MemoryResponseStore({ maxEntries: 3, maxBytes: 1e9, ttlMs: 60_000 });
    const [a, b, c, d, e] = ["resp_a", "resp_b", "resp_c", "resp_d", "resp_e"];
    for (const id of [a, b, c]) await store.save(makeRecord(id));
    expect(await store.get(a)).not.toBeNull(); // a is now the most recent
    await store.save(makeRecord(d));
    expect(await store.get(b)).toBeNull();
    expect(store.size).toBe(3);
    await store.save(makeRecord(a, "replaced")); // replacing refreshes too
    await store.save(makeRecord(e));
    expect(await store.get(c)).toBeNull();
    expect((await store.get(a))?.input[0].content).toBe("replaced");
    expect(await store.get(d)).not.toBeNull();
    expect(await store.get(e)).not.toBeNull();
  });

  it("evicts by the bytes it holds (the JSON of each part, once)", async () => {
    const probe = new MemoryResponseStore({ maxEntries: 10, maxBytes: 1e9, ttlMs: 60_000 });
    await probe.save(makeRecord("resp_0", "y".repeat(1_000)));
    const one = probe.bytes;
    expect(one).toBeGreaterThan(1_000);
    expect(one).toBeLessThan(JSON.stringify(makeRecord("resp_0", "y".repeat(1_000))).length + 100);
    const store = new MemoryResponseStore({ maxEntries: 1_000, maxBytes: one * 3 + 10, ttlMs: 60_000 });
    for (let i = 0; i < 5; i++) await store.save(makeRecord(`resp_${i}`, "y".repeat(1_000)));
    expect(store.size).toBe(3);
    expect(store.bytes).toBeLessThanOrEqual(one * 3 + 10);
    expect(await store.get("resp_0")).toBeNull();
    expect(await store.get("resp_1")).toBeNull();
    expect(await store.get("resp_4")).not.toBeNull();
    // A record bigger than the whole budget is kept alone rather than refused.
    await store.save(makeRecord("resp_big", "z".repeat(one * 4)));
    expect(store.size).toBe(1);
    expect(await store.get("resp_big")).not.toBeNull();
    expect(await store.delete("resp_big")).toBe(true);
    expect(store.bytes).toBe(0);
  });

  it("expires by an injected clock without sleeping", async () => {
    let now = 1_000;
    const store = new MemoryResponseStore({ maxEntries: 10, maxBytes: 1e9, ttlMs: 500, now: () => now });
    await store.save(makeRecord("resp_t"));
    now += 499;
    expect(await store.get("resp_t")).not.toBeNull();
    now += 1;
    expect(await store.get("resp_t")).toBeNull();
    expect(await store.delete("resp_t")).toBe(false);
  });

  it("keeps at most max_entries event logs, dropping the oldest created first (never the one just written)", async () => {
    const log = new MemoryEventLog({ maxEntries: 3, maxBytes: 1e9, ttlMs: 60_000 });
    const ev = (seq: number) => ({ type: "response.output_text.delta", sequence_number: seq }) as unknown as StreamEvent;
    for (const id of ["a", "b", "c"]) await log.append(id, ev(0));
    await log.append("a", ev(1)); // more events: a log keeps its place (creation order)
    await log.append("d", ev(0)); // a goes
    expect((await log.read("a", -1)).length).toBe(0);
    await log.delete("c");
    await log.append("e", ev(0)); // back to 3: nothing goes
    expect(await Promise.all(["b", "d", "e"].map(async (id) => (await log.read(id, -1)).length))).toEqual([1, 1, 1]);
    await log.append("f", ev(0)); // b goes
    expect((await log.read("b", -1)).length).toBe(0);
    expect((await log.read("f", -1)).length).toBe(1);
    const tiny = new MemoryEventLog({ maxEntries: 10, maxBytes: 10, ttlMs: 60_000 });
    await tiny.append("big", ev(0)); // alone over max_bytes: kept
    expect((await tiny.read("big", -1)).length).toBe(1);
  });

  it("bounds the cache by entries and bytes", async () => {
    const cache = new MemoryResponseCache({ maxEntries: 2, maxBytes: 1e9 });
    for (const k of ["a", "b", "c"]) await cache.set(k, { response: makeResponse(`resp_${k}`) }, 60_000);
    expect(cache.size).toBe(2);
    expect(await cache.get("a")).toBeNull();
    const small = new MemoryResponseCache({ maxEntries: 100, maxBytes: JSON.stringify({ response: makeResponse("resp_x") }).length * 2 });
    for (const k of ["a", "b", "c", "d"]) await small.set(k, { response: makeResponse(`resp_${k}`) }, 60_000);
    expect(small.size).toBe(2);
    expect(await small.get("d")).not.toBeNull();
  });

  it("close() waits for running jobs, then aborts them as 'shutdown' and drops queued ones (reported as abandoned)", async () => {
    const stores = await createStores(config());
    const [a, b] = [newId(), newId()];
    const ran: string[] = [];
    const abandoned: string[] = [];
    let kind: string | null = null;
    stores.jobs.start(
      async (job, signal) => {
        ran.push(job.responseId);
        await aborted(signal);
        kind = jobAbortKind(signal);
      },
      1,
      { onAbandoned: (id) => void abandoned.push(id) },
    );
    await stores.jobs.enqueue({ responseId: a, payload: null });
    await stores.jobs.enqueue({ responseId: b, payload: null });
    await waitFor(() => ran.length === 1);
    const started = Date.now();
    await stores.jobs.close(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    expect(kind).toBe("shutdown");
    expect(ran).toEqual([a]);
    expect(abandoned).toEqual([b]);
    await expect(stores.jobs.enqueue({ responseId: newId(), payload: null })).rejects.toThrow(/shutting down/);
    await stores.close();
  });

  it("close() returns as soon as running jobs finish", async () => {
    const stores = await createStores(config());
    let finished = false;
    stores.jobs.start(async () => {
      await new Promise((r) => setTimeout(r, 50));
      finished = true;
    }, 1);
    await stores.jobs.enqueue({ responseId: newId(), payload: null });
    await new Promise((r) => setTimeout(r, 10));
    const started = Date.now();
    await stores.close();
    expect(finished).toBe(true);
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
