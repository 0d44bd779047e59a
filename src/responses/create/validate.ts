import { invalidRequest } from "../../ops/errors.js";
import { INPUT_CONTENT_TYPES, INPUT_ITEM_TYPES, MESSAGE_ROLES, REASONING_EFFORTS, REASONING_SUMMARIES, SERVICE_TIERS, TEXT_VERBOSITIES, TOOL_TYPES } from "../../wire/protocol.js";
import { checkInclude } from "../items/include.js";
import type { CreateResponseRequest, JsonObject } from "../../wire/types.js";

/**
 * Checks a POST /v1/responses body the way OpenAI does: clear messages naming
 * the offending `param`. Unknown top-level fields are kept (native pass-through
 * forwards them); the router's own extension `router` is validated here too.
 */
export function validateCreateRequest(body: unknown): CreateResponseRequest {
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    throw invalidRequest("The request body must be a JSON object.", null, "invalid_type");
  }
  const b = body as JsonObject;
  if (b.model === undefined || b.model === null || b.model === "") {
    throw invalidRequest("Missing required parameter: 'model'.", "model", "missing_required_parameter");
  }
  expectType(b, "model", "string");
  if (b.input === undefined && b.previous_response_id == null && b.conversation == null && b.prompt == null) {
    throw invalidRequest("Missing required parameter: 'input'.", "input", "missing_required_parameter");
  }
  if (b.input !== undefined && typeof b.input !== "string" && !Array.isArray(b.input)) {
    throw invalidType("input", "a string or an array of input items", b.input);
  }
  if (Array.isArray(b.input)) b.input.forEach((item, i) => checkItem(item, `input[${i}]`));
  expectType(b, "instructions", "string", true);
  expectType(b, "previous_response_id", "string", true);
  if (typeof b.previous_response_id === "string" && !/^resp_[A-Za-z0-9_-]{1,200}$/.test(b.previous_response_id)) {
    throw invalidRequest(
      `Invalid 'previous_response_id': '${truncate(b.previous_response_id)}'. Expected an ID that begins with 'resp'.`,
      "previous_response_id",
      "invalid_value",
    );
  }
  if (b.conversation != null) checkConversation(b);
  for (const k of ["stream", "store", "background", "parallel_tool_calls"]) expectType(b, k, "boolean", true);
  for (const k of ["temperature", "top_p", "presence_penalty", "frequency_penalty"]) expectType(b, k, "number", true);
  for (const k of ["max_output_tokens", "top_logprobs", "max_tool_calls"]) expectInteger(b, k, INT32_MAX);
  expectInteger(b, "seed", Number.MAX_SAFE_INTEGER);
  checkRange(b, "temperature", 0, 2);
  checkRange(b, "top_p", 0, 1);
  for (const k of ["presence_penalty", "frequency_penalty"]) checkRange(b, k, -2, 2);
  checkRange(b, "top_logprobs", 0, 20, "integer");
  checkRange(b, "max_output_tokens", 1, INT32_MAX, "integer");
  if (b.tools !== undefined && b.tools !== null) {
    if (!Array.isArray(b.tools)) throw invalidType("tools", "an array", b.tools);
    b.tools.forEach((t, i) => checkTool(t, `tools[${i}]`));
  }
  if (b.tool_choice !== undefined && b.tool_choice !== null) {
    checkToolChoice(b.tool_choice);
    // A prompt template may bring its own tools: only the request's own list is known here.
    if (b.prompt == null) checkNamedToolChosen(b.tool_choice as JsonObject | string, b.tools);
  }
  expectType(b, "text", "object", true);
  expectType(b, "reasoning", "object", true);
  expectType(b, "metadata", "object", true);
  for (const k of ["user", "prompt_cache_key", "safety_identifier"]) expectType(b, k, "string", true);
  if (b.text) checkText(b.text as JsonObject);
  if (b.reasoning) {
    const r = b.reasoning as JsonObject;
    checkEnum(r.effort, REASONING_EFFORTS, "reasoning.effort");
    checkEnum(r.summary, REASONING_SUMMARIES, "reasoning.summary");
    checkEnum(r.generate_summary, REASONING_SUMMARIES, "reasoning.generate_summary");
  }
  checkEnum(b.service_tier, SERVICE_TIERS, "service_tier");
  if (b.metadata && typeof b.metadata === "object") checkMetadata(b.metadata as JsonObject);
  if (b.include !== undefined && b.include !== null) {
    if (!Array.isArray(b.include) || b.include.some((x) => typeof x !== "string")) throw invalidType("include", "an array of strings", b.include);
    checkInclude(b.include as string[]);
  }
  checkEnum(b.truncation, ["auto", "disabled"], "truncation");
  // background with store:false is accepted: the router keeps the job's record until it finishes plus the storage TTL.
  if (b.router !== undefined) checkRouterExtension(b.router);
  return b as CreateResponseRequest;
}

