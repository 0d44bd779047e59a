import type { Span } from "../../tracing/index.js";
import type { ResponseObject } from "../../wire/types.js";
import type { Plan } from "./plan.js";

/**
 * GenAI attributes of a Responses request's span (the request's SERVER span, or a background
 * job's span): the operation, the model asked for, the response and conversation ids. Prompt
 * text only with `tracing.capture_content` (the instructions and this turn's input items).
 */
export function tracePlan(span: Span, plan: Plan, captureContent: boolean): void {
  span.setAttribute("gen_ai.operation.name", "chat");
  span.setAttribute("gen_ai.request.model", plan.model);
  span.setAttribute("gen_ai.response.id", plan.id);
  if (plan.conversationId) span.setAttribute("gen_ai.conversation.id", plan.conversationId);
  if (plan.previousResponseId) span.setAttribute("router.previous_response_id", plan.previousResponseId);
  if (plan.background) span.setAttribute("router.background", true);
  if (plan.preferEndpoint) span.setAttribute("router.affinity_endpoint", plan.preferEndpoint);
  if (captureContent) {
    if (typeof plan.req.instructions === "string") span.setAttribute("gen_ai.system_instructions", plan.req.instructions);
    span.setAttribute("gen_ai.input.messages", JSON.stringify(plan.input));
  }
}

/** What the upstream's answer came to, on the attempt's CLIENT span: status, usage, and (opt-in) the output items. */
export function traceOutcome(span: Span, response: ResponseObject, servedModel: string, captureContent: boolean): void {
  span.setAttribute("gen_ai.response.id", response.id);
  span.setAttribute("gen_ai.response.model", servedModel);
  span.setAttribute("gen_ai.response.finish_reasons", [response.status]);
  const u = response.usage;
  if (u) {
    span.setAttribute("gen_ai.usage.input_tokens", u.input_tokens ?? 0);
    span.setAttribute("gen_ai.usage.output_tokens", u.output_tokens ?? 0);
  }
  if (captureContent) span.setAttribute("gen_ai.output.messages", JSON.stringify(response.output));
}
