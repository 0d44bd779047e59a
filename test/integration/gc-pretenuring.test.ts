import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";

// A program V8 pretenures for: one allocation site whose objects all outlive the young generation.
const LONG_LIVED = `
const keep = [];
function make(i) { return { a: i, b: [i], c: { d: i } }; }
for (let r = 0; r < 20; r++) for (let i = 0; i < 100000; i++) keep.push(make(i));
`;

/** The pretenuring decisions V8 traces while `program` runs, after the router's GC settings when `tuned`. */
function decisions(tuned: boolean, flags: string[] = []): string[] {
  const setup = tuned ? `const { tuneGc } = await import(${JSON.stringify(new URL("../../src/runtime/gc.ts", import.meta.url).href)}); tuneGc();` : "";
  // A small young generation: many scavenges, so V8 gathers enough feedback to decide in every run.
  const out = spawnSync(process.execPath, ["--import", "tsx", "--trace-pretenuring-statistics", "--max-semi-space-size=1", ...flags, "--input-type=module", "-e", setup + LONG_LIVED], { encoding: "utf8", timeout: 60_000 });
  expect(out.status, out.stderr).toBe(0);
  return out.stdout.split("\n").filter((line) => /=> tenure/.test(line));
}

// runtime/gc.ts: a site of per-request objects tenured under load makes every scavenge keep young garbage alive.
describe("allocation-site pretenuring", () => {
  it("V8 tenures an allocation site of long-lived objects by default (the trace this test reads)", () => {
    expect(decisions(false).length).toBeGreaterThan(0);
  });

  it("is off in a process the router's GC settings were applied to", () => {
    expect(decisions(true)).toEqual([]);
  });

  it("stays on when the operator started node with it", () => {
    expect(decisions(true, ["--allocation-site-pretenuring"]).length).toBeGreaterThan(0);
  });
});