const DATED = /_\d{4}_\d{2}_\d{2}$/;

export function checkItem(item: unknown, path: string): void {
  if (item === null || typeof item !== "object" || Array.isArray(item)) throw invalidType(path, "an object", item);
  const it = item as JsonObject;
  const type = it.type ?? (it.role !== undefined ? "message" : undefined);
  if (typeof type !== "string") throw invalidRequest(`Missing required parameter: '${path}.type'.`, `${path}.type`, "missing_required_parameter");
  if (!INPUT_ITEM_TYPES.has(type)) {
    throw invalidRequest(`Invalid value: '${truncate(type)}'. '${path}.type' is not a supported input item type.`, `${path}.type`, "invalid_value");
  }
  if (type === "message") {
    if (!MESSAGE_ROLES.has(it.role as string)) {
      throw invalidRequest(
        `Invalid value: '${truncate(String(it.role))}'. Supported values are: 'assistant', 'system', 'developer', and 'user'.`,
        `${path}.role`,
        "invalid_value",
      );
    }
    if (typeof it.content !== "string" && !Array.isArray(it.content)) throw invalidType(`${path}.content`, "a string or an array of content parts", it.content);
    if (Array.isArray(it.content)) {
      it.content.forEach((p, j) => {
        const pp = `${path}.content[${j}]`;
        if (p === null || typeof p !== "object") throw invalidType(pp, "an object", p);
        const pt = (p as JsonObject).type;
        if (!INPUT_CONTENT_TYPES.has(pt as string)) {
          throw invalidRequest(`Invalid value: '${truncate(String(pt))}'. '${pp}.type' is not a supported content part type.`, `${pp}.type`, "invalid_value");
        }
        if ((pt === "input_text" || pt === "output_text") && typeof (p as JsonObject).text !== "string") throw invalidType(`${pp}.text`, "a string", (p as JsonObject).text);
      });
    }
  } else if (type === "function_call") {
    for (const k of ["call_id", "name", "arguments"]) {
      if (typeof it[k] !== "string") throw invalidRequest(`Missing required parameter: '${path}.${k}'.`, `${path}.${k}`, "missing_required_parameter");
    }
  } else if (type === "function_call_output") {
    if (typeof it.call_id !== "string") throw invalidRequest(`Missing required parameter: '${path}.call_id'.`, `${path}.call_id`, "missing_required_parameter");
    if (typeof it.output !== "string" && !Array.isArray(it.output)) throw invalidType(`${path}.output`, "a string or an array", it.output);
  } else if (type === "item_reference") {
    if (typeof it.id !== "string") throw invalidRequest(`Missing required parameter: '${path}.id'.`, `${path}.id`, "missing_required_parameter");
  }
}

function checkTool(tool: unknown, path: string): void {
  if (tool === null || typeof tool !== "object" || Array.isArray(tool)) throw invalidType(path, "an object", tool);
  const t = tool as JsonObject;
  if (typeof t.type !== "string") throw invalidRequest(`Missing required parameter: '${path}.type'.`, `${path}.type`, "missing_required_parameter");
  if (!TOOL_TYPES.has(t.type.replace(DATED, ""))) {
    throw invalidRequest(`Invalid value: '${truncate(t.type)}'. '${path}.type' is not a supported tool type.`, `${path}.type`, "invalid_value");
  }
  if (t.type === "function" && (typeof t.name !== "string" || !/^[A-Za-z0-9_.:-]{1,128}$/.test(t.name))) {
    throw invalidRequest(
      typeof t.name !== "string" ? `Missing required parameter: '${path}.name'.` : `Invalid '${path}.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.`,
      `${path}.name`,
      typeof t.name !== "string" ? "missing_required_parameter" : "invalid_value",
    );
  }
  if (t.type === "function" && t.parameters != null && (typeof t.parameters !== "object" || Array.isArray(t.parameters))) {
    throw invalidType(`${path}.parameters`, "an object (a JSON Schema)", t.parameters);
  }
}

