/**
 * POST /v1/responses body -> POST /v1/chat/completions body (the translated path).
 * Messages come from request-input.ts; this file maps tools, tool_choice, text format
 * and sampling options. Pure: errors are thrown as TranslationError naming the param (errors.ts maps it to a 400).
 */
import { untranslatable } from "../errors.js";
import type { ChatMessage, CreateResponseRequest, Item, JsonObject } from "../../wire/types.js";
import type { ChatRequestBody, ChatTool, ToolNameMap } from "./chat-types.js";
import { emptyToolNameMap } from "./chat-types.js";
import { itemsToChatMessages, type CompactionOptions } from "./request-input.js";
import { chatNameFor, registerNamespaced } from "./tool-names.js";

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
  const { tools, droppedTools, toolNames, dropped } = mapTools(req.tools, opts.hostedTools);

  const messages: ChatMessage[] = [];
  if (typeof req.instructions === "string" && req.instructions) messages.push({ role: "system", content: req.instructions });
  for (const m of itemsToChatMessages(items, { developerRole: opts.developerRole, toolNames, historyItems: opts.historyItems, compaction: opts.compaction })) {
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

interface MappedTools {
  tools: ChatTool[];
  droppedTools: string[];
  toolNames: ToolNameMap;
  /** Hosted tool types that were dropped (a tool_choice naming one falls back to auto). */
  dropped: Set<string>;
}

function mapTools(input: JsonObject[] | undefined, hosted: "drop" | "reject"): MappedTools {
  const out: MappedTools = { tools: [], droppedTools: [], toolNames: emptyToolNameMap(), dropped: new Set() };
  if (input === undefined || input === null) return out;
  if (!Array.isArray(input)) throw untranslatable("'tools' must be an array.", "tools");
  const taken = new Set<string>();
  for (const tool of input) if (tool?.type === "function" && typeof tool.name === "string") taken.add(tool.name);

  const hostedTool = (type: string, param: string) => {
    if (hosted === "reject") {
      throw untranslatable(`Tools of type '${type}' are not supported for this model: only function tools can be used.`, param);
    }
    out.droppedTools.push(type);
    out.dropped.add(type);
  };

  input.forEach((tool, i) => {
    const type = tool?.type;
    if (typeof type !== "string" || !type) throw untranslatable("Each tool needs a 'type'.", `tools[${i}].type`);
    if (type === "function") {
      out.tools.push(functionTool(tool, `tools[${i}]`, tool.name as string));
    } else if (type === "namespace") {
      const ns = tool.name;
      if (typeof ns !== "string" || !ns) throw untranslatable("A namespace tool needs a 'name'.", `tools[${i}].name`);
      if (!Array.isArray(tool.tools)) throw untranslatable("A namespace tool needs a 'tools' array.", `tools[${i}].tools`);
      (tool.tools as JsonObject[]).forEach((member, j) => {
        const at = `tools[${i}].tools[${j}]`;
        if (member?.type === "function") {
          if (typeof member.name !== "string" || !member.name) throw untranslatable("A function tool needs a 'name'.", `${at}.name`);
          out.tools.push(functionTool(member, at, registerNamespaced(out.toolNames, taken, ns, member.name)));
        } else if (typeof member?.type === "string" && member.type) {
          hostedTool(member.type, `${at}.type`);
        } else {
          throw untranslatable("Each tool needs a 'type'.", `${at}.type`);
        }
      });
    } else {
      // Every other type is a tool OpenAI runs itself (web_search, file_search, mcp, ...)
      // or one chat cannot express (custom/freeform): a chat backend cannot honour it.
      hostedTool(type, `tools[${i}].type`);
    }
  });
  return out;
}

function functionTool(tool: JsonObject, at: string, chatName: string): ChatTool {
  if (typeof tool.name !== "string" || !tool.name) throw untranslatable("A function tool needs a 'name'.", `${at}.name`);
  const fn: ChatTool["function"] = { name: chatName };
  if (typeof tool.description === "string") fn.description = tool.description;
  if (tool.parameters !== undefined && tool.parameters !== null) fn.parameters = tool.parameters;
  if (typeof tool.strict === "boolean") fn.strict = tool.strict;
  return { type: "function", function: fn };
}

function mapToolChoice(choice: unknown, dropped: Set<string>, toolNames: ToolNameMap): ChatRequestBody["tool_choice"] | undefined {
  if (choice === undefined || choice === null) return undefined;
  if (choice === "auto" || choice === "none" || choice === "required") return choice;
  if (typeof choice !== "object" || Array.isArray(choice)) {
    throw untranslatable(`Invalid tool_choice '${String(choice)}': expected "auto", "none", "required" or an object.`, "tool_choice");
  }
  const c = choice as JsonObject;
  if (c.type === "function") {
    if (typeof c.name !== "string" || !c.name) throw untranslatable("tool_choice of type 'function' needs a 'name'.", "tool_choice.name");
    const ns = typeof c.namespace === "string" && c.namespace ? c.namespace : undefined;
    return { type: "function", function: { name: chatNameFor(toolNames, c.name, ns) } };
  }
  if (c.type === "allowed_tools") {
    // Chat backends rarely know allowed_tools; keep its mode, the tools stay listed.
    return c.mode === "required" ? "required" : "auto";
  }
  if (typeof c.type === "string" && dropped.has(c.type)) return "auto";
  throw untranslatable(`tool_choice names a tool of type '${String(c.type)}', which is not available for this model.`, "tool_choice.type");
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
