import { describe, expect, it } from "vitest";
import { DEFAULTS, formatReport, runChaos } from "../chaos/chaos.js";

/**
 * The chaos run (test/chaos/run.ts, `npm run chaos`) in a few seconds: three
 * backends, one dead throughout and another killed and restarted twice while
 * eight clients keep creating stored responses, streamed and not.
 *
 * Backends answer each request in one write (chunkDelayMs 0), so a kill lands
 * before a response's first byte or after its last: exactly the window where
 * failover must hide it. Every request is served and every stored response is
 * still there afterwards.
 */
describe("chaos (short)", () => {
  it("serves every request and loses no stored response with one backend dead and one killed mid-run", async () => {
    const report = await runChaos({
      ...DEFAULTS,
      durationMs: 3_000,
      concurrency: 8,
      killEveryMs: 900,
      downMs: 400,
      deadBackend: true,
      chunkDelayMs: 0,
      maxRequests: 5_000,
    });
    const table = formatReport(report);
    expect(report.kills, table).toBeGreaterThanOrEqual(2);
    // Enough requests to span the kills: two a client at the least (a loaded CI box serves ~30,
    // a quiet one hundreds); what matters is that every one of them is served and kept.
    expect(report.requests, table).toBeGreaterThanOrEqual(2 * 8);
    expect(report.failed, table).toBe(0);
    expect(report.interrupted, table).toBe(0);
    expect(report.served, table).toBe(report.requests);
    expect(report.stored, table).toBe(report.served);
    expect(report.lost, table).toBe(0);
    expect(table).toMatch(/served in panic mode +\d+/);
  });
});
