/**
 * Responses input items -> Messages `system` and `messages` (the input half of the request mapping).
 *
 * Rules (docs/protocol.md, "Anthropic endpoints: the mapping"):
 * - system/developer messages before the first turn go to `system`; later ones become
 *   `system`-role messages where the API version takes them, else they join `system` too;
 * - user parts -> text, image and document blocks (content.ts); assistant parts -> text;
 * - a reasoning item whose `encrypted_content` this core wrote -> the exact thinking (or
 *   redacted_thinking) block, first in the next assistant message; other reasoning is dropped
 *   (Anthropic accepts only its own signed blocks);
 * - function_call -> a `tool_use` block of the assistant message; function_call_output -> a
 *   `tool_result` block of the next user message, tool results first in it; custom_tool_call
 *   and its output likewise, the call's text as the one `input` parameter (../custom-tools.ts);
 * - additional_tools items are hoisted into the tool list (../tools.ts), not messages;
 * - consecutive items of one role merge into one message, so roles alternate;
 * - `mcp_call` items (the router's tool runs, or OpenAI's) replay as the tool_use and its
 *   tool_result, as on chat (../hosted-calls.ts); other hosted tools' items are dropped;
 *   item_reference must be resolved;
 * - a router compaction item becomes the framed summary as a user message, and what it
 *   summarises is left out (as on chat backends); one the router cannot open is a 400.
 */
import { createHash } from "node:crypto";
import { untranslatable } from "../errors.js";
import { MESSAGE_ROLES } from "../../wire/protocol.js";
import type { Item, JsonObject } from "../../wire/types.js";
import { HOSTED_HISTORY_ITEMS, type CompactionOptions } from "../chat/request-input.js";
import { REPLAYED_RUN_ITEMS, hostedItemsForModel, refusedApprovals } from "../hosted-calls.js";
import { summaryMessageText, supersededByCompaction } from "../chat/compaction.js";
import { chatNameFor } from "../chat/tool-names.js";
import type { ToolNameMap } from "../chat/chat-types.js";
import { decodeThinking, type ContentBlockParam, type TextBlockParam, type ThinkingParam, type ToolResultBlockParam } from "./types.js";
import { imageBlock, partToBlock, type UserBlock } from "./content.js";
import { assistantText, itemParam, stringField } from "../input-parts.js";
import { CUSTOM_INPUT, replayedCustomCall } from "../custom-tools.js";
import type { FileOptions } from "../chat/files.js";

export interface InputOptions {
  /** The API version takes `system`-role messages among the turns. */
  systemMessages: boolean;
  toolNames?: ToolNameMap;
  /** Leading items from earlier turns: error params count the client's own input from 0. */
  historyItems?: number;
  compaction?: CompactionOptions;
  /** Contents of the request's `file_url`s, fetched by the service. */
  files?: FileOptions;
}

type Role = "user" | "assistant" | "system";

/** A message as it is built: blocks only (a string content is never sent, so breakpoints can be placed). */
export interface BuiltMessage {
  role: Role;
  content: ContentBlockParam[];
}

export interface BuiltInput {
  system: TextBlockParam[];
  messages: BuiltMessage[];
}

const DEFAULT_USER_MESSAGE_TOKENS = 20_000;

class MessageBuilder {
  readonly system: TextBlockParam[] = [];
  readonly messages: BuiltMessage[] = [];
  /** Thinking blocks waiting for the assistant turn they belong to. */
  private thinking: ThinkingParam[] = [];

  constructor(private readonly systemMessages: boolean) {}

  systemText(text: string): void {
    if (!text) return;
    if (this.messages.length === 0 || !this.systemMessages) this.system.push({ type: "text", text });
    else this.add("system", [{ type: "text", text }]);
  }

  add(role: Role, blocks: ContentBlockParam[]): void {
    if (role === "assistant" && this.thinking.length) {
      blocks = [...this.thinking, ...blocks];
      this.thinking = [];
    } else if (role !== "assistant") this.thinking = [];
    if (blocks.length === 0) return;
    const last = this.messages.at(-1);
    if (last && last.role === role) last.content.push(...blocks);
    else this.messages.push({ role, content: blocks });
  }

  addThinking(block: ThinkingParam): void {
    const last = this.messages.at(-1);
    // Interleaved thinking between two tool calls of one turn stays in that turn.
    if (last?.role === "assistant" && this.thinking.length === 0 && last.content.some((b) => b.type === "tool_use")) last.content.push(block);
    else this.thinking.push(block);
  }

