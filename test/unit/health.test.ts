import { describe, expect, it } from "vitest";
import { EndpointHealth, type HealthState } from "../../src/routing/health.js";

/** The circuit breaker on its own, with a clock the test moves. */
function breaker(settings = { failure_threshold: 3, cooldown: 1_000, max_cooldown: 5_000 }) {
  const clock = { t: 1_000_000 };
  const changes: [HealthState, string][] = [];
  const h = new EndpointHealth(settings, (s, r) => changes.push([s, r]), () => clock.t);
  return { h, clock, changes };
}

describe("EndpointHealth", () => {
  it("trips after failure_threshold consecutive failures; a success in between resets the count", () => {
    const { h, changes } = breaker();
    h.recordFailure("x");
    h.recordFailure("x");
    h.recordSuccess();
    h.recordFailure("x");
    h.recordFailure("x");
    expect(h.state()).toBe("healthy");
    h.recordFailure("boom");
    expect(h.state()).toBe("cooldown");
    expect(changes).toEqual([["cooldown", "boom; cooling down for 1000 ms"]]);
    expect(h.admits(false)).toBe(false);
    h.close();
  });

  it("goes half-open when the cooldown ends, admits exactly one trial, and doubles the cooldown up to the cap on each failed trial", () => {
    const { h, clock, changes } = breaker();
    for (let i = 0; i < 3; i++) h.recordFailure("x");
    const cooldowns: number[] = [];
    for (let trip = 0; trip < 4; trip++) {
      cooldowns.push(h.retryAfterMs());
      clock.t += h.retryAfterMs();
      expect(h.state()).toBe("half_open");
      expect(h.admits(true)).toBe(true);
      expect(h.admits(true)).toBe(false); // the trial is taken
      h.recordFailure("trial failed");
      expect(h.state()).toBe("cooldown");
    }
    expect(cooldowns).toEqual([1_000, 2_000, 4_000, 5_000]);
    clock.t += h.retryAfterMs();
    expect(h.admits(true)).toBe(true);
    h.recordSuccess();
    expect(h.state()).toBe("healthy");
    expect(changes.at(-1)).toEqual(["healthy", "trial request succeeded"]);
    // Recovered: the next trip starts from the base cooldown again.
    for (let i = 0; i < 3; i++) h.recordFailure("x");
    expect(h.retryAfterMs()).toBe(1_000);
    h.close();
  });

  it("frees the half-open slot when a trial ends without a verdict", () => {
    const { h, clock } = breaker({ failure_threshold: 1, cooldown: 100, max_cooldown: 100 });
    h.recordFailure("x");
    clock.t += 100;
    expect(h.admits(true)).toBe(true);
    expect(h.admits(false)).toBe(false);
    h.releaseTrial();
    expect(h.admits(false)).toBe(true);
    h.close();
  });

  it("probe: success ends a cooldown early, failure counts when healthy, fails a half-open trial, and is ignored while cooling down", () => {
    const { h, clock, changes } = breaker({ failure_threshold: 2, cooldown: 1_000, max_cooldown: 60_000 });
    h.recordProbe(true, "probe ok");
    expect(changes).toEqual([]); // healthy stays healthy, silently
    h.recordProbe(false, "probe failed");
    expect(h.state()).toBe("healthy");
    h.recordProbe(false, "probe failed");
    expect(h.state()).toBe("cooldown");
    h.recordProbe(false, "probe failed");
    h.recordProbe(false, "probe failed");
    expect(h.retryAfterMs()).toBe(1_000); // not extended while cooling down
    h.recordProbe(true, "probe ok");
    expect(h.state()).toBe("healthy");
    h.recordFailure("x");
    h.recordFailure("x");
    clock.t += h.retryAfterMs();
    expect(h.state()).toBe("half_open");
    h.recordProbe(false, "probe failed");
    expect(h.state()).toBe("cooldown");
    expect(h.retryAfterMs()).toBe(2_000); // a failed trial doubles, like a failed trial request
    expect(changes.map((c) => c[0])).toEqual(["cooldown", "healthy", "cooldown", "cooldown"]);
    h.close();
  });

  it("a probe success while healthy does not wipe failures counted from real requests", () => {
    const { h } = breaker({ failure_threshold: 2, cooldown: 1_000, max_cooldown: 1_000 });
    h.recordFailure("inference failed");
    h.recordProbe(true, "probe ok");
    h.recordFailure("inference failed");
    expect(h.state()).toBe("cooldown");
    h.close();
  });
});

describe("EndpointHealth while ejected (panic-routed requests)", () => {
  it("a failure during cooldown does not re-trip or stretch it, but moves lastFailureAt; a success ends it", () => {
    const { h, clock, changes } = breaker({ failure_threshold: 1, cooldown: 1_000, max_cooldown: 8_000 });
    h.recordFailure("x");
    const until = h.retryAfterMs();
    clock.t += 10;
    h.recordFailure("panic request failed");
    expect(h.retryAfterMs()).toBe(until - 10);
    expect(h.lastFailureAt).toBe(clock.t);
    expect(changes.map((c) => c[0])).toEqual(["cooldown"]);
    h.recordSuccess();
    expect(h.state()).toBe("healthy");
    expect(changes.at(-1)![1]).toMatch(/panic/);
    h.close();
  });
});
