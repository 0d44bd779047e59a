import { spawn } from "node:child_process";
import { Writable } from "node:stream";
import { afterEach, describe, expect, it, vi } from "vitest";
import { LOG_FLUSH_MS, LOG_MAX_PENDING_CHARS, LineBatch } from "../../src/ops/log-lines.js";

/** A real stream whose reader is stalled until `release()`: its writes wait in its buffer. */
function stalledOut(): { out: Writable; writes: string[]; release(): void } {
  const writes: string[] = [];
  let held: (() => void)[] = [];
  let stalled = true;
  const out = new Writable({
    highWaterMark: 16,
    write(chunk: Buffer, _enc, cb) {
      writes.push(chunk.toString());
      if (stalled) held.push(cb);
      else cb();
    },
  });
  return {
    out,
    writes,
    release() {
      stalled = false;
      const cbs = held;
      held = [];
      for (const cb of cbs) cb();
    },
  };
}

const notice = (n: number) => `dropped ${n}\n`;

describe("stdout line batches", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("writes lines as one batch once 4 KB are pending, or after the flush interval", () => {
    vi.useFakeTimers();
    const s = stalledOut();
    s.release();
    const batch = new LineBatch(s.out, notice);
    batch.write("a\n");
    batch.write("b\n");
    expect(s.writes).toEqual([]);
    vi.advanceTimersByTime(LOG_FLUSH_MS);
    expect(s.writes).toEqual(["a\nb\n"]);
    const long = "x".repeat(1500) + "\n";
    batch.write(long);
    batch.write(long);
    expect(s.writes).toHaveLength(1);
    batch.write(long);
    expect(s.writes).toEqual(["a\nb\n", long + long + long]);
  });

  it("drops batches while the reader is too far behind, then says how many lines were lost", () => {
    const s = stalledOut();
    const batch = new LineBatch(s.out, notice, 10);
    batch.write("first line\n");
    batch.flushSync();
    // The reader has not taken the first batch: 11 characters wait, over the limit of 10.
    batch.write("lost 1\n");
    batch.write("lost 2\n");
    batch.flushSync();
    batch.write("lost 3\n");
    batch.flushSync();
    expect(s.writes).toEqual(["first line\n"]);
    s.release();
    batch.write("after\n");
    batch.flushSync();
    expect(s.writes).toEqual(["first line\n", "dropped 3\nafter\n"]);
  });

  it("flush(cb) calls back once the stream took the lines", async () => {
    const s = stalledOut();
    const batch = new LineBatch(s.out, notice);
    batch.write("one\n");
    let called = false;
    batch.flush(() => (called = true));
    await new Promise((r) => setImmediate(r));
    expect(called).toBe(false);
    s.release();
    await new Promise((r) => setImmediate(r));
    expect(called).toBe(true);
  });

  // A real process whose stdout pipe nobody reads for a while: its event loop keeps running,
  // what waits for the reader stays under the limit, and the lines it had to drop are reported.
  it("keeps a router's event loop running when its stdout pipe is not read", async () => {
    const script = `
      const { createLogger } = await import(${JSON.stringify(new URL("../../src/ops/log.ts", import.meta.url).pathname)});
      const log = createLogger("info");
      const pad = "x".repeat(10_000);
      for (let round = 0; round < 40; round++) {
        for (let i = 0; i < 100; i++) log.info({ round, i, pad }, "line");
        await new Promise((r) => setTimeout(r, 5));
        process.stderr.write("tick " + round + "\\n");
      }
      process.stderr.write("pending " + process.stdout.writableLength + "\\n");
      // Read again: what waited goes out, then the next line, after the notice of what was lost.
      while (process.stdout.writableLength > 0) await new Promise((r) => setTimeout(r, 10));
      log.info("after");
      await new Promise((r) => log.flush(r));
      process.exit(0);
    `;
    const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "pipe"] });
    child.stdout.pause();
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    // 40 MB of lines are logged while nobody reads stdout; the child must get through them all.
    await vi.waitFor(() => expect(stderr).toContain("tick 39"), { timeout: 20_000, interval: 50 });
    let stdout = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stdout.resume();
    const code = await new Promise<number | null>((r) => child.once("close", r));
    expect(code).toBe(0);
    // What waited for the reader stayed near the limit (one 10 KB line over it at most), not 40 MB.
    expect(Number(/pending (\d+)/.exec(stderr)?.[1])).toBeLessThan(LOG_MAX_PENDING_CHARS + 20_000);
    const lines = stdout.trim().split("\n").map((l) => JSON.parse(l) as { msg: string; dropped?: number; level: string });
    const dropped = lines.find((l) => l.dropped !== undefined);
    expect(dropped).toMatchObject({ level: "warn", msg: "log lines dropped: stdout was not being read" });
    expect(lines.at(-1)!.msg).toBe("after");
    expect(lines.at(-2)).toBe(dropped);
    const written = lines.filter((l) => l.msg === "line").length;
    expect(written + dropped!.dropped!).toBeLessThanOrEqual(4000);
    expect(written).toBeGreaterThan(0);
  }, 30_000);
});