  finish(): BuiltMessage[] {
    // Anthropic wants a user turn's tool results before anything else in it.
    for (const m of this.messages) {
      if (m.role !== "user" || !m.content.some((b) => b.type === "tool_result")) continue;
      m.content = [...m.content.filter((b) => b.type === "tool_result"), ...m.content.filter((b) => b.type !== "tool_result")];
    }
    return this.messages;
  }
}

export function itemsToMessages(sent: Item[], opts: InputOptions): BuiltInput {
  const out = new MessageBuilder(opts.systemMessages);
  const { items, history } = mcpRunsAsCalls(sent, opts.historyItems ?? 0);
  const superseded = supersededByCompaction(items, opts.compaction?.userMessageMaxTokens ?? DEFAULT_USER_MESSAGE_TOKENS);
  for (let i = 0; i < items.length; i++) {
    if (superseded?.has(i)) continue;
    const item = items[i]!;
    const at = itemParam(i, history);
    const type = item.type ?? (typeof item.role === "string" ? "message" : undefined);
    switch (type) {
      case "message":
        message(out, item, at, opts.files);
        break;
      case "function_call":
        out.add("assistant", [toolUse(item, at, opts.toolNames)]);
        break;
      case "custom_tool_call":
        out.add("assistant", [customToolUse(item, at, opts.toolNames)]);
        break;
      case "function_call_output":
      case "custom_tool_call_output":
        out.add("user", [toolResult(item, at, opts.files)]);
        break;
      case "additional_tools":
        break; // its tools are in the request's tool list (../tools.ts)
      case "reasoning": {
        const block = decodeThinking(item.encrypted_content);
        if (block) out.addThinking(block);
        break;
      }
      case "compaction":
        out.add("user", [{ type: "text", text: summaryMessageText(openCompaction(item, at, opts.compaction)) }]);
        break;
      case "compaction_trigger":
        if (i < history) break;
        throw untranslatable("A 'compaction_trigger' item must be the last input item.", `${at}.type`);
      case "item_reference":
        throw untranslatable(`Item reference '${String(item.id)}' could not be resolved: the referenced item was not found.`, at);
      case undefined:
        throw untranslatable(`Input item ${i - history} has no 'type' (and is not a {role, content} message).`, `${at}.type`);
      default:
        if (HOSTED_HISTORY_ITEMS.has(type)) break;
        throw untranslatable(`Input items of type '${type}' are not supported for this model.`, `${at}.type`);
    }
  }
  return { system: out.system, messages: out.finish() };
}

/**
 * `mcp_call` items (the router's tool runs, or OpenAI's) as the tool_use and tool_result they
 * were to the model, the calls of one turn kept in one assistant message (../hosted-calls.ts).
 * History and new input are converted apart, so error params still count the client's input.
 */
function mcpRunsAsCalls(items: Item[], history: number): { items: Item[]; history: number } {
  if (!items.some((it) => REPLAYED_RUN_ITEMS.has(it.type as string))) return { items, history };
  const opts = { refused: refusedApprovals(items), types: REPLAYED_RUN_ITEMS };
  const before = hostedItemsForModel(items.slice(0, history), opts);
  return { items: [...before, ...hostedItemsForModel(items.slice(history), opts)], history: before.length };
}

function message(out: MessageBuilder, item: Item, at: string, files: FileOptions | undefined): void {
  const role = item.role;
  if (typeof role !== "string" || !MESSAGE_ROLES.has(role)) {
    throw untranslatable(`Invalid role '${String(role)}': expected one of 'user', 'assistant', 'system' or 'developer'.`, `${at}.role`);
  }
  const content = item.content;
  if (typeof content !== "string" && !Array.isArray(content)) throw untranslatable("Message content must be a string or an array of parts.", `${at}.content`);
  if (role === "system" || role === "developer") {
    out.systemText(typeof content === "string" ? content : textOf(content as Item[], at));
    return;
  }
  if (typeof content === "string") {
    out.add(role as Role, content ? [{ type: "text", text: content }] : []);
    return;
  }
  if (role === "assistant") {
    const text = assistantText(content as Item[], at);
    out.add("assistant", text ? [{ type: "text", text }] : []);
    return;
  }
  const blocks: UserBlock[] = [];
  (content as Item[]).forEach((part, j) => {
    const block = partToBlock(part, `${at}.content[${j}]`, files);
    if (block) blocks.push(block);
  });
  out.add("user", blocks);
}

