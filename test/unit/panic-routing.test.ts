import { describe, expect, it } from "vitest";
import { buildConfig } from "../../src/config/load.js";
import { EndpointPool } from "../../src/routing/pool.js";

/** The pool on its own: panic routing when every untried endpoint is ejected. */
function pool() {
  const cfg = buildConfig({
    endpoints: ["a", "b", "c"].map((name) => ({ name, url: `http://127.0.0.1:1/v1`, kind: "chat", max_concurrency: 1 })),
    models: { m: { endpoints: ["a", "b", "c"] } },
    routing: { health: { failure_threshold: 1, cooldown: "1h" } },
  });
  const panics: string[] = [];
  const p = new EndpointPool(cfg, { onPanicRoute: (_m, ep) => panics.push(ep.name) });
  return { p, targets: cfg.targets.get("m")!, panics };
}

describe("EndpointPool panic routing", () => {
  it("routes to the least recently failed ejected endpoint instead of answering 503; healthy ones win while any is left", async () => {
    const { p, targets, panics } = pool();
    p.get("b")!.health.recordFailure("x");
    await new Promise((r) => setTimeout(r, 2));
    p.get("a")!.health.recordFailure("x");
    await new Promise((r) => setTimeout(r, 2));
    p.get("c")!.health.recordFailure("x");
    const got: string[] = [];
    for (let i = 0; i < 3; i++) {
      const lease = await p.acquire("m", targets, { queueTimeoutMs: 100 });
      expect(lease.panic).toBe(true);
      got.push(lease.endpoint.name); // each holds its only slot, so the next goes to the next oldest failure
    }
    expect(got).toEqual(["b", "a", "c"]);
    expect(panics).toEqual(["b", "a", "c"]);
    p.close();
  });

  it("skips endpoints this request already tried; 503 no_healthy_endpoint only when none is left", async () => {
    const { p, targets } = pool();
    for (const n of ["a", "b", "c"]) p.get(n)!.health.recordFailure("x");
    const lease = await p.acquire("m", targets, { exclude: new Set(["a", "b"]), queueTimeoutMs: 100 });
    expect(lease.endpoint.name).toBe("c");
    lease.release();
    await expect(p.acquire("m", targets, { exclude: new Set(["a", "b", "c"]), queueTimeoutMs: 100 })).rejects.toMatchObject({ status: 503, code: "no_healthy_endpoint" });
    p.close();
  });

  it("no panic while one endpoint is healthy", async () => {
    const { p, targets, panics } = pool();
    p.get("a")!.health.recordFailure("x");
    p.get("b")!.health.recordFailure("x");
    const lease = await p.acquire("m", targets, { queueTimeoutMs: 100 });
    expect(lease.endpoint.name).toBe("c");
    expect(lease.panic).toBe(false);
    expect(panics).toEqual([]);
    p.close();
  });
});
