/**
 * Freeform `custom` tools (Codex's `apply_patch`, any tool whose input is plain text or
 * follows a grammar) on a chat backend. Chat completions only has JSON-argument functions,
 * so each custom tool is sent as a function with ONE string parameter, `input`, whose
 * description carries the tool's format (the grammar's syntax and definition). The call
 * comes back as `{"input": "..."}` and becomes a `custom_tool_call` with that `input`;
 * history replays the other way round.
 */
import type { JsonObject } from "../../wire/types.js";
import type { ChatTool } from "./chat-types.js";

/** The one parameter a custom tool's chat function takes. */
export const CUSTOM_INPUT = "input";

/** The chat function for a `custom` tool (`tool` is the Responses CustomTool). */
export function customToolFunction(tool: JsonObject, chatName: string): ChatTool {
  const format = formatText(tool.format);
  const lead = typeof tool.description === "string" && tool.description ? tool.description : `The ${String(tool.name)} tool.`;
  const description = `${lead}\n\nThis tool takes freeform text: pass the whole text as the string parameter "${CUSTOM_INPUT}", not as JSON fields.${format ? `\n\n${format}` : ""}`;
  return {
    type: "function",
    function: {
      name: chatName,
      description,
      parameters: {
        type: "object",
        properties: { [CUSTOM_INPUT]: { type: "string", description: format ? "The freeform input, in the format the tool's description gives." : "The freeform input." } },
        required: [CUSTOM_INPUT],
        additionalProperties: false,
      },
    },
  };
}

/** The format of a custom tool's input in words: nothing for free text, the grammar for a grammar. */
function formatText(format: unknown): string {
  if (!format || typeof format !== "object") return "";
  const f = format as JsonObject;
  if (f.type !== "grammar" || typeof f.definition !== "string") return "";
  const syntax = f.syntax === "regex" ? "regular expression" : `${typeof f.syntax === "string" ? f.syntax : "lark"} grammar`;
  return `The input must match this ${syntax}:\n${f.definition}`;
}

/**
 * A custom call's input from the chat call's arguments: the `input` string of
 * `{"input": "..."}`; a model that answered with another single string field, or with no
 * JSON at all, still has its text taken as the input rather than lost.
 */
export function customInputFromArguments(args: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch {
    return args;
  }
  if (typeof parsed === "string") return parsed;
  if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) return args;
  const obj = parsed as JsonObject;
  if (typeof obj[CUSTOM_INPUT] === "string") return obj[CUSTOM_INPUT] as string;
  const values = Object.values(obj);
  return values.length === 1 && typeof values[0] === "string" ? values[0] : args;
}

/** The chat call arguments for a replayed custom call's input. */
export const customArguments = (input: string): string => JSON.stringify({ [CUSTOM_INPUT]: input });