function textOf(parts: Item[], at: string): string {
  return parts
    .map((p, j) => {
      if (p?.type !== "input_text" && p?.type !== "text" && p?.type !== "output_text") throw untranslatable(`System and developer message parts must be text, not '${String(p?.type)}'.`, `${at}.content[${j}].type`);
      return stringField(p, "text", `${at}.content[${j}].text`);
    })
    .join("\n");
}

const TOOL_ID = /^[a-zA-Z0-9_-]+$/;

/**
 * The id Anthropic is sent for a call: it takes `[a-zA-Z0-9_-]` only, and a call made on another
 * backend may carry more (vLLM's Kimi parser: `functions.get_weather:0`). The same id always maps
 * the same way, so a tool_use and its tool_result still pair; a short hash of the original keeps
 * two ids that differ only in those characters apart. The client's items keep the original.
 */
export function anthropicToolId(id: string): string {
  if (TOOL_ID.test(id)) return id;
  return `${id.replace(/[^a-zA-Z0-9_-]/g, "_")}_${createHash("sha256").update(id).digest("hex").slice(0, 8)}`;
}

function toolUse(item: Item, at: string, toolNames: ToolNameMap | undefined): ContentBlockParam {
  const id = anthropicToolId(stringField(item, "call_id", `${at}.call_id`));
  const name = stringField(item, "name", `${at}.name`);
  const args = item.arguments === undefined || item.arguments === null || item.arguments === "" ? "{}" : item.arguments;
  if (typeof args !== "string") throw untranslatable("function_call 'arguments' must be a string.", `${at}.arguments`);
  let input: unknown;
  try {
    input = JSON.parse(args);
  } catch {
    throw untranslatable("function_call 'arguments' must be a JSON object for this model.", `${at}.arguments`);
  }
  if (input === null || typeof input !== "object" || Array.isArray(input)) throw untranslatable("function_call 'arguments' must be a JSON object for this model.", `${at}.arguments`);
  const namespace = typeof item.namespace === "string" && item.namespace ? item.namespace : undefined;
  return { type: "tool_use", id, name: chatNameFor(toolNames, name, namespace), input };
}

/** A freeform tool's call: its text as the one `input` parameter (../custom-tools.ts). */
function customToolUse(item: Item, at: string, toolNames: ToolNameMap | undefined): ContentBlockParam {
  const { callId, name, input } = replayedCustomCall(item, at, toolNames);
  return { type: "tool_use", id: anthropicToolId(callId), name, input: { [CUSTOM_INPUT]: input } };
}

function toolResult(item: Item, at: string, files: FileOptions | undefined): ToolResultBlockParam {
  const id = anthropicToolId(stringField(item, "call_id", `${at}.call_id`));
  const output = item.output;
  // An empty result is sent without content (Anthropic rejects empty text).
  if (output === "") return { type: "tool_result", tool_use_id: id };
  if (typeof output === "string") return { type: "tool_result", tool_use_id: id, content: output };
  if (output === undefined || output === null) throw untranslatable("function_call_output needs an 'output'.", `${at}.output`);
  if (!Array.isArray(output)) return { type: "tool_result", tool_use_id: id, content: JSON.stringify(output) };
  const content: Exclude<ToolResultBlockParam["content"], string | undefined> = [];
  output.forEach((part: JsonObject, j) => {
    const p = `${at}.output[${j}]`;
    if (part?.type === "input_image") content.push(imageBlock(part as Item, p, files));
    else {
      const block = partToBlock(part as Item, p, files);
      if (block) content.push(block);
    }
  });
  return content.length ? { type: "tool_result", tool_use_id: id, content } : { type: "tool_result", tool_use_id: id };
}

function openCompaction(item: Item, at: string, compaction: CompactionOptions | undefined): string {
  const summary = compaction?.open(item.encrypted_content) ?? null;
  if (summary !== null) return summary;
  throw untranslatable(
    `The compaction item ${typeof item.id === "string" ? `'${item.id}' ` : ""}at ${at} cannot be read by this model: its encrypted_content was not sealed by this router with its compaction key (it comes from another provider such as OpenAI, from a router with another key, or was altered). An Anthropic backend can only use the router's own compaction items.`,
    `${at}.encrypted_content`,
    "invalid_encrypted_content",
  );
}
