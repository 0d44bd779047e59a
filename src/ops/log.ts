import { AsyncLocalStorage } from "node:async_hooks";
import { pino, type Logger } from "pino";
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
  const out = format === "pretty" ? prettyStream(destination ?? process.stdout, destination === undefined && process.stdout.isTTY === true) : (destination ?? stdoutLines());
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

/**
 * JSON lines on stdout, written in batches: a busy router logs a line per request, and a write
 * system call per line was ~3% of a small request's CPU. Lines wait at most LOG_FLUSH_MS (or
 * until LOG_BATCH_CHARS are pending), and whatever is pending is written before the process exits.
 */
function stdoutLines(): pino.DestinationStream {
  const lines = new LineBatch(pino.destination({ dest: 1, sync: false }));
  // One exit hook for every batch (a process that builds several routers, tests, would
  // otherwise add a listener each); a batch whose destination closed is forgotten.
  if (!exitHooked) {
    exitHooked = true;
    process.once("exit", () => {
      for (const batch of pending) {
        try {
          batch.flushSync();
        } catch {
          // stdout already gone (a closed pipe): nothing left to write to.
        }
      }
    });
  }
  pending.add(lines);
  lines.dest.once("close", () => pending.delete(lines));
  return lines;
}

/**
 * Lines kept in an array and handed to the destination joined, once per batch. sonic-boom's
 * own batching (`minLength`) appends each line to a growing string and measures its byte
 * length at every write, which flattens it: ~4 KB allocated per line at a 4 KB batch.
 */
class LineBatch {
  private lines: string[] = [];
  private chars = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(readonly dest: ReturnType<typeof pino.destination>) {}

  write(line: string): boolean {
    this.lines.push(line);
    this.chars += line.length;
    if (this.chars >= LOG_BATCH_CHARS) this.hand();
    else if (this.timer === null) {
      this.timer = setTimeout(this.onTimer, LOG_FLUSH_MS);
      this.timer.unref();
    }
    return true;
  }

  /** pino's `logger.flush(cb)`. */
  flush(cb?: (err?: Error) => void): void {
    this.hand();
    this.dest.flush(cb);
  }

  flushSync(): void {
    this.hand();
    this.dest.flushSync();
  }

  private readonly onTimer = (): void => {
    this.timer = null;
    this.hand();
  };

  private hand(): void {
    if (this.timer !== null) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    if (this.lines.length === 0) return;
    const text = this.lines.length === 1 ? this.lines[0]! : this.lines.join("");
    this.lines = [];
    this.chars = 0;
    this.dest.write(text);
  }
}

/** The batches of stdout lines still open: flushed when the process exits. */
const pending = new Set<LineBatch>();
let exitHooked = false;

/** A batch is handed to stdout once this many characters are pending. */
const LOG_BATCH_CHARS = 4096;

/** The longest a log line waits in the batch before it is written. */
export const LOG_FLUSH_MS = 100;

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