function checkToolChoice(choice: unknown): void {
  if (typeof choice === "string") return checkEnum(choice, ["none", "auto", "required"], "tool_choice");
  if (typeof choice !== "object" || Array.isArray(choice) || typeof (choice as JsonObject).type !== "string") {
    throw invalidType("tool_choice", "a string or an object with a 'type'", choice);
  }
  const c = choice as JsonObject;
  if ((c.type === "function" || c.type === "custom") && typeof c.name !== "string") {
    throw invalidRequest("Missing required parameter: 'tool_choice.name'.", "tool_choice.name", "missing_required_parameter");
  }
}

/**
 * A tool_choice naming one function or custom tool must name one the request offers: nothing
 * could satisfy it otherwise (a chat backend would be told to call a tool it was never shown).
 * OpenAI's answer, word for word.
 */
function checkNamedToolChosen(choice: JsonObject | string, tools: unknown): void {
  if (typeof choice !== "object" || (choice.type !== "function" && choice.type !== "custom")) return;
  const list = Array.isArray(tools) ? (tools as JsonObject[]) : [];
  // Tools an MCP server or a tool search brings are not in the request: nothing to check against.
  if (list.some((t) => t?.type === "mcp" || t?.type === "tool_search")) return;
  if (!offersTool(list, choice.type, choice.name)) throw invalidRequest(`Tool choice '${truncate(String(choice.name))}' not found in 'tools' parameter.`, "tool_choice");
}

/** Whether `tools` (and the tools of their namespaces, by their own or their qualified name) hold one of `type` named `name`. */
function offersTool(tools: JsonObject[], type: unknown, name: unknown, namespace?: string): boolean {
  return tools.some((t) => {
    if (t === null || typeof t !== "object") return false;
    if (t.type === "namespace" && Array.isArray(t.tools)) return offersTool(t.tools as JsonObject[], type, name, String(t.name));
    return t.type === type && (t.name === name || (namespace !== undefined && `${namespace}.${String(t.name)}` === name));
  });
}

/** `text`: its verbosity, and a json_schema format's name as OpenAI patterns it (the translators check the rest per kind). */
function checkText(text: JsonObject): void {
  checkEnum(text.verbosity, TEXT_VERBOSITIES, "text.verbosity");
  const format = text.format as JsonObject | null | undefined;
  if (format == null) return;
  if (typeof format !== "object" || Array.isArray(format)) throw invalidType("text.format", "an object", format);
  if (format.type === "json_schema" && typeof format.name === "string" && !/^[a-zA-Z0-9_-]{1,64}$/.test(format.name)) {
    throw invalidRequest(`Invalid 'text.format.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.`, "text.format.name", "invalid_value");
  }
}

/** `conversation`: an id or `{id}`, never together with `previous_response_id` (as at OpenAI). */
function checkConversation(b: JsonObject): void {
  const c = b.conversation;
  if (b.previous_response_id != null) {
    throw invalidRequest("Mutually exclusive parameters. Ensure you are only providing one of: 'previous_response_id' or 'conversation'.", null, "mutually_exclusive_parameters");
  }
  if (typeof c === "string") return checkConversationId(c, "conversation");
  if (typeof c !== "object" || Array.isArray(c)) throw invalidType("conversation", "a string or an object like {\"id\": \"conv_...\"}", c);
  const id = (c as JsonObject).id;
  if (id == null) throw invalidRequest("Missing required parameter: 'conversation.id'.", "conversation.id", "missing_required_parameter");
  if (typeof id !== "string") throw invalidType("conversation.id", "a string", id);
  checkConversationId(id, "conversation.id");
}

