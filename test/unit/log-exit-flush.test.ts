import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";

// Lines batched for stdout are written when the process exits, from every logger made; and
// many loggers in one process do not pile up exit listeners.
describe("stdout log batching", () => {
  it("flushes every logger's pending lines at exit, with one exit listener", () => {
    const script = `
      const { createLogger } = await import(${JSON.stringify(new URL("../../src/ops/log.ts", import.meta.url).pathname)});
      const loggers = [createLogger("info")];
      const afterFirst = process.listenerCount("exit");
      for (let i = 1; i < 15; i++) loggers.push(createLogger("info"));
      loggers.forEach((l, i) => l.info({ n: i }, "line before exit"));
      console.error("exit listeners added by 14 more loggers:", process.listenerCount("exit") - afterFirst);
      process.exit(0);
    `;
    const out = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { encoding: "utf8" });
    expect(out.status).toBe(0);
    const lines = out.stdout.trim().split("\n").map((l) => JSON.parse(l) as { msg: string; n: number });
    expect(lines.map((l) => l.n).sort((a, b) => a - b)).toEqual(Array.from({ length: 15 }, (_, i) => i));
    expect(out.stderr).toContain("exit listeners added by 14 more loggers: 0");
    expect(out.stderr).not.toContain("MaxListenersExceededWarning");
  });
});
