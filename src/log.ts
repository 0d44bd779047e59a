import { pino, type Logger } from "pino";

export type { Logger };

/**
 * JSON logs on stdout. Upstream keys and client Authorization headers are
 * redacted wherever they might appear in a logged object.
 */
export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
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
    },
    destination as pino.DestinationStream | undefined,
  );
}
