/**
 * Responses tools -> chat `tools` and `tool_choice`.
 *
 * - `function` tools map one to one; a `namespace` tool's members are flattened
 *   (tool-names.ts);
 * - freeform `custom` tools become one-string-parameter functions (custom-tools.ts);
 * - tools sent as `additional_tools` input items (newer Codex builds, with `tools: []`) are
 *   hoisted from the new input and the replayed history into the same list, once per name,
 *   after the request's own `tools` (which win a name clash);
 * - every other type is a tool OpenAI runs itself (web_search, mcp, ...): dropped (listed)
 *   or a 400, per model.
 */
import { untranslatable } from "../errors.js";
import type { ChatRequestBody, ChatTool, ToolNameMap } from "./chat-types.js";
import { emptyToolNameMap } from "./chat-types.js";
import { customToolFunction } from "./custom-tools.js";
import { chatNameFor, registerNamespaced } from "./tool-names.js";
import type { Item, JsonObject } from "../../wire/types.js";

export interface MappedTools {
  tools: ChatTool[];
  droppedTools: string[];
  toolNames: ToolNameMap;
  /** Hosted tool types that were dropped (a tool_choice naming one falls back to auto). */
  dropped: Set<string>;
}

interface Source {
  tool: JsonObject;
  /** The param that names it in an error. */
  at: string;
}

const NO_SOURCES: readonly Source[] = [];

/**
 * The tools of `additional_tools` items, once per name (or per type for unnamed ones): a later
 * item's definition replaces an earlier one, and none replaces one of the request's own `tools`.
 */
function additionalTools(input: JsonObject[] | undefined, items: Item[], historyItems: number): readonly Source[] {
  if (!items.some((it) => it.type === "additional_tools")) return NO_SOURCES;
  const own = new Set((input ?? []).map(toolKey));
  const out: Source[] = [];
  const seen = new Map<string, number>();
  items.forEach((item, i) => {
    if (item.type !== "additional_tools") return;
    const at = i < historyItems ? "previous_response_id" : `input[${i - historyItems}]`;
    if (!Array.isArray(item.tools)) throw untranslatable("An 'additional_tools' item needs a 'tools' array.", `${at}.tools`);
    (item.tools as JsonObject[]).forEach((tool, j) => {
      const key = toolKey(tool);
      if (own.has(key)) return;
      const source = { tool, at: `${at}.tools[${j}]` };
      const n = seen.get(key);
      if (n === undefined) {
        seen.set(key, out.length);
        out.push(source);
      } else {
        out[n] = source;
      }
    });
  });
  return out;
}

const toolKey = (tool: JsonObject): string => (typeof tool?.name === "string" ? `name:${tool.name}` : `type:${String(tool?.type)}`);

export function mapTools(input: JsonObject[] | undefined, hosted: "drop" | "reject", items: Item[] = [], historyItems = 0): MappedTools {
  const out: MappedTools = { tools: [], droppedTools: [], toolNames: emptyToolNameMap(), dropped: new Set() };
  if (input !== undefined && input !== null && !Array.isArray(input)) throw untranslatable("'tools' must be an array.", "tools");
  const extra = additionalTools(input, items, historyItems);
  if (!input?.length && extra.length === 0) return out;
  const taken = new Set<string>();
  const claim = (tool: JsonObject) => {
    if ((tool?.type === "function" || tool?.type === "custom") && typeof tool.name === "string") taken.add(tool.name);
  };
  input?.forEach(claim);
  for (const { tool } of extra) claim(tool);

  const hostedTool = (type: string, param: string) => {
    if (hosted === "reject") {
      throw untranslatable(`Tools of type '${type}' are not supported for this model: only function and custom tools can be used.`, param);
    }
    out.droppedTools.push(type);
    out.dropped.add(type);
  };

  const add = (tool: JsonObject, at: string) => {
    const type = tool?.type;
    if (typeof type !== "string" || !type) throw untranslatable("Each tool needs a 'type'.", `${at}.type`);
    if (type === "function") {
      out.tools.push(functionTool(tool, at, tool.name as string));
    } else if (type === "custom") {
      const name = requireName(tool, at);
      out.toolNames.fromChat[name] = { name, custom: true };
      out.tools.push(customToolFunction(tool, name));
    } else if (type === "namespace") {
      const ns = tool.name;
      if (typeof ns !== "string" || !ns) throw untranslatable("A namespace tool needs a 'name'.", `${at}.name`);
      if (!Array.isArray(tool.tools)) throw untranslatable("A namespace tool needs a 'tools' array.", `${at}.tools`);
      (tool.tools as JsonObject[]).forEach((member, j) => {
        const mat = `${at}.tools[${j}]`;
        if (member?.type === "function" || member?.type === "custom") {
          const chatName = registerNamespaced(out.toolNames, taken, ns, requireName(member, mat));
          if (member.type === "custom") {
            out.toolNames.fromChat[chatName] = { name: member.name as string, namespace: ns, custom: true };
            out.tools.push(customToolFunction(member, chatName));
          } else {
            out.tools.push(functionTool(member, mat, chatName));
          }
        } else if (typeof member?.type === "string" && member.type) {
          hostedTool(member.type, `${mat}.type`);
        } else {
          throw untranslatable("Each tool needs a 'type'.", `${mat}.type`);
        }
      });
    } else {
      // Every other type is a tool OpenAI runs itself (web_search, file_search, mcp, ...): a chat backend cannot honour it.
      hostedTool(type, `${at}.type`);
    }
  };
  input?.forEach((tool, i) => add(tool, `tools[${i}]`));
  for (const { tool, at } of extra) add(tool, at);
  return out;
}

function requireName(tool: JsonObject, at: string): string {
  if (typeof tool.name !== "string" || !tool.name) throw untranslatable(`A ${String(tool.type)} tool needs a 'name'.`, `${at}.name`);
  return tool.name;
}

function functionTool(tool: JsonObject, at: string, chatName: string): ChatTool {
  requireName(tool, at);
  const fn: ChatTool["function"] = { name: chatName };
  if (typeof tool.description === "string") fn.description = tool.description;
  if (tool.parameters !== undefined && tool.parameters !== null) fn.parameters = tool.parameters;
  if (typeof tool.strict === "boolean") fn.strict = tool.strict;
  return { type: "function", function: fn };
}

export function mapToolChoice(choice: unknown, dropped: Set<string>, toolNames: ToolNameMap): ChatRequestBody["tool_choice"] | undefined {
  if (choice === undefined || choice === null) return undefined;
  if (choice === "auto" || choice === "none" || choice === "required") return choice;
  if (typeof choice !== "object" || Array.isArray(choice)) {
    throw untranslatable(`Invalid tool_choice '${String(choice)}': expected "auto", "none", "required" or an object.`, "tool_choice");
  }
  const c = choice as JsonObject;
  if (c.type === "function" || c.type === "custom") {
    if (typeof c.name !== "string" || !c.name) throw untranslatable(`tool_choice of type '${c.type}' needs a 'name'.`, "tool_choice.name");
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
