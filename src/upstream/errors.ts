import { ApiError, type OpenAIErrorBody } from "../ops/errors.js";
import { scrubSecret } from "../ops/secrets.js";

export type FailureKind = "connect" | "timeout" | "status" | "protocol";

/** What the client's request was (for messages naming the route), and whether the error body was JSON. */
export interface FailureDetail {
  /** e.g. "POST /chat/completions": the route asked of the endpoint. */
  route?: string;
  /** The error body was a JSON object (`{"error":...}`, `{"message":...}`, `{"detail":...}`): the server itself answered. */
  jsonBody?: boolean;
  /** No connection was made (a connect timeout): the request never reached the endpoint. */
  unreached?: boolean;
  /** A 429's rate-limit headers (`x-ratelimit-*`, `anthropic-ratelimit-*`), passed on to the client with it. */
  rateLimitHeaders?: Record<string, string>;
}

/**
 * Something went wrong talking to one endpoint. Carries enough to decide on a
 * retry (kind, status, Retry-After), on the endpoint's health (endpointFault) and
 * to build the client-facing error.
 */
export class UpstreamFailure extends Error {
  constructor(
    readonly endpoint: string,
    readonly kind: FailureKind,
    message: string,
    readonly status?: number,
    readonly body?: OpenAIErrorBody["error"],
    readonly retryAfterMs?: number,
    readonly detail: FailureDetail = {},
  ) {
    super(message);
    this.name = "UpstreamFailure";
  }

  /**
   * Says something about the endpoint, not the request (Envoy's "gateway failures" plus
   * misconfiguration): counts against its health. Connection errors, timeouts, invalid
   * bodies, 502/503/504, 429 with Retry-After, a 404/405 for the route itself, refused
   * router credentials (401/403), and a 5xx that is not a JSON error (a proxy's page).
   * A 500 with a JSON error body may be the request's own fault and does not count.
   */
  get endpointFault(): boolean {
    if (this.kind !== "status") return true;
    const s = this.status ?? 0;
    // 529: Anthropic's overloaded_error, the endpoint saying it is too busy.
    if (s === 502 || s === 503 || s === 504 || s === 529 || s === 401 || s === 403) return true;
    if (s === 429) return this.retryAfterMs !== undefined;
    if (s >= 500) return !this.detail.jsonBody;
    return this.routeMissing;
  }

  /**
   * A 404/405 for the route itself (the endpoint's url lacks /v1, or the server does not
   * speak this API), as opposed to a 404 about something the request names (a model).
   */
  get routeMissing(): boolean {
    if (this.kind !== "status") return false;
    if (this.status === 405) return true;
    if (this.status !== 404) return false;
    const b = this.body;
    return !b?.param && !/model/i.test(`${b?.message ?? ""} ${b?.code ?? ""}`);
  }

  /** Worth another endpoint of the pool: endpoint faults, every 5xx and 429. */
  get retryable(): boolean {
    return this.endpointFault || (this.status ?? 0) >= 500 || this.status === 429;
  }

  /** Worth the same endpoint again: only a connection-level failure (refused, reset, connect timeout). */
  get sameEndpointRetryable(): boolean {
    return this.kind === "connect" || this.detail.unreached === true;
  }

  /** Metric label for why a retry happened. */
  get reason(): "connect" | "timeout" | "status_5xx" | "status_429" | "other" {
    if (this.kind === "connect" || this.kind === "timeout") return this.kind;
    if (this.status === 429) return "status_429";
    if ((this.status ?? 0) >= 500) return "status_5xx";
    return "other";
  }

