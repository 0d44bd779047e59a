import { describe, expect, it } from "vitest";
import { buildConfig } from "../../src/config/load.js";
import { EndpointPool, type Lease } from "../../src/routing/pool.js";

/** The pool on its own: conversation affinity (the `prefer` option of acquire). */
function pool() {
  const cfg = buildConfig({
    endpoints: ["a", "b"].map((name) => ({ name, url: `http://127.0.0.1:1/v1`, kind: "chat", max_concurrency: 1 })),
    models: { m: { endpoints: ["a", "b"] }, other: { endpoints: ["b"] } },
    routing: { health: { failure_threshold: 1, cooldown: "1h" } },
  });
  const counted: string[] = [];
  const p = new EndpointPool(cfg, { onAffinity: (ep, hit) => counted.push(`${ep.name}:${hit ? "hit" : "miss"}`) });
  return { p, targets: cfg.targets.get("m")!, otherTargets: cfg.targets.get("other")!, counted };
}

const settled = () => new Promise((r) => setTimeout(r, 5));

describe("EndpointPool affinity", () => {
  it("takes the preferred endpoint while it is free and healthy, else least in-flight; counts hits and misses", async () => {
    const { p, targets, counted } = pool();
    const first = await p.acquire("m", targets, { queueTimeoutMs: 100, prefer: "b" });
    expect(first.endpoint.name).toBe("b"); // without a preference the first pick of two idle equals is "a"
    const second = await p.acquire("m", targets, { queueTimeoutMs: 100, prefer: "b" });
    expect(second.endpoint.name).toBe("a"); // b is full
    first.release();
    second.release();
    p.get("b")!.health.recordFailure("down");
    const third = await p.acquire("m", targets, { queueTimeoutMs: 100, prefer: "b" });
    expect(third.endpoint.name).toBe("a"); // b is cooling down
    third.release();
    expect(counted).toEqual(["b:hit", "b:miss", "b:miss"]);
    p.close();
  });

  it("ignores (and does not count) a preference outside the model's pool or already tried", async () => {
    const { p, targets, otherTargets, counted } = pool();
    const l1 = await p.acquire("other", otherTargets, { queueTimeoutMs: 100, prefer: "a" });
    expect(l1.endpoint.name).toBe("b");
    l1.release();
    const l2 = await p.acquire("m", targets, { queueTimeoutMs: 100, prefer: "gone" });
    l2.release();
    expect(counted).toEqual([]);
    p.close();
  });

  it("a freed slot goes first to a waiter whose previous turn ran there, then first come first served", async () => {
    const { p, targets, counted } = pool();
    const onA = await p.acquire("m", targets, { queueTimeoutMs: 1000 });
    const onB = await p.acquire("m", targets, { queueTimeoutMs: 1000 });
    expect([onA.endpoint.name, onB.endpoint.name]).toEqual(["a", "b"]);
    const order: string[] = [];
    const wait = (name: string, prefer?: string) => p.acquire("m", targets, { queueTimeoutMs: 1000, prefer }).then((l) => (order.push(`${name}@${l.endpoint.name}`), l));
    const plain = wait("plain");
    const wantsB = wait("wantsB", "b");
    await settled();
    onA.release(); // a frees: nobody prefers it, so the first waiter takes it
    const l1 = await plain;
    onB.release(); // b frees: the waiter that prefers it
    const l2 = await wantsB;
    expect(order).toEqual(["plain@a", "wantsB@b"]);

    // Now the queue: first a plain waiter, then one preferring a. When a frees, the one preferring it jumps ahead.
    const plain2 = wait("plain2");
    const wantsA = wait("wantsA", "a");
    await settled();
    l1.release();
    await wantsA;
    expect(order.at(-1)).toBe("wantsA@a");
    l2.release();
    await plain2;
    expect(order.at(-1)).toBe("plain2@b");
    expect(counted).toEqual(["b:hit", "a:hit"]);
    p.close();
  });

  it("passes over an earlier waiter at most a bounded number of times", async () => {
    const { p, targets } = pool();
    const held: Lease[] = [await p.acquire("m", targets, { queueTimeoutMs: 5000 }), await p.acquire("m", targets, { queueTimeoutMs: 5000 })];
    let plainServed = -1;
    const plain = p.acquire("m", targets, { queueTimeoutMs: 5000 });
    void plain.then(() => (plainServed = served));
    let served = 0;
    // A stream of waiters that all prefer "a": each freed slot on a could go to one of them.
    const preferring = Array.from({ length: 40 }, () => p.acquire("m", targets, { queueTimeoutMs: 5000, prefer: "a" }));
    await settled();
    let lease = held[0]!; // the slot on a
    for (let i = 0; i < 40 && plainServed === -1; i++) {
      lease.release();
      served++;
      await settled();
      lease = plainServed === -1 ? await preferring[i]! : (await plain);
    }
    expect(plainServed).toBeGreaterThan(1);
    expect(plainServed).toBeLessThanOrEqual(5); // MAX_OVERTAKES (4) passes, then its turn
    lease.release();
    held[1]!.release();
    await Promise.all(preferring.map((w) => w.then((l) => l.release(), () => {})));
    p.close();
  });
});
