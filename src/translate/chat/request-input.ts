/**
 * Responses input items -> chat messages (the `messages` half of the request mapping).
 *
 * Rules (docs/protocol.md, "Chat endpoints: the mapping"):
 * - messages keep their role; `developer` becomes `opts.developerRole`;
 * - user/system parts: input_text -> text part, input_image -> image_url part (by `file_id`:
 *   the router's file as a data URL); a lone
 *   text part collapses to a string; assistant history parts are joined into one string;
 * - consecutive function_call items (and an assistant message right before them) form
 *   ONE assistant message with tool_calls;
 * - function_call_output -> a `tool` message; images and files in a tool output cannot ride
 *   on a chat tool message, so they follow the run of tool messages as one user message;
 * - reasoning items are dropped, their text replayed as `reasoning_content` on the next
 *   assistant message (discarded if a non-assistant message comes first);
 * - input_file -> a `file` part (`file_data`, `filename`; a `file_url` by the contents the
 *   service fetched before translating), or inlined as text when the model's backend has no
 *   file support and the file is text; `file_id`: the router's file read by the service, an id
 *   it did not read a 404 (files.ts);
 *   input_audio -> an `input_audio` part;
 * - custom_tool_call / custom_tool_call_output replay like function calls and their outputs
 *   (custom-tools.ts: the input as the one `input` argument);
 * - additional_tools items are hoisted into the tool list (tools.ts), not messages;
 * - `mcp_call` items (the router's tool runs, or OpenAI's after a fallback) replay as the
 *   assistant's tool call and its tool result (hosted-calls.ts), so the model sees what
 *   happened; a refused `mcp_approval_request` replays as a call whose result says so;
 *   listings and pending/approved requests are left out; a `file_search_call` replays the
 *   same way (the `file_search` call and the results it found); other hosted tools' items from
 *   earlier turns (web_search_call: its answer carries what was found; code_interpreter_call,
 *   ...) are dropped: a chat backend can neither see nor replay them;
 * - item_reference must have been resolved by the service: 400 if one remains;
 * - a `compaction` item sealed by the router becomes the user message that frames its
 *   summary (compaction.ts); what it summarises (the items before the last one, but for
 *   system/developer messages and the kept user messages) is left out. One the router
 *   cannot open (OpenAI's, another key's, altered) is a 400 naming it, never dropped.
 */
import { untranslatable } from "../errors.js";
import { assistantText, itemParam, stringField } from "../input-parts.js";
import { MESSAGE_ROLES } from "../../wire/protocol.js";
import type { ChatMessage, ChatToolCall, Item, JsonObject } from "../../wire/types.js";
import type { ToolNameMap } from "./chat-types.js";
import { chatNameFor } from "./tool-names.js";
import { summaryMessageText, supersededByCompaction } from "./compaction.js";
import { HOSTED_RUN_ITEMS, hostedItemAsCall, refusedApprovals } from "../hosted-calls.js";
import { customArguments, replayedCustomCall } from "../custom-tools.js";
import { fileToChat, imageSource, type ContentPart, type FileOptions } from "./files.js";

export type { FileOptions } from "./files.js";

export interface CompactionOptions {
  /** The summary sealed in a compaction item's `encrypted_content`, or null when it cannot be opened. */
  open(sealed: unknown): string | null;
  /** The user messages kept before a compaction item (compaction.ts keptUserMessages). */
  userMessageMaxTokens: number;
}

export interface InputOptions {
  developerRole: "system" | "developer";
  toolNames?: ToolNameMap;
  /**
   * How many leading items came from earlier turns (previous_response_id). Error params
   * then count the client's own input from 0, and name `previous_response_id` for the rest.
   */
  historyItems?: number;
  compaction?: CompactionOptions;
  files?: FileOptions;
}

/** Output items of hosted tools that may sit in replayed history; chat cannot express them. */
export const HOSTED_HISTORY_ITEMS = new Set([
  "web_search_call",
  "file_search_call",
  "computer_call",
  "computer_call_output",
  "code_interpreter_call",
  "image_generation_call",
  "local_shell_call",
  "local_shell_call_output",
  "shell_call",
  "shell_call_output",
  "apply_patch_call",
  "apply_patch_call_output",
  "mcp_call",
  "mcp_list_tools",
  "mcp_approval_request",
  "mcp_approval_response",
  "tool_search_call",
  "tool_search_output",
]);

const DEFAULT_USER_MESSAGE_TOKENS = 20_000;

/** A string input, or easy `{role, content}` messages, as typed items (ids kept). */
export function normalizeInput(input: string | Item[] | undefined): Item[] {
  if (input === undefined) return [];
  if (typeof input === "string") {
    return [{ type: "message", role: "user", content: [{ type: "input_text", text: input }] }];
  }
  return input.map((item) => {
    if (item.type !== undefined || typeof item.role !== "string") return item;
    const content =
      typeof item.content === "string"
        ? [{ type: item.role === "assistant" ? "output_text" : "input_text", text: item.content }]
        : item.content;
    return { ...item, type: "message", content };
  });
}

