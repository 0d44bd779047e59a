/**
 * Responses tools -> chat `tools` and `tool_choice`. The walk over the request's tools and
 * its `additional_tools` items is the kinds' shared one (../tools.ts); here is the chat shape
 * of a function (one to one) and of a freeform `custom` tool (a function with one string
 * parameter, ../custom-tools.ts).
 */
import type { ChatRequestBody, ChatTool, ToolNameMap } from "./chat-types.js";
import { customToolSpec } from "../custom-tools.js";
import { mapTools as walkTools, readToolChoice, type MappedTools as Mapped, type ToolShapes } from "../tools.js";
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
  const form = readToolChoice(choice, dropped, toolNames);
  if (!form) return undefined;
  if (form.type === "named") return { type: "function", function: { name: form.name } };
  // Chat backends rarely know allowed_tools; keep its mode, the tools stay listed.
  if (form.type === "allowed") return form.mode;
  return form.type;
}
