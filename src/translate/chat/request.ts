/**
 * What src/translate/chat/ holds:
 * `kind: chat`: Responses <-> chat completions: request mapping (messages, the chat shape of
 * tools, file and audio parts), answer mapping, the chunk-stream state machine, tool names,
 * compaction framing
 */
/**
 * POST /v1/responses body -> POST /v1/chat/completions body (the translated path).
 * Messages come from request-input.ts, tools and tool_choice from tools.ts; this file maps
 * text format and sampling options. Pure: errors are thrown as TranslationError naming the param (errors.ts maps it to a 400).
 */
import { untranslatable } from "../errors.js";
import type { ChatMessage, CreateResponseRequest, Item, JsonObject } from "../../wire/types.js";
import type { ChatRequestBody, ToolNameMap } from "./chat-types.js";
import { itemsToChatMessages, type CompactionOptions, type FileOptions } from "./request-input.js";
import { mapToolChoice, mapTools } from "./tools.js";
import { fitRequest } from "../truncation.js";

export { normalizeInput } from "./request-input.js";

export interface ChatRequestOptions {
  /** The model name the chosen backend knows. */
  upstreamModel: string;
  stream: boolean;
  /** Role sent for `developer` messages (local chat templates often lack `developer`). */
  developerRole: "system" | "developer";
  /** Tools other than function/namespace: drop them (listed in droppedTools) or answer 400. */
  hostedTools: "drop" | "reject";
  /** How many leading `items` are history from previous_response_id: keeps `input[i]` params exact. */
  historyItems?: number;
  /** Compaction items: how to open them and the user-message budget (request-input.ts). */
  compaction?: CompactionOptions;
  /** File inputs: fetched `file_url` contents, text-file inlining (request-input.ts). */
  files?: FileOptions;
  /** The model's context window: the input is fitted to it per `truncation` (truncation.ts). */
  contextWindow?: number;
}

export interface ChatRequestResult {
  body: ChatRequestBody;
  /** Types of the tools dropped (hostedTools === "drop"), in request order. */
  droppedTools: string[];
  toolNames: ToolNameMap;
}

const LOGPROBS_INCLUDE = "message.output_text.logprobs";
/** Options without a Responses counterpart that a client may still send: passed through as-is. */
const PASS_THROUGH = ["seed", "stop", "presence_penalty", "frequency_penalty"] as const;

export function responsesToChatRequest(req: CreateResponseRequest, items: Item[], opts: ChatRequestOptions): ChatRequestResult {
  const { tools, droppedTools, toolNames, dropped } = mapTools(req.tools, opts.hostedTools, items, opts.historyItems ?? 0);

  const sent = fitRequest(req, items, opts.historyItems ?? 0, opts.contextWindow);

  const messages: ChatMessage[] = [];
  if (typeof req.instructions === "string" && req.instructions) messages.push({ role: "system", content: req.instructions });
  for (const m of itemsToChatMessages(sent.items, { developerRole: opts.developerRole, toolNames, historyItems: sent.historyItems, compaction: opts.compaction, files: opts.files })) {
    messages.push(m);
  }

  if (req.prompt != null) {
    throw untranslatable("Stored prompt templates ('prompt') need an OpenAI-hosted model; this model is served by a chat-completions backend.", "prompt", "unsupported_parameter");
  }

  const body: ChatRequestBody = { model: opts.upstreamModel, messages };
  if (tools.length) {
    body.tools = tools;
    const choice = mapToolChoice(req.tool_choice, dropped, toolNames);
    if (choice !== undefined) body.tool_choice = choice;
    if (typeof req.parallel_tool_calls === "boolean") body.parallel_tool_calls = req.parallel_tool_calls;
  } else if (req.tool_choice !== undefined && req.tool_choice !== null) {
    mapToolChoice(req.tool_choice, dropped, toolNames); // still validated
  }

  const format = mapTextFormat(req.text);
  if (format) body.response_format = format;
  if (typeof req.max_output_tokens === "number") body.max_tokens = req.max_output_tokens;
  const effort = req.reasoning?.effort;
  if (typeof effort === "string") body.reasoning_effort = effort;
  if (typeof req.temperature === "number") body.temperature = req.temperature;
  if (typeof req.top_p === "number") body.top_p = req.top_p;
  if (typeof req.user === "string") body.user = req.user;
  const topLogprobs = req.top_logprobs;
  if (typeof topLogprobs === "number") body.top_logprobs = topLogprobs;
  if (typeof topLogprobs === "number" || (Array.isArray(req.include) && req.include.includes(LOGPROBS_INCLUDE))) {
    body.logprobs = true;
  }
  for (const key of PASS_THROUGH) if (req[key] !== undefined && req[key] !== null) body[key] = req[key];
  if (opts.stream) {
    body.stream = true;
    body.stream_options = { include_usage: true };
  }
  return { body, droppedTools, toolNames };
}

function mapTextFormat(text: JsonObject | undefined): JsonObject | undefined {
  const format = text?.format as JsonObject | undefined;
  if (!format || format.type === "text" || format.type === undefined) return undefined;
  if (format.type === "json_object") return { type: "json_object" };
  if (format.type === "json_schema") {
    if (typeof format.name !== "string" || !format.name) throw untranslatable("text.format of type 'json_schema' needs a 'name'.", "text.format.name");
    if (format.schema === undefined || format.schema === null || typeof format.schema !== "object") {
      throw untranslatable("text.format of type 'json_schema' needs a 'schema' object.", "text.format.schema");
    }
    const schema: JsonObject = { name: format.name, schema: format.schema };
    if (typeof format.strict === "boolean") schema.strict = format.strict;
    if (typeof format.description === "string") schema.description = format.description;
    return { type: "json_schema", json_schema: schema };
  }
  throw untranslatable(`Unsupported text.format type '${String(format.type)}'.`, "text.format.type");
}
