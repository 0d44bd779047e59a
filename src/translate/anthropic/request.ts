/**
 * What src/translate/anthropic/ holds:
 * `kind: anthropic`: Responses <-> the Messages API: request mapping (`request.ts` with the
 * Messages shape of tools, input items in `request-input.ts`, content blocks in `content.ts`),
 * cache breakpoints (`cache.ts`), answer mapping (`response.ts`), the Messages event-stream state
 * machine (`stream.ts`) and its text deltas read by shape (`delta-shape.ts`), thinking blocks in
 * `encrypted_content` (`types.ts`), the API version's traits and headers (`version.ts`), Anthropic
 * errors as OpenAI's (`errors.ts`)
 */
/**
 * POST /v1/responses body -> POST /v1/messages body. Input items come from request-input.ts;
 * this file maps tools, tool_choice, the text format, thinking, sampling and metadata, for the
 * API version the endpoint speaks (version.ts), and places the cache breakpoints (cache.ts).
 * Pure: errors are thrown as TranslationError naming the param (a 400 for the client).
 */
import { untranslatable } from "../errors.js";
import type { CreateResponseRequest, Item, JsonObject } from "../../wire/types.js";
import type { ToolNameMap } from "../chat/chat-types.js";
import type { CompactionOptions } from "../chat/request-input.js";
import { customToolSpec } from "../custom-tools.js";
import { mapTools, readToolChoice, type ToolShapes } from "../tools.js";
import { fitRequest } from "../truncation.js";
import type { FileOptions } from "../chat/files.js";
import { placeBreakpoints } from "./cache.js";
import { itemsToMessages, type BuiltMessage } from "./request-input.js";
import type { MessageParam, MessagesRequest, Tool, ToolChoice } from "./types.js";
import type { VersionTraits } from "./version.js";

export type Effort = "minimal" | "low" | "medium" | "high" | "xhigh";

export interface AnthropicRequestOptions {
  upstreamModel: string;
  stream: boolean;
  version: VersionTraits;
  /** max_tokens when the request sets no max_output_tokens (Anthropic requires it). */
  defaultMaxTokens: number;
  /** thinking budget per reasoning effort; 0: no thinking at that effort. */
  thinkingBudget: Record<Effort, number>;
  promptCaching: boolean;
  /** `text.format: json_schema` as a forced tool, or as `output_config.format`. */
  structuredOutput: "tool" | "native";
  /** Tools other than function/custom/namespace: drop them (listed in droppedTools) or answer 400. */
  hostedTools: "drop" | "reject";
  historyItems?: number;
  compaction?: CompactionOptions;
  /** Contents of the request's `file_url`s, fetched by the service (content.ts). */
  files?: FileOptions;
  /** The model's context window: the input is fitted to it per `truncation` (../truncation.ts). */
  contextWindow?: number;
}

export interface AnthropicRequestResult {
  body: MessagesRequest;
  droppedTools: string[];
  toolNames: ToolNameMap;
  /** The tool whose input is the structured answer (text.format by tool), shown as output_text. */
  answerTool: string | null;
  /** reasoning.summary was asked: thinking is shown as a summary rather than reasoning_text. */
  thinkingAsSummary: boolean;
}

const EFFORTS = new Set(["minimal", "low", "medium", "high", "xhigh"]);
const MIN_THINKING = 1024;

