import { Writable } from "node:stream";
import { createLogger, type Logger } from "../../src/ops/log.js";

export interface CapturedLog {
  logger: Logger;
  /** Every line written so far, raw (JSON text). */
  text(): string;
  /** Every line written so far, parsed. */
  lines(): Record<string, any>[];
}

/** A real pino logger (the router's own createLogger) writing into memory. */
export function captureLog(level = "debug"): CapturedLog {
  let buf = "";
  const sink = new Writable({
    write(chunk, _enc, done) {
      buf += String(chunk);
      done();
    },
  });
  return {
    logger: createLogger(level, sink),
    text: () => buf,
    lines: () =>
      buf
        .split("\n")
        .filter((l) => l.trim())
        .map((l) => JSON.parse(l) as Record<string, any>),
  };
}