/** Conversation ids look like OpenAI's: `conv_...`. */
export function checkConversationId(id: string, param: string): void {
  if (!/^conv_[A-Za-z0-9_-]{1,200}$/.test(id)) {
    throw invalidRequest(`Invalid '${param}': '${truncate(id)}'. Expected an ID that begins with 'conv'.`, param, "invalid_value");
  }
}

export function checkMetadata(m: JsonObject): void {
  const entries = Object.entries(m);
  if (entries.length > 16) throw invalidRequest("Invalid 'metadata': too many properties. Expected at most 16.", "metadata", "object_above_max_properties");
  for (const [k, v] of entries) {
    if (typeof v !== "string") throw invalidType(`metadata.${k}`, "a string", v);
    if (k.length > 64 || v.length > 512) throw invalidRequest(`Invalid 'metadata.${truncate(k)}': keys are at most 64 and values at most 512 characters.`, `metadata.${k}`, "invalid_value");
  }
}

function checkRouterExtension(r: unknown): void {
  if (r === null || typeof r !== "object" || Array.isArray(r)) throw invalidType("router", "an object like {\"cache\": true}", r);
  const cache = (r as JsonObject).cache;
  if (cache !== undefined && typeof cache !== "boolean") throw invalidType("router.cache", "a boolean", cache);
}

type Kind = "string" | "boolean" | "number" | "object";

function expectType(b: JsonObject, key: string, kind: Kind, nullable = false): void {
  const v = b[key];
  if (v === undefined || (nullable && v === null)) return;
  const ok = kind === "object" ? typeof v === "object" && v !== null && !Array.isArray(v) : typeof v === kind && !(kind === "number" && !Number.isFinite(v));
  if (!ok) throw invalidType(key, KIND_NAMES[kind], v);
}

/** A number bounded as OpenAI bounds it (its type is checked before), refused with OpenAI's wording and code: "decimal" or "integer". */
function checkRange(b: JsonObject, key: string, min: number, max: number, kind: "decimal" | "integer" = "decimal"): void {
  const v = b[key];
  if (typeof v !== "number") return;
  if (v > max) throw invalidRequest(`Invalid '${key}': ${kind} above maximum value. Expected a value <= ${max}, but got ${v} instead.`, key, `${kind}_above_max_value`);
  if (v < min) throw invalidRequest(`Invalid '${key}': ${kind} below minimum value. Expected a value >= ${min}, but got ${v} instead.`, key, `${kind}_below_min_value`);
}

/** A string field that takes one of `allowed` (null or absent: not set), as OpenAI words a value outside them. */
function checkEnum(v: unknown, allowed: readonly string[], param: string): void {
  if (v === undefined || v === null) return;
  if (typeof v !== "string") throw invalidType(param, "a string", v);
  if (allowed.includes(v)) return;
  const quoted = allowed.map((x) => `'${x}'`);
  const list = quoted.length === 2 ? quoted.join(" and ") : `${quoted.slice(0, -1).join(", ")}, and ${quoted.at(-1)}`;
  throw invalidRequest(`Invalid value: '${truncate(v)}'. Supported values are: ${list}.`, param, "invalid_value");
}

const INT32_MAX = 2_147_483_647;

function expectInteger(b: JsonObject, key: string, max: number): void {
  const v = b[key];
  if (v === undefined || v === null) return;
  if (typeof v !== "number" || !Number.isInteger(v)) throw invalidType(key, "an integer", v);
  if (Math.abs(v) > max) {
    throw invalidRequest(`Invalid '${key}': integer above maximum value. Expected a value <= ${max}, but got ${v} instead.`, key, "integer_above_max_value");
  }
}

const KIND_NAMES: Record<Kind, string> = { string: "a string", boolean: "a boolean", number: "a number", object: "an object" };

function describe(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  if (typeof v === "object") return "an object";
  return `a ${typeof v}`;
}

export function invalidType(param: string, expected: string, got: unknown) {
  return invalidRequest(`Invalid type for '${param}': expected ${expected}, but got ${describe(got)} instead.`, param, "invalid_type");
}

function truncate(s: string): string {
  return s.length > 64 ? `${s.slice(0, 61)}...` : s;
}
