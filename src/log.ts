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
  const out = format === "pretty" ? prettyStream(destination ?? process.stdout, destination === undefined && process.stdout.isTTY === true) : destination;
  return pino(
    {
      level,
      base: { service: "responses-router" },
      timestamp: pino.stdTimeFunctions.isoTime,
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
}
