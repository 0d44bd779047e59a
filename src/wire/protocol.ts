/**
 * What src/wire/ holds:
 * the wire vocabulary: the Responses constants (`protocol.ts`: statuses, lifecycle/terminal event
 * types, item/content/tool types, roles), wire shapes (`types.ts`), stream events the router
 * builds checked at compile time against the `openai` package (`emitted.ts`), id generation
 * (`ids.ts`), the clock in the API's seconds given to the translation cores (`clock.ts`), sorted-
 * key JSON for cache keys (`canonical-json.ts`), stream events' JSON without walking the common
 * ones (`event-json.ts`), the `EventSink` and SSE body services write through (`sse-writer.ts`),
 * the SSE frame parser every event stream the router reads goes through (`sse-parser.ts`: a
 * model's upstream, an MCP server's answers; `frameBounds` finds the frames of a read laid out as
 * `sse-writer.ts` writes them, by its bytes), sealing of the router's compaction items (`seal.ts`:
 * AES-256-GCM, random nonce, `rrc1.` prefix, key by HKDF from `compaction.key`)
 */
/**
 * The Responses API vocabulary the router speaks: statuses, stream event types, item
 * types, roles, content part and tool types. One list per fact; docs/protocol.md
 * explains them. Values only - wire shapes are in types.ts.
 */
import type { Reasoning } from "openai/resources/shared";
import type { ResponseTextConfig, ServiceTier } from "openai/resources/responses/responses";

export const RESPONSE_STATUSES = ["queued", "in_progress", "completed", "incomplete", "failed", "cancelled"] as const;
export type ResponseStatus = (typeof RESPONSE_STATUSES)[number];

/** Statuses a response never leaves. */
export const FINISHED_STATUSES: ReadonlySet<string> = new Set<ResponseStatus>(["completed", "incomplete", "failed", "cancelled"]);
export const isFinished = (status: string): boolean => FINISHED_STATUSES.has(status);

/** Events that carry the whole `response` object. */
export const LIFECYCLE_EVENTS: ReadonlySet<string> = new Set([
  "response.created",
  "response.in_progress",
  "response.queued",
  "response.completed",
  "response.incomplete",
  "response.failed",
  "response.cancelled",
]);

/**
 * Lifecycle events after which a stream has nothing more to say. OpenAI never sends
 * `response.cancelled` (strict clients throw on it, so the router never emits it), but
 * an upstream that did would end its stream with it.
 */
export const TERMINAL_EVENTS: ReadonlySet<string> = new Set(["response.completed", "response.incomplete", "response.failed", "response.cancelled"]);

/**
 * The terminal event a finished response's stream ends with. `cancelled` has none of
 * its own: where the router must end a cancelled stream it uses `response.incomplete`
 * (see responses/background/events.ts terminalEvent).
 */
export const TERMINAL_EVENT_FOR_STATUS: Partial<Record<ResponseStatus, string>> = {
  completed: "response.completed",
  incomplete: "response.incomplete",
  failed: "response.failed",
};

/** `role` of a message item. */
export const MESSAGE_ROLES: ReadonlySet<string> = new Set(["user", "assistant", "system", "developer"]);

/** Content part types a message item in the input may hold. */
export const INPUT_CONTENT_TYPES: ReadonlySet<string> = new Set([
  "input_text",
  "input_image",
  "input_file",
  "input_audio",
  "output_text",
  "refusal",
  "text",
  "summary_text",
  "reasoning_text",
]);

/** Item types accepted in `input` (openai-node 7.x `ResponseInputItem`, plus Codex's items). */
export const INPUT_ITEM_TYPES: ReadonlySet<string> = new Set([
  "message",
  "function_call",
  "function_call_output",
  "reasoning",
  "item_reference",
  "custom_tool_call",
  "custom_tool_call_output",
  "web_search_call",
  "file_search_call",
  "computer_call",
  "computer_call_output",
  "local_shell_call",
  "local_shell_call_output",
  "mcp_call",
  "mcp_list_tools",
  "mcp_approval_request",
  "mcp_approval_response",
  "image_generation_call",
  "code_interpreter_call",
  "compaction",
  "compaction_trigger",
  "shell_call",
  "shell_call_output",
  "apply_patch_call",
  "apply_patch_call_output",
  "tool_search_call",
  "tool_search_output",
  "additional_tools",
  "configuration_update",
  "program",
  "program_output",
]);

/**
 * Tool types the Responses API defines (openai-node 7.x `Tool` union, plus Codex's
 * `namespace`); dated variants such as `web_search_preview_2025_03_11` are accepted
 * for any of them. Hosted ones pass through natively and are dropped (or rejected,
 * per model) on chat backends; anything else is a client error on every path.
 */
export const TOOL_TYPES: ReadonlySet<string> = new Set([
  "function",
  "namespace",
  "custom",
  "file_search",
  "web_search",
  "web_search_preview",
  "computer",
  "computer_use",
  "computer_use_preview",
  "mcp",
  "code_interpreter",
  "image_generation",
  "local_shell",
  "shell",
  "apply_patch",
  "tool_search",
  "programmatic_tool_calling",
]);

/**
 * The values a Responses request may give these fields, as the openai package types them: a
 * `Record` over the type's union, so a value the package adds or drops fails to compile here.
 */
export const REASONING_EFFORTS = members<NonNullable<Reasoning["effort"]>>({ none: true, minimal: true, low: true, medium: true, high: true, xhigh: true, max: true });
export const REASONING_SUMMARIES = members<NonNullable<Reasoning["summary"]>>({ auto: true, concise: true, detailed: true });
export const TEXT_VERBOSITIES = members<NonNullable<ResponseTextConfig["verbosity"]>>({ low: true, medium: true, high: true });
export const SERVICE_TIERS = members<NonNullable<ServiceTier>>({ auto: true, default: true, flex: true, scale: true, priority: true, fast: true, ultrafast: true });

function members<U extends string>(all: Record<U, true>): readonly U[] {
  return Object.keys(all) as U[];
}

/** The `include` value that asks for reasoning items' `encrypted_content`. */
export const ENCRYPTED_REASONING = "reasoning.encrypted_content";

/**
 * A reasoning item sent back by its id without its `encrypted_content` (a client that did not ask
 * for ENCRYPTED_REASONING, the Agents SDK's and LangChain's default): OpenAI resolves it from what
 * it stored, and so does the router (responses/create/references.ts).
 */
export const isBareReasoning = (i: { type?: unknown; id?: unknown; encrypted_content?: unknown }): boolean =>
  i.type === "reasoning" && typeof i.id === "string" && !i.encrypted_content;
