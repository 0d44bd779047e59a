import { SpanStatusCode, type Span } from "../tracing/index.js";
import type { RequestStats } from "./context.js";

/**
 * Ends a request's SERVER span with what the request came to: its route (the span is named
 * `METHOD /route` as HTTP conventions say), status, the model asked for and the one that
 * served it, the upstream, the key's name (never its value) and the tokens the upstream reported.
 */
export function endRequestSpan(span: Span, method: string, stats: RequestStats, status: number, owner: string | null): void {
  if (span.isRecording()) {
    span.updateName(`${method} ${stats.route}`);
    span.setAttribute("http.route", stats.route);
    span.setAttribute("http.response.status_code", status);
    const operation = OPERATIONS[stats.route];
    if (operation) span.setAttribute("gen_ai.operation.name", operation);
    if (stats.model) span.setAttribute("gen_ai.request.model", stats.model);
    if (stats.model) span.setAttribute("gen_ai.response.model", stats.servedModel ?? stats.model);
    if (stats.endpoint) span.setAttribute("router.upstream", stats.endpoint);
    if (stats.endpoint === "cache") span.setAttribute("router.cache_hit", true);
    if (stats.servedModel) span.setAttribute("router.fallback", true);
    if (owner) span.setAttribute("router.key", owner);
    if (stats.tokens) {
      span.setAttribute("gen_ai.usage.input_tokens", stats.tokens.input);
      span.setAttribute("gen_ai.usage.output_tokens", stats.tokens.output);
    }
    // HTTP conventions: a server span is an error for 5xx only (a 4xx is the client's).
    if (status >= 500) {
      span.setAttribute("error.type", String(status));
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
  }
  span.end();
}

/** The GenAI operation of each inference route (the Responses service sets its own too). */
const OPERATIONS: Record<string, string | undefined> = { "/v1/responses": "chat", "/v1/chat/completions": "chat", "/v1/embeddings": "embeddings" };
