import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildConfig } from "../../src/config/load.js";
import { createLogger } from "../../src/ops/log.js";
import { createMetrics } from "../../src/ops/metrics.js";
import { fallbackSteps } from "../../src/runtime/models.js";
import { Runtime } from "../../src/runtime/runtime.js";
import { createStores } from "../../src/store/index.js";
import { UpstreamAttempt } from "../../src/upstream/attempt.js";
import { UpstreamFailure } from "../../src/upstream/errors.js";
import { midStreamCause, midStreamError } from "../../src/upstream/mid-stream.js";
import { startMockUpstream, type MockUpstream } from "../helpers/mock-upstream.js";
import { metricSample } from "../helpers/metrics-text.js";
import { deadUrl, poolConfig } from "../helpers/pool-config.js";

/** The one upstream-attempt lifecycle both route families use (src/upstream/attempt.ts), over a real runtime and upstream. */
describe("UpstreamAttempt", () => {
  let up: MockUpstream;
  let rt: Runtime;
  beforeAll(async () => {
    up = await startMockUpstream();
    const config = buildConfig(poolConfig([up.url], { routing: { health: { failure_threshold: 1, cooldown: "60s" } } }));
    rt = new Runtime(config, await createStores(config.storage), createMetrics(), createLogger("silent"));
  });
  afterAll(async () => {
    await rt.close();
    await up.close();
  });

  const durations = async (outcome: string) =>
    metricSample(await rt.metrics.registry.metrics(), "responses_router_upstream_duration_seconds_count", { upstream: "a", outcome }) ?? 0;
  const open = () => {
    const cfg = rt.config;
    return UpstreamAttempt.open(rt, {
      model: "m",
      steps: fallbackSteps(cfg, "m", cfg.models.m!, cfg.targets.get("m")!),
      routing: cfg.routing,
      signal: AbortSignal.timeout(10_000),
      prepare: (lease) => ({ path: "/chat/completions", body: JSON.stringify({ model: lease.target.upstreamModel }) }),
    });
  };

  it("holds one slot until end, and end frees it and counts the duration exactly once", async () => {
    up.enqueue("/chat/completions", { kind: "json", body: { ok: true } });
    const attempt = await open();
    const ep = rt.pool.get("a")!;
    expect(ep.inFlight).toBe(1);
    expect((await attempt.readJson()).json).toEqual({ ok: true });
    const before = await durations("ok");
    attempt.end(true);
    attempt.end(false);
    attempt.end(true);
    expect(ep.inFlight).toBe(0);
    expect(await durations("ok")).toBe(before + 1);
    expect(await durations("error")).toBe(0);
  });

  it("sends the prepared body, then lets go of it: undici holds its own copy while the call runs", async () => {
    up.enqueue("/chat/completions", { kind: "json", body: { ok: true } });
    const before = up.requests.length;
    const attempt = await open();
    expect(up.requests.slice(before).map((r) => r.body)).toEqual([{ model: "m" }]);
    expect(attempt.request.body).toBe("");
    await attempt.readJson();
    attempt.end(true);
  });

  it("a body that is not JSON counts against the endpoint and is a protocol failure", async () => {
    up.enqueue("/chat/completions", { kind: "raw", chunks: ["not json"], contentType: "application/json" });
    const attempt = await open();
    const err = await attempt.readJson().catch((e: unknown) => e);
    attempt.end(false);
    expect(err).toBeInstanceOf(UpstreamFailure);
    expect((err as UpstreamFailure).kind).toBe("protocol");
    expect(rt.pool.get("a")!.health.state()).toBe("cooldown");
  });
});

describe("UpstreamAttempt after a failover", () => {
  it("keeps the request prepared for the endpoint that answered, not one that failed", async () => {
    const up = await startMockUpstream();
    const config = buildConfig(poolConfig([await deadUrl(), up.url], { routing: { health: { failure_threshold: 5, cooldown: "60s" } } }));
    const rt = new Runtime(config, await createStores(config.storage), createMetrics(), createLogger("silent"));
    const prepared: string[] = [];
    try {
      for (let i = 0; i < 3; i++) {
        const attempt = await UpstreamAttempt.open(rt, {
          model: "m",
          steps: fallbackSteps(config, "m", config.models.m!, config.targets.get("m")!),
          routing: config.routing,
          signal: AbortSignal.timeout(10_000),
          prepare: (lease) => {
            prepared.push(lease.endpoint.name);
            return { path: "/chat/completions", body: "{}", endpoint: lease.endpoint.name };
          },
        });
        await attempt.readJson();
        attempt.end(true);
        expect(attempt.endpoint.name).toBe("b");
        expect(attempt.request.endpoint).toBe("b");
      }
      expect(prepared).toContain("a"); // the dead endpoint was tried at least once
    } finally {
      await rt.close();
      await up.close();
    }
  });
});

describe("mid-stream errors, classified once", () => {
  const idle = Object.assign(new Error("idle"), { code: "UND_ERR_BODY_TIMEOUT" });
  const lost = Object.assign(new Error("other side closed"), { code: "UND_ERR_SOCKET" });
  it("give each family its own code for the same cause", () => {
    const lostMessage = "The upstream connection was lost mid-stream.";
    const idleMessage = "The upstream stopped sending data (idle timeout).";
    // Exactly these fields: the native path puts the object on response.error as it is.
    expect(midStreamError(idle, "responses")).toEqual({ code: "timeout", message: idleMessage });
    expect(midStreamError(idle, "chat")).toEqual({ code: "upstream_timeout", message: idleMessage });
    expect(midStreamError(lost, "responses")).toEqual({ code: "server_error", message: lostMessage });
    expect(midStreamError(lost, "chat")).toEqual({ code: "upstream_stream_error", message: lostMessage });
    expect(midStreamCause(new SyntaxError("x"))).toEqual({ cause: "malformed", message: "The upstream sent a malformed stream chunk." });
    expect(midStreamCause(new UpstreamFailure("a", "timeout", "idle")).cause).toBe("timeout");
  });
});
