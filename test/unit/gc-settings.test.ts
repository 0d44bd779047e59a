import { describe, expect, it } from "vitest";
import { quotaCores, tuneGc } from "../../src/runtime/gc.js";

describe("young-generation GC for the cores a process has", () => {
  it.each([
    ["max 100000", null],
    ["max", null],
    ["100000 100000", 1],
    ["50000 100000", 1],
    ["150000 100000", 2],
    ["400000 100000\n", 4],
    ["0 100000", null],
    ["-1 100000", null],
    ["200000 ", 2],
    ["garbage", null],
    ["", null],
  ])("a cgroup quota %j allows %j whole cores", (text, cores) => {
    expect(quotaCores(text)).toBe(cores);
  });

  it("with several cores V8's parallel scavenge stays", () => {
    expect(tuneGc(4, [])).toEqual({ cores: 4, parallelScavenge: true, source: "cores", pretenuring: false });
  });

  it("the operator's own node flag wins over the core count, the last one given", () => {
    expect(tuneGc(8, ["--no-parallel-scavenge"])).toEqual({ cores: 8, parallelScavenge: false, source: "node flag", pretenuring: false });
    expect(tuneGc(1, ["--no-parallel_scavenge", "--parallel-scavenge"])).toEqual({ cores: 1, parallelScavenge: true, source: "node flag", pretenuring: false });
    expect(tuneGc(4, ["--no-allocation-site-pretenuring", "--allocation_site_pretenuring"])).toMatchObject({ parallelScavenge: true, pretenuring: true });
  });
});
