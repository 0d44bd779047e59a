/**
 * The Response object with every field the protocol lists, before any output exists.
 * Both the JSON path and the stream state machine start from it.
 */
import type { CreateResponseRequest, Item, JsonObject, ResponseObject, ResponseStatus, Usage } from "../types.js";

export interface SkeletonMeta {
  id: string;
  /** Seconds since the epoch (passed in: the core has no clock). */
  createdAt: number;
  /** The model name the client asked for (not the upstream name). */
  model: string;
  status: ResponseStatus;
  previousResponseId?: string | null;
}

export function responseSkeleton(req: CreateResponseRequest, meta: SkeletonMeta): ResponseObject {
  const response: ResponseObject = {
    id: meta.id,
    object: "response",
    created_at: meta.createdAt,
    status: meta.status,
    background: req.background ?? false,
    error: null,
    incomplete_details: null,
    instructions: req.instructions ?? null,
    max_output_tokens: req.max_output_tokens ?? null,
    metadata: req.metadata ?? {},
    model: meta.model,
    output: [],
    parallel_tool_calls: req.parallel_tool_calls ?? true,
    previous_response_id: meta.previousResponseId ?? req.previous_response_id ?? null,
    reasoning: normaliseReasoning(req.reasoning),
    store: req.store ?? true,
    temperature: req.temperature ?? 1,
    text: req.text ?? { format: { type: "text" } },
    tool_choice: req.tool_choice ?? "auto",
    tools: req.tools ?? [],
    top_p: req.top_p ?? 1,
    truncation: req.truncation ?? "disabled",
    usage: null,
  };
  // Echoed as sent, like OpenAI does, only when the client set them.
  for (const key of ECHOED_WHEN_SET) if (req[key] !== undefined) response[key] = req[key];
  return response;
}

const ECHOED_WHEN_SET = ["user", "top_logprobs", "max_tool_calls", "prompt_cache_key", "safety_identifier", "service_tier", "prompt"] as const;

function normaliseReasoning(reasoning: JsonObject | null | undefined): JsonObject {
  return { effort: reasoning?.effort ?? null, summary: reasoning?.summary ?? null };
}

export function emptyUsage(): Usage {
  return {
    input_tokens: 0,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 0,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 0,
  };
}

/** Concatenated `output_text` parts of the assistant messages (what SDKs expose as `output_text`). */
export function outputText(response: Pick<ResponseObject, "output">): string {
  let text = "";
  for (const item of response.output) {
    if (item.type !== "message" || !Array.isArray(item.content)) continue;
    for (const part of item.content as Item[]) {
      if (part.type === "output_text" && typeof part.text === "string") text += part.text;
    }
  }
  return text;
}
