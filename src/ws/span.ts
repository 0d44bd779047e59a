import type { TokenCount } from "../keys/usage.js";
import { SpanStatusCode, type Span } from "../tracing/index.js";

/**
 * Ends the SERVER span of one `response.create` on a socket with what it came to: the same
 * attributes a POST /v1/responses span gets (the service adds the plan's and the outcome's
 * below it), plus the lane.
 */
export function endSocketSpan(span: Span, s: { model: string; status: number; tokens?: TokenCount; owner: string | null; streamId?: string }): void {
  if (span.isRecording()) {
    span.setAttribute("gen_ai.operation.name", "chat");
    if (s.model) span.setAttribute("gen_ai.request.model", s.model);
    span.setAttribute("router.ws.status", s.status);
    if (s.streamId !== undefined) span.setAttribute("router.ws.stream_id", s.streamId);
    if (s.owner) span.setAttribute("router.key", s.owner);
    if (s.tokens) {
      span.setAttribute("gen_ai.usage.input_tokens", s.tokens.input);
      span.setAttribute("gen_ai.usage.output_tokens", s.tokens.output);
    }
    if (s.status >= 500) {
      span.setAttribute("error.type", String(s.status));
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
  }
  span.end();
}