export function responsesToMessagesRequest(req: CreateResponseRequest, items: Item[], opts: AnthropicRequestOptions): AnthropicRequestResult {
  if (req.prompt != null) {
    throw untranslatable("Stored prompt templates ('prompt') need an OpenAI-hosted model; this model is served by an Anthropic backend.", "prompt", "unsupported_parameter");
  }
  const { tools, droppedTools, toolNames, dropped } = mapTools(req.tools, opts.hostedTools, items, opts.historyItems ?? 0, ANTHROPIC_TOOLS);
  const sent = fitRequest(req, items, opts.historyItems ?? 0, opts.contextWindow);
  const input = itemsToMessages(sent.items, { systemMessages: opts.version.systemMessages, toolNames, historyItems: sent.historyItems, compaction: opts.compaction, files: opts.files });
  const system = input.system;
  if (typeof req.instructions === "string" && req.instructions) system.unshift({ type: "text", text: req.instructions });
  if (!input.messages.some((m) => m.role !== "system")) {
    throw untranslatable("The input has no user or assistant message: an Anthropic model needs at least one.", "input", "invalid_value");
  }

  const maxTokens = typeof req.max_output_tokens === "number" ? req.max_output_tokens : null;
  let choice = mapToolChoice(req.tool_choice, dropped, toolNames, tools.length > 0);
  // Anthropic does not think while a tool is forced: the client's forced choice wins over its effort.
  const forced = choice?.type === "any" || choice?.type === "tool";
  const budget = forced ? null : thinkingBudget(req, opts, maxTokens, input.messages);
  const body: MessagesRequest = { model: opts.upstreamModel, max_tokens: maxTokens ?? opts.defaultMaxTokens + (budget ?? 0), messages: [] };
  if (budget !== null) body.thinking = { type: "enabled", budget_tokens: budget };

  const answer = answerFormat(req.text, opts.structuredOutput);
  let answerTool: string | null = null;
  if (answer?.kind === "native") body.output_config = { format: { type: "json_schema", schema: answer.schema } };
  else if (answer?.kind === "tool") {
    const clientTools = tools.length > 0;
    answerTool = freeName(answer.name, tools);
    // The format's own description says what the answer is (chat backends get it in json_schema).
    const about = answer.description ? `\n\nThe answer: ${answer.description}` : "";
    tools.push({ name: answerTool, description: `Give the final answer: its input is the answer, in the requested format.${about}`, input_schema: answer.schema as Tool["input_schema"] });
    choice = answerChoice(choice, answerTool, budget !== null, clientTools);
    if (budget !== null) system.push({ type: "text", text: `Give your final answer by calling the tool '${answerTool}' with the answer as its input.` });
  }
  if (tools.length) {
    body.tools = tools;
    if (choice) {
      if (req.parallel_tool_calls === false && choice.type !== "none") choice.disable_parallel_tool_use = true;
      body.tool_choice = choice;
    } else if (req.parallel_tool_calls === false) body.tool_choice = { type: "auto", disable_parallel_tool_use: true };
  } else {
    // Anthropic takes tool_use/tool_result blocks only in a request that defines tools: a turn
    // without tools after a tool loop names the tools its history used, none of them callable.
    const used = historyToolNames(input.messages);
    if (used.length) {
      body.tools = used.map((name) => ({ name, description: "Not available in this turn.", input_schema: { type: "object" } }));
      body.tool_choice = { type: "none" };
    }
  }

  if (opts.promptCaching) placeBreakpoints(tools, system, input.messages);
  if (system.length) body.system = system;
  body.messages = input.messages as MessageParam[];

  if (opts.version.sampling && budget === null) {
    // Anthropic's range is 0..1 where OpenAI's is 0..2.
    if (typeof req.temperature === "number") body.temperature = Math.min(1, req.temperature);
    if (typeof req.top_p === "number") body.top_p = req.top_p;
  }
  const stop = stopSequences(req.stop);
  if (stop) body.stop_sequences = stop;
  const user = userId(req);
  if (user) body.metadata = { user_id: user };
  // OpenAI's standard tier asked for by name: Anthropic's standard capacity only (its default may use priority).
  if (req.service_tier === "default") body.service_tier = "standard_only";
  if (opts.stream) body.stream = true;
  return { body, droppedTools, toolNames, answerTool, thinkingAsSummary: wantsSummary(req) };
}

/** The thinking budget for the request's effort, or null for no thinking. */
function thinkingBudget(req: CreateResponseRequest, opts: AnthropicRequestOptions, maxTokens: number | null, messages: BuiltMessage[]): number | null {
  const effort = req.reasoning?.effort;
  if (typeof effort !== "string" || !EFFORTS.has(effort)) return null;
  let budget = opts.thinkingBudget[effort as Effort] ?? 0;
  // Thinking counts toward max_tokens (Anthropic wants it below): a client's cap keeps a quarter for the answer.
  if (maxTokens !== null) budget = Math.min(budget, Math.floor((maxTokens * 3) / 4));
  if (budget < MIN_THINKING) return null;
  // A tool loop whose last assistant turn came without its thinking (sent back without
  // encrypted_content) cannot be continued with thinking on: Anthropic rejects it.
  return lastTurnLacksThinking(messages) ? null : budget;
}

function lastTurnLacksThinking(messages: BuiltMessage[]): boolean {
  const last = messages.findLastIndex((m) => m.role === "assistant");
  if (last < 0) return false;
  const after = messages.slice(last + 1);
  if (after.length === 0 || !after.every((m) => m.role === "user" && m.content.some((b) => b.type === "tool_result"))) return false;
  const first = messages[last]!.content[0];
  return first?.type !== "thinking" && first?.type !== "redacted_thinking";
}

function historyToolNames(messages: BuiltMessage[]): string[] {
  const names = new Set<string>();
  for (const m of messages) for (const b of m.content) if (b.type === "tool_use") names.add(b.name);
  return [...names];
}

function wantsSummary(req: CreateResponseRequest): boolean {
  const s = req.reasoning?.summary ?? req.reasoning?.generate_summary;
  return s === "auto" || s === "concise" || s === "detailed";
}

