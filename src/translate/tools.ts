/**
 * Responses tools -> the tool list of a backend that only has JSON-argument tools (chat
 * completions, the Messages API); each kind gives the shape of one tool (`ToolShapes`):
 *
 * - `function` tools map one to one; a `namespace` tool's members are flattened
 *   (chat/tool-names.ts);
 * - freeform `custom` tools become tools with one string parameter (custom-tools.ts) and are
 *   listed in the name map, so their calls come back as `custom_tool_call`;
 * - tools sent as `additional_tools` input items (newer Codex builds, with `tools: []`) are
 *   hoisted from the new input and the replayed history into the same list, once per name,
 *   after the request's own `tools` (which win a name clash);
 * - every other type is a tool OpenAI runs itself (web_search, mcp, ...): dropped (listed)
 *   or a 400, per model.
 */
import { untranslatable } from "./errors.js";
import { itemParam } from "./input-parts.js";
import { emptyToolNameMap, type ToolNameMap } from "./chat/chat-types.js";
import { chatNameFor, registerNamespaced } from "./chat/tool-names.js";
import type { Item, JsonObject } from "../wire/types.js";

/** One tool in the backend's own shape. */
export interface ToolShapes<T> {
  /** A function tool (validated but for its name) sent under `name`. */
  function(tool: JsonObject, at: string, name: string): T;
  /** A custom tool sent under `name`. */
  custom(tool: JsonObject, name: string): T;
}

export interface MappedTools<T> {
  tools: T[];
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
    const at = itemParam(i, historyItems);
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

/** The request's tools and those of its `additional_tools` items, in the backend's shape. */
export function mapTools<T>(input: JsonObject[] | undefined, hosted: "drop" | "reject", items: Item[], historyItems: number, shapes: ToolShapes<T>): MappedTools<T> {
  const out: MappedTools<T> = { tools: [], droppedTools: [], toolNames: emptyToolNameMap(), dropped: new Set() };
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
      out.tools.push(shapes.function(tool, at, requireName(tool, at)));
    } else if (type === "custom") {
      const name = requireName(tool, at);
      out.toolNames.fromChat[name] = { name, custom: true };
      out.tools.push(shapes.custom(tool, name));
    } else if (type === "namespace") {
      const ns = tool.name;
      if (typeof ns !== "string" || !ns) throw untranslatable("A namespace tool needs a 'name'.", `${at}.name`);
      if (!Array.isArray(tool.tools)) throw untranslatable("A namespace tool needs a 'tools' array.", `${at}.tools`);
      (tool.tools as JsonObject[]).forEach((member, j) => {
        const mat = `${at}.tools[${j}]`;
        if (member?.type === "function" || member?.type === "custom") {
          const name = registerNamespaced(out.toolNames, taken, ns, requireName(member, mat));
          if (member.type === "custom") {
            out.toolNames.fromChat[name] = { name: member.name as string, namespace: ns, custom: true };
            out.tools.push(shapes.custom(member, name));
          } else {
            out.tools.push(shapes.function(member, mat, name));
          }
        } else if (typeof member?.type === "string" && member.type) {
          hostedTool(member.type, `${mat}.type`);
        } else {
          throw untranslatable("Each tool needs a 'type'.", `${mat}.type`);
        }
      });
    } else {
      // Every other type is a tool OpenAI runs itself (web_search, file_search, mcp, ...): the backend cannot honour it.
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

/**
 * A request's `tool_choice`, read once for every kind: the modes, one tool by the name it
 * was sent under (`function` or `custom`, with its namespace), or `allowed_tools` (its mode,
 * and the one tool it allows when it allows one). A hosted tool's type that was dropped is
 * `auto`; unset is null. Each kind writes the result in its own shape.
 */
export type ToolChoiceForm =
  | { type: "auto" | "none" | "required" }
  | { type: "named"; name: string }
  | { type: "allowed"; mode: "auto" | "required"; only: string | null };

export function readToolChoice(choice: unknown, dropped: Set<string>, toolNames: ToolNameMap): ToolChoiceForm | null {
  if (choice === undefined || choice === null) return null;
  if (choice === "auto" || choice === "none" || choice === "required") return { type: choice };
  if (typeof choice !== "object" || Array.isArray(choice)) {
    throw untranslatable(`Invalid tool_choice '${String(choice)}': expected "auto", "none", "required" or an object.`, "tool_choice");
  }
  const c = choice as JsonObject;
  if (c.type === "function" || c.type === "custom") {
    if (typeof c.name !== "string" || !c.name) throw untranslatable(`tool_choice of type '${c.type}' needs a 'name'.`, "tool_choice.name");
    return { type: "named", name: sentName(c, toolNames) };
  }
  if (c.type === "allowed_tools") {
    const one = Array.isArray(c.tools) && c.tools.length === 1 ? (c.tools[0] as JsonObject) : null;
    const only = one && (one.type === "function" || one.type === "custom") && typeof one.name === "string" && one.name ? sentName(one, toolNames) : null;
    return { type: "allowed", mode: c.mode === "required" ? "required" : "auto", only };
  }
  if (typeof c.type === "string" && dropped.has(c.type)) return { type: "auto" };
  throw untranslatable(`tool_choice names a tool of type '${String(c.type)}', which is not available for this model.`, "tool_choice.type");
}

const sentName = (c: JsonObject, toolNames: ToolNameMap): string =>
  chatNameFor(toolNames, c.name as string, typeof c.namespace === "string" && c.namespace ? c.namespace : undefined);