  /** The error the client sees. Upstream 4xx/429 keep their status and body; the rest become 502/503/504. */
  toApiError(): ApiError {
    const headers: Record<string, string> = { ...this.detail.rateLimitHeaders };
    if (this.retryAfterMs !== undefined) headers["retry-after"] = String(Math.max(1, Math.ceil(this.retryAfterMs / 1000)));
    if (this.kind === "connect") {
      return new ApiError(502, `Could not reach the upstream endpoint "${this.endpoint}" for this model (${this.message}).`, { type: "server_error", code: "upstream_unreachable" });
    }
    if (this.kind === "timeout") {
      return new ApiError(504, `The upstream endpoint "${this.endpoint}" did not answer in time (${this.message}).`, { type: "server_error", code: "upstream_timeout" });
    }
    if (this.kind === "protocol") {
      return new ApiError(502, `The upstream endpoint "${this.endpoint}" sent an invalid response (${this.message}).`, { type: "server_error", code: "bad_upstream_response" });
    }
    const status = this.status ?? 502;
    if (this.routeMissing) {
      // The router's configuration is wrong, not the request: name the endpoint (never its URL, which may carry credentials).
      const route = this.detail.route ? ` ${this.detail.route}` : "";
      return new ApiError(
        502,
        `The router's endpoint '${this.endpoint}' has no route${route} (it answered HTTP ${status}). This is a router configuration error: check that endpoint's url (OpenAI-compatible servers usually serve under /v1).`,
        { type: "server_error", code: "upstream_route_not_found" },
      );
    }
    if (status === 401 || status === 403) {
      // The router's credentials were refused; the client's own key is fine, so never answer 401 to it.
      return new ApiError(502, `The upstream endpoint "${this.endpoint}" refused the router's credentials.`, { type: "server_error", code: "upstream_auth_failed" });
    }
    if (status >= 500) {
      const mapped = status === 503 || status === 504 ? status : status === 529 ? 503 : 502;
      return new ApiError(mapped, `The upstream endpoint "${this.endpoint}" failed: ${this.body?.message ?? `HTTP ${status}`}`, {
        type: "server_error",
        code: this.body?.code ?? "upstream_error",
        headers,
      });
    }
    // A backend that already says context_length_exceeded keeps its own words (OpenAI's are OpenAI's).
    if (status === 400 && this.body?.code !== "context_length_exceeded" && isContextOverflow(this.body)) return contextLengthExceeded();
    return new ApiError(status, this.body?.message ?? `The upstream answered HTTP ${status}.`, {
      type: this.body?.type ?? (status === 429 ? "rate_limit_error" : "invalid_request_error"),
      param: this.body?.param ?? null,
      code: this.body?.code ?? null,
      headers,
    });
  }
}

/**
 * A backend's own words for an input over its context window: vLLM ("This model's maximum
 * context length is ..."), llama.cpp (`exceed_context_size_error`, "the request exceeds the
 * available context size") and servers that say "context length exceeded" without OpenAI's code.
 */
const CONTEXT_OVERFLOW = /maximum context length|context[ _]length[ _]exceeded|exceeds? the (available )?context (size|window|length)|exceed_context_size/i;

function isContextOverflow(body: OpenAIErrorBody["error"] | undefined): boolean {
  return !!body && CONTEXT_OVERFLOW.test(`${body.code ?? ""} ${body.type ?? ""} ${body.message}`);
}

/** OpenAI's own 400 for an input over the context window, whatever words the backend used. */
export const contextLengthExceeded = () =>
  new ApiError(400, "Your input exceeds the context window of this model. Please adjust your input and try again.", { type: "invalid_request_error", param: "input", code: "context_length_exceeded" });

/** True when an error body is a JSON object: the server answered (not a proxy's page or a bare status). */
export function isJsonErrorBody(text: string): boolean {
  if (text.charCodeAt(0) !== 123 /* { */) return false;
  try {
    const j = JSON.parse(text) as unknown;
    return j !== null && typeof j === "object" && !Array.isArray(j);
  } catch {
    return false;
  }
}

/** Reads an upstream error body into the OpenAI error shape, whatever the backend sent. */
export function parseUpstreamErrorBody(text: string, status: number, secret?: string): OpenAIErrorBody["error"] {
  let message = text.slice(0, 2000) || `HTTP ${status}`;
  let type: string = status === 429 ? "rate_limit_error" : status >= 500 ? "server_error" : "invalid_request_error";
  let param: string | null = null;
  let code: string | null = null;
  try {
    const j = JSON.parse(text) as { error?: unknown; message?: unknown; detail?: unknown };
    const e = j.error;
    if (e && typeof e === "object") {
      const o = e as Record<string, unknown>;
      if (typeof o.message === "string") message = o.message;
      if (typeof o.type === "string") type = o.type;
      if (typeof o.param === "string") param = o.param;
      if (typeof o.code === "string" || typeof o.code === "number") code = String(o.code);
    } else if (typeof e === "string") message = e;
    else if (typeof j.message === "string") message = j.message;
    else if (typeof j.detail === "string") message = j.detail;
  } catch {
    // not JSON: keep the (truncated) text
  }
  return { message: scrubSecret(message, secret), type, param, code };
}

export function parseRetryAfter(value: string | string[] | undefined): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (!v) return undefined;
  const secs = Number(v);
  if (Number.isFinite(secs)) return Math.max(0, secs * 1000);
  const date = Date.parse(v);
  return Number.isFinite(date) ? Math.max(0, date - Date.now()) : undefined;
}
