import { AsyncLocalStorage } from "node:async_hooks";
import { pino, type Logger } from "pino";
import { stdoutLines } from "./log-lines.js";
import { prettyStream } from "./log-pretty.js";

export type { Logger };

export const LOG_FORMATS = ["json", "pretty"] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** Fields every log line written inside a request (or background job) carries: requestId, responseId. */
export type LogContext = Readonly<Record<string, string>>;
const context = new AsyncLocalStorage<LogContext>();

/** The fields of the request (or job) being handled, if any. */
export function logContext(): LogContext | undefined {
  return context.getStore();
}

/** Runs `fn` so that every log line written from it, however deep (upstream attempts too), carries `fields`. */
export function withLogContext<T>(fields: LogContext, fn: () => T): T {
  return context.run(fields, fn);
}

/**
 * Logs on stdout: JSON lines, or one readable line per event (`pretty`, for a terminal).
 * Upstream keys and client Authorization headers are redacted wherever they might appear
 * in a logged object.
 */
export function createLogger(level: string, destination?: NodeJS.WritableStream, format: LogFormat = "json"): Logger {
  const out = format === "pretty" ? prettyStream(destination ?? process.stdout, destination === undefined && process.stdout.isTTY === true) : (destination ?? stdoutLines(droppedNotice));
  const logger = pino(
    {
      level,
      base: BASE,
      timestamp: isoTimeField,
      redact: {
        paths: ["api_key", "*.api_key", "*.*.api_key", "authorization", "*.authorization", "headers.authorization", "req.headers.authorization", "key", "*.key"],
        censor: "[redacted]",
      },
      formatters: { level: (label) => ({ level: label }) },
      // A fresh object: pino merges the line's own fields into what mixin returns.
      mixin: () => {
        const fields = context.getStore();
        return fields ? { ...fields } : {};
      },
    },
    out as pino.DestinationStream | undefined,
  );
  // Its children inherit it (a pino child's prototype is its parent): their line format is known.
  (logger as unknown as Record<symbol, boolean>)[KNOWN_FORMAT] = true;
  return logger;
}

const BASE = { service: "responses-router" };

let isoMs = -1;
let isoField = "";
/**
 * pino's `isoTime` (`,"time":"<ISO 8601>"`), formatted once per millisecond: a busy router
 * writes several lines per millisecond and `toISOString` was half of the access line's cost.
 */
function isoTimeField(): string {
  const now = Date.now();
  if (now !== isoMs) {
    isoMs = now;
    isoField = `,"time":"${new Date(now).toISOString()}"`;
  }
  return isoField;
}
const KNOWN_FORMAT = Symbol("router line format");
const BASE_JSON = JSON.stringify(BASE).slice(1, -1);

/** The line stdout batching writes after it had to drop lines (log-lines.ts), in pino's format. */
function droppedNotice(dropped: number): string {
  return `{"level":"warn"${isoTimeField()},${BASE_JSON},"dropped":${dropped},"msg":"log lines dropped: stdout was not being read"}\n`;
}

type LineFields = Record<string, string | number | undefined>;

/**
 * `(fields) => logger.info(fields, msg)` for a line written once per request (the access
 * log): for a logger createLogger made (or its child without bindings or redaction), the
 * same bytes pino would write (level, time, base, the log context, the fields, msg; undefined
 * fields left out) built as one string and written to the logger's stream, without pino's
 * generic pass over the object and its mixin's copy. Any other logger goes through pino.
 */
export function infoLine(logger: Logger, msg: string): (fields: LineFields) => void {
  const stream = (logger as unknown as Record<symbol, unknown>)[pino.symbols.streamSym] as { write(s: string): unknown } & Record<symbol, unknown>;
  const known = (logger as unknown as Record<symbol, unknown>)[KNOWN_FORMAT] === true && stream[pino.symbols.needsMetadataGsym] !== true;
  if (!known) return (fields) => logger.info(fields, msg);
  const tail = `,"msg":${JSON.stringify(msg)}}\n`;
  return (fields) => {
    if (!logger.isLevelEnabled("info")) return;
    // As pino merges a mixin: the context's keys first, a field of the same name wins.
    const ctx = context.getStore();
    let line = `{"level":"info"${isoTimeField()},${BASE_JSON}`;
    if (ctx) {
      for (const k in ctx) {
        const v = k in fields ? fields[k] : ctx[k];
        if (v !== undefined) line += `,${JSON.stringify(k)}:${JSON.stringify(v)}`;
      }
    }
    for (const k in fields) {
      const v = fields[k];
      if (v !== undefined && !(ctx && k in ctx)) line += `,${JSON.stringify(k)}:${JSON.stringify(v)}`;
    }
    stream.write(line + tail);
  };
}
