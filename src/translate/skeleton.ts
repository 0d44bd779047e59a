/**
 * What src/translate/ holds:
 * the PURE translation cores, one folder per backend kind; no I/O, no clock of their own (ids and
 * the clock injected); imports only `wire/`. At its root what the kinds share: the response
 * skeleton (`skeleton.ts`), the events a translated stream opens with (`stream-opening.ts`),
 * replay of a finished response as events (`replay.ts`), fitting the input into a model's context
 * window per `truncation` (`truncation.ts`), the walk over a request's tools with hoisted
 * `additional_tools` and the one reading of its `tool_choice` (`tools.ts`, each kind giving its
 * own shape), freeform `custom` tools as one-string-parameter tools and their input decoded as it
 * streams (`custom-tools.ts`), the router's tool runs as the model's function calls (`hosted-
 * calls.ts`), reading input items' parts (`input-parts.ts`), a stream's text chunks read by their
 * shape without JSON.parse (`frame-shape.ts`), `TranslationError` (`errors.ts`: rejects what
 * cannot be translated, never an HTTP error)
 */
/**
 * The Response object with every field the protocol lists, before any output exists.
 * Every snapshot the router builds itself (the JSON path, the chat stream machine, the
 * background `queued` response, cache hits, cancelled and failed responses) starts from
 * it, so all snapshots of one response carry the same fields as OpenAI's own.
 */
import type { ResponseUsage } from "openai/resources/responses/responses";
import type { Clock } from "../wire/clock.js";
import type { CreateResponseRequest, EmittedResponse, Item, JsonObject, ResponseObject, ResponseStatus, Usage } from "../wire/types.js";

export interface SkeletonMeta {
  id: string;
  /** Seconds since the epoch (passed in: the core has no clock). */
  createdAt: number;
  /** The model name the client asked for (not the upstream name). */
  model: string;
  status: ResponseStatus;
  previousResponseId?: string | null;
  /**
   * When a skeleton made `completed` at once (no backend answered: a prepared or cached
   * answer) completed, in seconds; by default when it was created. Ignored for other statuses.
   */
  completedAt?: number;
}

export function responseSkeleton(req: CreateResponseRequest, meta: SkeletonMeta): ResponseObject {
  const response = {
    id: meta.id,
    object: "response",
    created_at: meta.createdAt,
    status: meta.status,
    completed_at: meta.status === "completed" ? (meta.completedAt ?? meta.createdAt) : null,
    background: req.background ?? false,
    error: null,
    incomplete_details: null,
    instructions: (req.instructions ?? null) as EmittedResponse["instructions"],
    max_output_tokens: req.max_output_tokens ?? null,
    max_tool_calls: (req.max_tool_calls as number | undefined) ?? null,
    metadata: req.metadata ?? {},
    model: meta.model,
    output: [],
    parallel_tool_calls: req.parallel_tool_calls ?? true,
    previous_response_id: meta.previousResponseId ?? req.previous_response_id ?? null,
    presence_penalty: req.presence_penalty ?? 0,
    frequency_penalty: req.frequency_penalty ?? 0,
    prompt_cache_key: (req.prompt_cache_key as string | undefined) ?? null,
    reasoning: normaliseReasoning(req.reasoning) as EmittedResponse["reasoning"],
    safety_identifier: (req.safety_identifier as string | undefined) ?? null,
    service_tier: (req.service_tier as EmittedResponse["service_tier"]) ?? "auto",
    store: req.store ?? true,
    temperature: req.temperature ?? 1,
    text: { format: { type: "text" }, verbosity: "medium", ...req.text } as EmittedResponse["text"],
    tool_choice: (req.tool_choice ?? "auto") as EmittedResponse["tool_choice"],
    tools: echoTools(req.tools) as unknown as EmittedResponse["tools"],
    top_logprobs: (req.top_logprobs as number | undefined) ?? 0,
    top_p: req.top_p ?? 1,
    truncation: (req.truncation ?? "disabled") as EmittedResponse["truncation"],
    usage: null,
    access_programs: null,
  } satisfies EmittedResponse as ResponseObject;
  // Echoed as sent, like OpenAI does, only when the client set them.
  for (const key of ECHOED_WHEN_SET) if (req[key] !== undefined) response[key] = req[key];
  return response;
}

/**
 * `completed_at` of a response that ends in `status`: the time it completed (read from the
 * clock now), null for any other end (incomplete, failed, cancelled) and while it runs.
 */
export function completedAt(status: string, clock: Clock): number | null {
  return status === "completed" ? clock() : null;
}

/** `response` as it ends in failure: `failed`, with `error`, and no completion time. */
export function failedResponse(response: ResponseObject, error: { code: string; message: string }): ResponseObject {
  return { ...response, status: "failed", completed_at: null, error };
}

const ECHOED_WHEN_SET = ["conversation", "user", "prompt", "prompt_cache_retention"] as const;

/**
 * Tools as OpenAI echoes them: a function tool gets its defaults (strict: true, description and
 * parameters null); an MCP tool's `headers` and `authorization` (credentials for its server)
 * never come back.
 */
function echoTools(tools: JsonObject[] | undefined): JsonObject[] {
  if (!tools) return [];
  return tools.map((tool) => {
    if (tool.type === "function") return { ...tool, description: tool.description ?? null, parameters: tool.parameters ?? null, strict: tool.strict ?? true };
    if (tool.type === "mcp" && (tool.headers != null || tool.authorization !== undefined)) {
      const { authorization: _token, ...rest } = tool;
      return { ...rest, headers: null };
    }
    return tool;
  });
}

function normaliseReasoning(reasoning: JsonObject | null | undefined): JsonObject {
  return { effort: reasoning?.effort ?? null, summary: reasoning?.summary ?? null };
}

export function emptyUsage(): Usage {
  return {
    input_tokens: 0,
    input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
    output_tokens: 0,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 0,
  } satisfies ResponseUsage;
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
