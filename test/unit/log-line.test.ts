import { Writable } from "node:stream";
import { pino } from "pino";
import { describe, expect, it, vi } from "vitest";
import { createLogger, infoLine, withLogContext } from "../../src/ops/log.js";

function sink(): { stream: Writable; lines: string[] } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(...chunk.toString().split("\n").filter(Boolean));
      cb();
    },
  });
  return { stream, lines };
}
const untimed = (line: string) => line.replace(/"time":"[^"]+"/, '"time":"T"');

// The access line is built by hand for speed: it must be the bytes pino writes for the same call.
describe("infoLine", () => {
  const cases: Record<string, string | number | undefined>[] = [
    { requestId: "req_1", method: "POST", route: "/v1/responses", model: "m", servedModel: undefined, endpoint: "ep", status: 200, ms: 3 },
    { requestId: 'q"uote\\ \u2028 \n é', method: "GET", route: "unmatched", model: undefined, status: 404, ms: 0 },
    { requestId: "req_2", method: "POST", route: "/v1/chat/completions", status: 499, ms: 12, trace_id: "0af7651916cd43dd8448eb211c80319c", span_id: "b7ad6b7169203331" },
  ];

  it("writes what logger.info(fields, msg) writes, with and without a log context", async () => {
    const a = sink();
    const b = sink();
    const viaPino = createLogger("info", a.stream).child({}, { redact: [] });
    const line = infoLine(createLogger("info", b.stream).child({}, { redact: [] }), "request");
    for (const f of cases) {
      viaPino.info(f, "request");
      line(f);
      withLogContext({ requestId: "ctx_req", responseId: "resp_1" }, () => {
        viaPino.info(f, "request");
        line(f);
      });
    }
    await new Promise((r) => setImmediate(r));
    expect(b.lines.length).toBe(cases.length * 2);
    expect(b.lines.map(untimed)).toEqual(a.lines.map(untimed));
    for (const l of b.lines) expect(() => JSON.parse(l)).not.toThrow();
    expect(JSON.parse(b.lines[1]!)).toMatchObject({ requestId: "req_1", responseId: "resp_1", msg: "request", service: "responses-router", level: "info" });
  });

  it("stamps each line with the time it is written, as pino's isoTime (formatted once per millisecond)", async () => {
    const a = sink();
    const logger = createLogger("info", a.stream);
    const line = infoLine(logger, "request");
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      vi.setSystemTime(new Date("2026-01-02T03:04:05.006Z"));
      line({ n: 1 });
      logger.info({ n: 2 }, "other");
      vi.setSystemTime(new Date("2026-01-02T03:04:05.007Z"));
      line({ n: 3 });
      expect(pino.stdTimeFunctions.isoTime()).toBe(',"time":"2026-01-02T03:04:05.007Z"');
    } finally {
      vi.useRealTimers();
    }
    await new Promise((r) => setImmediate(r));
    expect(a.lines.map((l) => JSON.parse(l).time)).toEqual(["2026-01-02T03:04:05.006Z", "2026-01-02T03:04:05.006Z", "2026-01-02T03:04:05.007Z"]);
  });

  it("follows the logger's level and leaves other loggers to pino", async () => {
    const a = sink();
    const logger = createLogger("warn", a.stream);
    const line = infoLine(logger, "request");
    line({ requestId: "quiet" });
    logger.level = "info";
    line({ requestId: "heard" });
    const c = sink();
    const plain = pino({ base: { other: 1 } }, c.stream);
    infoLine(plain, "request")({ requestId: "x" });
    await new Promise((r) => setImmediate(r));
    expect(a.lines.map((l) => JSON.parse(l).requestId)).toEqual(["heard"]);
    expect(JSON.parse(c.lines[0]!)).toMatchObject({ level: 30, other: 1, requestId: "x", msg: "request" });
  });
});