/** The Messages shape of a function tool and of a freeform custom tool (one string parameter `input`). */
const ANTHROPIC_TOOLS: ToolShapes<Tool> = {
  function: (tool, at, name) => {
    const params = tool.parameters;
    if (params !== undefined && params !== null && (typeof params !== "object" || Array.isArray(params))) throw untranslatable("A function tool's 'parameters' must be a JSON Schema object.", `${at}.parameters`);
    // Anthropic requires an object schema; a function without parameters takes an empty object.
    const schema = (params as JsonObject | null | undefined) ?? { type: "object", properties: {} };
    const out: Tool = { name, input_schema: (schema.type === undefined ? { ...schema, type: "object" } : schema) as Tool["input_schema"] };
    if (typeof tool.description === "string" && tool.description) out.description = tool.description;
    return out;
  },
  custom: (tool, name) => {
    const spec = customToolSpec(tool);
    return { name, description: spec.description, input_schema: spec.parameters as Tool["input_schema"] };
  },
};

type Choice = Exclude<ToolChoice, { type: "none" }> | { type: "none"; disable_parallel_tool_use?: never };

function mapToolChoice(choice: unknown, dropped: Set<string>, toolNames: ToolNameMap, haveTools: boolean): Choice | null {
  const form = readToolChoice(choice, dropped, toolNames);
  switch (form?.type) {
    case "none":
      return { type: "none" };
    case "required":
      return haveTools ? { type: "any" } : null;
    case "named":
      return { type: "tool", name: form.name };
    case "allowed":
      // Anthropic has no allow-list: one allowed tool that must be called is that tool forced; more, any tool.
      if (form.mode !== "required" || !haveTools) return null;
      return form.only ? { type: "tool", name: form.only } : { type: "any" };
    default:
      return null;
  }
}

/** The tool choice once the answer tool exists: the client's own tools stay callable, the answer is the way to finish. */
function answerChoice(choice: Choice | null, answerTool: string, thinking: boolean, clientTools: boolean): Choice {
  // Anthropic does not force a tool while thinking: the model is told to use it instead.
  if (thinking) return { type: "auto" };
  if (choice?.type === "tool") return choice;
  if (clientTools && (choice === null || choice.type === "any")) return { type: "any" };
  return { type: "tool", name: answerTool };
}

type AnswerFormat = { kind: "native"; schema: JsonObject } | { kind: "tool"; name: string; schema: JsonObject; description?: string };

function answerFormat(text: JsonObject | undefined, structured: "tool" | "native"): AnswerFormat | null {
  const format = text?.format as JsonObject | undefined;
  if (!format || format.type === "text" || format.type === undefined) return null;
  if (format.type === "json_object") return { kind: "tool", name: "json_answer", schema: { type: "object", additionalProperties: true } };
  if (format.type !== "json_schema") throw untranslatable(`Unsupported text.format type '${String(format.type)}'.`, "text.format.type");
  if (typeof format.name !== "string" || !format.name) throw untranslatable("text.format of type 'json_schema' needs a 'name'.", "text.format.name");
  const schema = format.schema;
  if (schema === undefined || schema === null || typeof schema !== "object" || Array.isArray(schema)) {
    throw untranslatable("text.format of type 'json_schema' needs a 'schema' object.", "text.format.schema");
  }
  if ((schema as JsonObject).type !== "object") throw untranslatable("text.format.schema must describe an object (its 'type' must be 'object').", "text.format.schema");
  if (structured === "native") return { kind: "native", schema: schema as JsonObject };
  return { kind: "tool", name: format.name, schema: schema as JsonObject, description: typeof format.description === "string" && format.description ? format.description : undefined };
}

function freeName(wanted: string, tools: Tool[]): string {
  const base = wanted.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, 60) || "answer";
  let name = base;
  for (let n = 2; tools.some((t) => t.name === name); n++) name = `${base}_${n}`;
  return name;
}

function stopSequences(stop: unknown): string[] | null {
  if (stop === undefined || stop === null) return null;
  const list = typeof stop === "string" ? [stop] : Array.isArray(stop) ? stop : null;
  if (!list || !list.every((s) => typeof s === "string")) throw untranslatable("'stop' must be a string or an array of strings.", "stop");
  // Anthropic rejects stop sequences that are only whitespace.
  const kept = (list as string[]).filter((s) => s.trim() !== "");
  return kept.length ? kept : null;
}

function userId(req: CreateResponseRequest): string | null {
  const fromMetadata = req.metadata?.user_id;
  for (const v of [fromMetadata, req.safety_identifier, req.user]) if (typeof v === "string" && v) return v;
  return null;
}