class MessageBuilder {
  readonly messages: ChatMessage[] = [];
  private reasoning = "";
  /** The assistant message that tool calls may still join. */
  private openAssistant: ChatMessage | null = null;
  private toolImages: ContentPart[] = [];

  push(message: ChatMessage): void {
    this.flushToolImages(message.role);
    if (message.role === "assistant") {
      if (this.reasoning) message.reasoning_content = this.reasoning;
      this.openAssistant = message;
    } else {
      this.openAssistant = null;
    }
    this.reasoning = "";
    this.messages.push(message);
  }

  addToolCall(call: ChatToolCall): void {
    const open = this.openAssistant;
    if (open && !this.reasoning) {
      (open.tool_calls ??= []).push(call);
      return;
    }
    this.push({ role: "assistant", content: null, tool_calls: [call] });
  }

  addReasoning(text: string): void {
    if (text) this.reasoning = this.reasoning ? `${this.reasoning}\n\n${text}` : text;
  }

  addToolOutput(message: ChatMessage, images: ContentPart[]): void {
    this.flushToolImages("tool");
    this.openAssistant = null;
    this.reasoning = "";
    this.messages.push(message);
    if (images.length) this.toolImages.push(...images);
  }

  /** Tool-output images and files go in one user message after the run of tool messages. */
  flushToolImages(nextRole: string | null): void {
    if (!this.toolImages.length || nextRole === "tool") return;
    const images = this.toolImages;
    this.toolImages = [];
    this.messages.push({ role: "user", content: images });
  }
}

export function itemsToChatMessages(items: Item[], opts: InputOptions): ChatMessage[] {
  const out = new MessageBuilder();
  const history = opts.historyItems ?? 0;
  const superseded = supersededByCompaction(items, opts.compaction?.userMessageMaxTokens ?? DEFAULT_USER_MESSAGE_TOKENS);
  let refused: Set<string> | null = null;
  for (let i = 0; i < items.length; i++) {
    if (superseded?.has(i)) continue;
    const item = items[i]!;
    const at = itemParam(i, history);
    const type = item.type ?? (typeof item.role === "string" ? "message" : undefined);
    switch (type) {
      case "message":
        out.push(messageToChat(item, at, opts.developerRole, opts.files));
        break;
      case "function_call":
        out.addToolCall(functionCallToChat(item, at, opts.toolNames));
        break;
      case "function_call_output":
      case "custom_tool_call_output":
        out.addToolOutput(...functionOutputToChat(item, at, opts.files));
        break;
      case "custom_tool_call":
        out.addToolCall(customCallToChat(item, at, opts.toolNames));
        break;
      case "additional_tools":
        break; // its tools are in the request's tool list (tools.ts)
      case "reasoning":
        out.addReasoning(reasoningText(item));
        break;
      case "compaction":
        out.push({ role: "user", content: summaryMessageText(openCompaction(item, at, opts.compaction)) });
        break;
      case "compaction_trigger":
        if (i < history) break; // an earlier turn's trigger: its compaction item follows it
        throw untranslatable("A 'compaction_trigger' item must be the last input item.", `${at}.type`);
      case "item_reference":
        throw untranslatable(
          `Item reference '${String(item.id)}' could not be resolved: the referenced item was not found.`,
          at,
        );
      case undefined:
        throw untranslatable(`Input item ${i - history} has no 'type' (and is not a {role, content} message).`, `${at}.type`);
      default:
        if (HOSTED_RUN_ITEMS.has(type) && type !== "web_search_call") {
          refused ??= refusedApprovals(items);
          for (const it of hostedItemAsCall(item, refused)) {
            if (it.type === "function_call") out.addToolCall(functionCallToChat(it, at, undefined));
            else out.addToolOutput(...functionOutputToChat(it, at, opts.files));
          }
          break;
        }
        if (HOSTED_HISTORY_ITEMS.has(type)) break;
        throw untranslatable(`Input items of type '${type}' are not supported for this model.`, `${at}.type`);
    }
  }
  out.flushToolImages(null);
  return out.messages;
}

function openCompaction(item: Item, at: string, compaction: CompactionOptions | undefined): string {
  const summary = compaction?.open(item.encrypted_content) ?? null;
  if (summary !== null) return summary;
  throw untranslatable(
    `The compaction item ${typeof item.id === "string" ? `'${item.id}' ` : ""}at ${at} cannot be read by this model: its encrypted_content was not sealed by this router with its compaction key (it comes from another provider such as OpenAI, from a router with another key, or was altered). A chat-completions backend can only use the router's own compaction items.`,
    `${at}.encrypted_content`,
    "invalid_encrypted_content",
  );
}

