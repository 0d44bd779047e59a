/**
 * What src/ops/ holds:
 * the operations helpers every layer uses: pino logging, its batched stdout lines and its terminal
 * format (`log.ts`, `log-lines.ts`, `log-pretty.ts`), every Prometheus metric (`metrics.ts`),
 * `ApiError`, its constructors and `toApiError` (`errors.ts`: the one mapping of anything thrown,
 * `TranslationError` included), the one rule that keeps secrets out of text leaving the router
 * (`secrets.ts`: an endpoint key, a search key, MCP header values), what a long-lived object holds
 * for each request while it runs (`slots.ts`: an array's slots, never a Set, a Map or a long-lived
 * signal's listeners (Node leaves a removed listener linked to the ones after it), which the
 * garbage collector pays for per request; for the same reason no object literal with a getter is
 * made per request: each gets a hidden class of its own in the old generation, which keeps its
 * request alive through every young-generation collection until a full GC, so such objects are
 * classes: `LazyTerminal` in `responses/create/execute.ts`, `StreamShutdown`)
 */
/**
 * Errors are values: an HTTP status plus the OpenAI error body fields.
 * Everything that can go wrong in the router ends up as an ApiError, and the
 * HTTP layer renders it in exactly one place (http/errors.ts).
 */
import type { ErrorObject } from "openai/resources/shared";
import { TranslationError, UnknownReference } from "../translate/errors.js";

export type ErrorType =
  | "invalid_request_error"
  | "authentication_error"
  | "permission_error"
  | "not_found_error"
  | "rate_limit_error"
  | "server_error"
  | "api_error";

/** The error body every failure is sent as, typed by the openai package's ErrorObject. */
export interface OpenAIErrorBody {
  error: ErrorObject;
}

export class ApiError extends Error {
  readonly status: number;
  readonly type: string;
  readonly param: string | null;
  readonly code: string | null;
  /** Extra response headers (e.g. Retry-After). */
  readonly headers: Record<string, string>;

  constructor(
    status: number,
    message: string,
    opts: { type?: string; param?: string | null; code?: string | null; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.type = opts.type ?? defaultType(status);
    this.param = opts.param ?? null;
    this.code = opts.code ?? null;
    this.headers = opts.headers ?? {};
  }

  toBody(): OpenAIErrorBody {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

function defaultType(status: number): ErrorType {
  if (status === 401) return "authentication_error";
  if (status === 403) return "permission_error";
  if (status === 404) return "invalid_request_error";
  if (status === 429) return "rate_limit_error";
  if (status >= 500) return "server_error";
  return "invalid_request_error";
}

export const invalidRequest = (message: string, param: string | null = null, code: string | null = null) =>
  new ApiError(400, message, { type: "invalid_request_error", param, code });

export const notFound = (message: string, param: string | null = null, code: string | null = null) =>
  new ApiError(404, message, { type: "invalid_request_error", param, code });

export const responseNotFound = (id: string, param: string | null = null) =>
  param === "previous_response_id"
    ? notFound(`Previous response with id '${id}' not found.`, param, "previous_response_not_found")
    : notFound(`Response with id '${id}' not found.`, param, null);

export const modelNotFound = (model: string) =>
  notFound(`The model \`${model}\` does not exist or you do not have access to it.`, "model", "model_not_found");

export const storageUnavailable = (detail: string) =>
  // Retry-After: a reconnect or a Sentinel failover usually completes within seconds.
  new ApiError(503, `The router's response store is unavailable: ${detail}`, { type: "server_error", code: "store_unavailable", headers: { "retry-after": "1" } });

/** True for an error the router raised on purpose (it maps to a chosen status), false for a fault. */
export function isKnownError(err: unknown): boolean {
  return err instanceof ApiError || err instanceof TranslationError || typeof (err as { toApiError?: unknown } | null)?.toApiError === "function";
}

/** Normalises anything thrown into an ApiError without leaking stacks or secrets. */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  // The translation core knows nothing of HTTP: a request it cannot express is the client's 400.
  if (err instanceof UnknownReference) return notFound(err.message, err.param, err.code);
  if (err instanceof TranslationError) return invalidRequest(err.message, err.param, err.code);
  const convertible = err as { toApiError?: () => ApiError } | null;
  if (convertible && typeof convertible.toApiError === "function") return convertible.toApiError();
  if (err instanceof Error && err.name === "AbortError") {
    return new ApiError(499, "The request was aborted.", { type: "invalid_request_error", code: "request_aborted" });
  }
  return new ApiError(500, "The router hit an internal error while handling the request.", { type: "server_error", code: "internal_error" });
}
