import { describe, expect, it } from "vitest";
import { buildConfig } from "../../src/config/load.js";
import { EndpointPool } from "../../src/routing/pool.js";

/** The pool is the one map of the endpoint set: what its owner attaches per endpoint follows reloads. */
const config = (endpoints: { name: string; port: number }[]) =>
  buildConfig({
    endpoints: endpoints.map(({ name, port }) => ({ name, url: `http://127.0.0.1:${port}/v1`, kind: "chat" })),
    models: { m: { endpoints: endpoints.map((e) => e.name) } },
  });

describe("EndpointPool attachment", () => {
  it("attaches on load, keeps or replaces on reload, detaches what is replaced or removed", () => {
    const log: string[] = [];
    let made = 0;
    const p = new EndpointPool<{ url: string; n: number }>(config([{ name: "a", port: 1 }, { name: "b", port: 2 }]), {}, {
      // Keep the attached value while the url is the same (like a client's transport).
      attach: (cfg, previous) => (previous && previous.url === cfg.url ? previous : { url: cfg.url, n: ++made }),
      detach: (old, name, removed) => log.push(`${name}#${old.n}:${removed ? "removed" : "replaced"}`),
    });
    expect([...p.all()].map((ep) => [ep.name, ep.attached.n])).toEqual([["a", 1], ["b", 2]]);
    const a = p.get("a")!;

    p.applyConfig(config([{ name: "a", port: 1 }, { name: "b", port: 9 }, { name: "c", port: 3 }]));
    expect(p.get("a")).toBe(a); // the same live endpoint ...
    expect(a.attached.n).toBe(1); // ... and the same attachment: its url did not change
    expect(p.get("b")!.attached).toEqual({ url: "http://127.0.0.1:9/v1", n: 3 });
    expect(p.get("c")!.attached.n).toBe(4);
    expect(log).toEqual(["b#2:replaced"]);

    p.applyConfig(config([{ name: "c", port: 3 }]));
    expect([...p.all()].map((ep) => ep.name)).toEqual(["c"]);
    expect(log).toEqual(["b#2:replaced", "a#1:removed", "b#3:removed"]);
    p.close();
  });

  it("without an attachment the pool works as before and attaches nothing", () => {
    const p = new EndpointPool(config([{ name: "a", port: 1 }]));
    expect(p.get("a")!.attached).toBeUndefined();
    p.close();
  });
});
