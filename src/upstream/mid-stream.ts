import { UpstreamFailure } from "./errors.js";

/** Why an upstream stream ended early (after its 2xx headers). */
export type MidStreamCause = "timeout" | "lost" | "malformed" | "failed";

/**
 * Error codes per route family. They differ because each family's clients already see
 * its own (tests pin both): a Responses stream ends with `response.failed` whose
 * `error.code` is one of the Responses error codes, a proxied chat stream with an
 * in-band `{"error":...}` chunk in the router's `upstream_*` vocabulary.
 */
const CODES = {
  responses: { timeout: "timeout", other: "server_error" },
  chat: { timeout: "upstream_timeout", other: "upstream_stream_error" },
} as const;

/**
 * The one classification of a mid-stream upstream error, as the family's `{ code, message }`
 * (exactly those two fields: the native path puts the object on `response.error` as is).
 */
export function midStreamError(err: unknown, family: keyof typeof CODES): { code: string; message: string } {
  const { cause, message } = midStreamCause(err);
  const codes = CODES[family];
  return { code: cause === "timeout" ? codes.timeout : codes.other, message };
}

/** Why the stream ended early, and what to tell the client. */
export function midStreamCause(err: unknown): { cause: MidStreamCause; message: string } {
  if (err instanceof UpstreamFailure) return { cause: err.kind === "timeout" ? "timeout" : "failed", message: `The upstream failed mid-stream: ${err.message}` };
  const e = err as Error & { code?: string };
  if (e?.code === "UND_ERR_BODY_TIMEOUT" || e?.name === "BodyTimeoutError") return { cause: "timeout", message: "The upstream stopped sending data (idle timeout)." };
  if (e instanceof SyntaxError) return { cause: "malformed", message: "The upstream sent a malformed stream chunk." };
  return { cause: "lost", message: "The upstream connection was lost mid-stream." };
}