function messageToChat(item: Item, at: string, developerRole: "system" | "developer", files: FileOptions | undefined): ChatMessage {
  const role = item.role;
  if (typeof role !== "string" || !MESSAGE_ROLES.has(role)) {
    throw untranslatable(
      `Invalid role '${String(role)}': expected one of 'user', 'assistant', 'system' or 'developer'.`,
      `${at}.role`,
    );
  }
  const chatRole = role === "developer" ? developerRole : role;
  const content = item.content;
  if (typeof content === "string") return { role: chatRole, content };
  if (!Array.isArray(content)) throw untranslatable("Message content must be a string or an array of parts.", `${at}.content`);
  if (role === "assistant") return { role: chatRole, content: assistantText(content as Item[], at) };
  const parts = (content as Item[]).map((part, j) => partToChat(part, `${at}.content[${j}]`, files));
  const only = parts.length === 1 ? parts[0]! : null;
  return { role: chatRole, content: only && only.type === "text" ? only.text : parts };
}

function partToChat(part: Item, at: string, files: FileOptions | undefined): ContentPart {
  switch (part.type) {
    case "input_text":
    case "output_text":
    case "text":
      return { type: "text", text: stringField(part, "text", `${at}.text`) };
    case "input_image":
      return imageToChat(part, at, files);
    case "input_file":
      return fileToChat(part, at, files);
    case "input_audio":
      return audioToChat(part, at);
    default:
      throw untranslatable(`Content parts of type '${String(part.type)}' are not supported for this model.`, `${at}.type`);
  }
}

function imageToChat(part: Item, at: string, files: FileOptions | undefined): ContentPart {
  const image: { url: string; detail?: string } = { url: imageSource(part, at, files) };
  if (typeof part.detail === "string") image.detail = part.detail;
  return { type: "image_url", image_url: image };
}

function audioToChat(part: Item, at: string): ContentPart {
  const audio = part.input_audio as JsonObject | undefined;
  if (!audio || typeof audio !== "object") throw untranslatable("An input_audio part needs an 'input_audio' object with 'data' and 'format'.", `${at}.input_audio`);
  if (typeof audio.data !== "string" || !audio.data) throw untranslatable("Missing or invalid 'data': expected base64-encoded audio.", `${at}.input_audio.data`);
  if (typeof audio.format !== "string" || !audio.format) throw untranslatable("Missing or invalid 'format': expected 'mp3' or 'wav'.", `${at}.input_audio.format`);
  return { type: "input_audio", input_audio: { data: audio.data, format: audio.format } };
}

function customCallToChat(item: Item, at: string, toolNames: ToolNameMap | undefined): ChatToolCall {
  const { callId, name, input } = replayedCustomCall(item, at, toolNames);
  return { id: callId, type: "function", function: { name, arguments: customArguments(input) } };
}

function functionCallToChat(item: Item, at: string, toolNames: ToolNameMap | undefined): ChatToolCall {
  const callId = stringField(item, "call_id", `${at}.call_id`);
  const name = stringField(item, "name", `${at}.name`);
  const args = item.arguments === undefined || item.arguments === null ? "" : item.arguments;
  if (typeof args !== "string") throw untranslatable("function_call 'arguments' must be a string.", `${at}.arguments`);
  const namespace = typeof item.namespace === "string" && item.namespace ? item.namespace : undefined;
  return { id: callId, type: "function", function: { name: chatNameFor(toolNames, name, namespace), arguments: args } };
}

function functionOutputToChat(item: Item, at: string, files: FileOptions | undefined): [ChatMessage, ContentPart[]] {
  const callId = stringField(item, "call_id", `${at}.call_id`);
  const output = item.output;
  const images: ContentPart[] = [];
  let content: string;
  if (typeof output === "string") content = output;
  else if (Array.isArray(output)) {
    content = "";
    for (let j = 0; j < output.length; j++) {
      const part = output[j] as Item;
      if (part?.type === "input_image") images.push(imageToChat(part, `${at}.output[${j}]`, files));
      else if (part?.type === "input_file") images.push(fileToChat(part, `${at}.output[${j}]`, files));
      else if (typeof part?.text === "string") content += part.text;
    }
  } else if (output === undefined || output === null) {
    throw untranslatable("function_call_output needs an 'output'.", `${at}.output`);
  } else content = JSON.stringify(output);
  return [{ role: "tool", tool_call_id: callId, content }, images];
}

/** The visible text of a reasoning item: its reasoning_text content, else its summaries. */
export function reasoningText(item: Item): string {
  const pick = (parts: unknown): string[] =>
    Array.isArray(parts)
      ? parts.flatMap((p: Item) => (typeof p?.text === "string" && p.text ? [p.text] : []))
      : [];
  const content = pick(item.content);
  return (content.length ? content : pick(item.summary)).join("\n\n");
}
