/**
 * Responses tools -> chat `tools` and `tool_choice`. The walk over the request's tools and
 * its `additional_tools` items is the kinds' shared one (../tools.ts); here is the chat shape
 * of a function (one to one) and of a freeform `custom` tool (a function with one string
 * parameter, ../custom-tools.ts).
 */
import { untranslatable } from "../errors.js";
import type { ChatRequestBody, ChatTool, ToolNameMap } from "./chat-types.js";
import { customToolSpec } from "../custom-tools.js";
import { chatNameFor } from "./tool-names.js";
import { mapTools as walkTools, type MappedTools as Mapped, type ToolShapes } from "../tools.js";
import type { Item, JsonObject } from "../../wire/types.js";

export type MappedTools = Mapped<ChatTool>;

const CHAT_TOOLS: ToolShapes<ChatTool> = {
  function: (tool, _at, chatName) => {
    const fn: ChatTool["function"] = { name: chatName };
    if (typeof tool.description === "string") fn.description = tool.description;
    if (tool.parameters !== undefined && tool.parameters !== null) fn.parameters = tool.parameters;
    if (typeof tool.strict === "boolean") fn.strict = tool.strict;
    return { type: "function", function: fn };
  },
  custom: (tool, chatName) => ({ type: "function", function: { name: chatName, ...customToolSpec(tool) } }),
};

export function mapTools(input: JsonObject[] | undefined, hosted: "drop" | "reject", items: Item[] = [], historyItems = 0): MappedTools {
  return walkTools(input, hosted, items, historyItems, CHAT_TOOLS);
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
