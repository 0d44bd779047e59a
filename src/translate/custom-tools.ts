/**
 * Freeform `custom` tools (Codex's `apply_patch`, any tool whose input is plain text or
 * follows a grammar) on a backend that only has JSON-argument tools (chat completions,
 * the Messages API). Each custom tool is sent as a tool with ONE string parameter, `input`,
 * whose description carries the tool's format (the grammar's syntax and definition). The
 * call comes back as `{"input": "..."}` and becomes a `custom_tool_call` with that `input`;
 * history replays the other way round. Each kind wraps `customToolSpec` in its own tool shape.
 */
import type { Item, JsonObject } from "../wire/types.js";
import { untranslatable } from "./errors.js";
import type { ToolNameMap } from "./chat/chat-types.js";
import { chatNameFor } from "./chat/tool-names.js";

/** The one parameter a custom tool's JSON form takes. */
export const CUSTOM_INPUT = "input";

/** A custom tool as a description and a JSON Schema with the one string parameter (`tool` is the Responses CustomTool). */
export function customToolSpec(tool: JsonObject): { description: string; parameters: JsonObject } {
  const format = formatText(tool.format);
  const lead = typeof tool.description === "string" && tool.description ? tool.description : `The ${String(tool.name)} tool.`;
  const description = `${lead}\n\nThis tool takes freeform text: pass the whole text as the string parameter "${CUSTOM_INPUT}", not as JSON fields.${format ? `\n\n${format}` : ""}`;
  return {
    description,
    parameters: {
      type: "object",
      properties: { [CUSTOM_INPUT]: { type: "string", description: format ? "The freeform input, in the format the tool's description gives." : "The freeform input." } },
      required: [CUSTOM_INPUT],
      additionalProperties: false,
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
 * A custom call's input from the call's JSON arguments: the `input` string of
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

/** A replayed `custom_tool_call` item: its call id, the name its tool was sent under, and its input. */
export function replayedCustomCall(item: Item, at: string, toolNames: ToolNameMap | undefined): { callId: string; name: string; input: string } {
  const callId = item.call_id;
  if (typeof callId !== "string") throw untranslatable("Missing or invalid 'call_id': expected a string.", `${at}.call_id`);
  const name = item.name;
  if (typeof name !== "string") throw untranslatable("Missing or invalid 'name': expected a string.", `${at}.name`);
  const input = item.input === undefined || item.input === null ? "" : item.input;
  if (typeof input !== "string") throw untranslatable("custom_tool_call 'input' must be a string.", `${at}.input`);
  const namespace = typeof item.namespace === "string" && item.namespace ? item.namespace : undefined;
  return { callId, name: chatNameFor(toolNames, name, namespace), input };
}

/** The call arguments for a replayed custom call's input. */
export const customArguments = (input: string): string => JSON.stringify({ [CUSTOM_INPUT]: input });

const INPUT_OPENING = /^\s*\{\s*"input"\s*:\s*"/;
/** Past this many characters without the opening, the arguments are not `{"input": "...`. */
const OPENING_WINDOW = 64;
const ESCAPES: Record<string, string> = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };

/**
 * Streams a custom call's input while its arguments arrive: once they read `{"input": "`, the
 * JSON string is decoded as far as it is complete (an escape cut in half waits for its end).
 * Arguments of any other shape are not streamed: their input is read whole at the end.
 */
export class CustomInputStream {
  private args = "";
  /** Where the undecoded rest of the string starts; -1 while the opening is not seen, -2 when it never will be. */
  private pos = -1;
  private ended = false;
  /** The input decoded so far. */
  text = "";

  /** More arguments; returns the newly decoded input ("" when none). */
  push(fragment: string): string {
    this.args += fragment;
    if (this.pos === -1) {
      const m = INPUT_OPENING.exec(this.args);
      if (m) this.pos = m[0].length;
      else if (this.args.length > OPENING_WINDOW) this.pos = -2;
    }
    if (this.pos < 0 || this.ended) return "";
    return this.decode();
  }

  /** The whole input, and the part of it not yet returned by `push`. */
  finish(): { input: string; rest: string } {
    if (this.pos < 0) {
      const input = customInputFromArguments(this.args);
      return { input, rest: input };
    }
    return { input: this.text, rest: "" };
  }

  private decode(): string {
    const a = this.args;
    let i = this.pos;
    let out = "";
    while (i < a.length) {
      const c = a[i]!;
      if (c === '"') {
        this.ended = true;
        i++;
        break;
      }
      if (c !== "\\") {
        out += c;
        i++;
        continue;
      }
      const e = a[i + 1];
      if (e === undefined) break;
      if (e === "u") {
        const hex = a.slice(i + 2, i + 6);
        if (hex.length < 4) break;
        out += String.fromCharCode(Number.parseInt(hex, 16) || 0);
        i += 6;
      } else {
        out += ESCAPES[e] ?? e;
        i += 2;
      }
    }
    this.pos = i;
    this.text += out;
    return out;
  }
}
