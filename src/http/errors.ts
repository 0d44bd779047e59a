import { ApiError, toApiError } from "../errors.js";

/** The one place an error becomes an HTTP answer: status, headers, OpenAI error body. */
export function errorResponse(err: unknown): Response {
  const e = err instanceof ApiError ? err : toApiError(err);
  const status = e.status === 499 ? 400 : e.status;
  return new Response(JSON.stringify(e.toBody()), { status, headers: { "content-type": "application/json", ...e.headers } });
}
