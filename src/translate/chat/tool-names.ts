/**
 * Chat-safe names for namespaced functions.
 *
 * Codex CLI sends `{type:"namespace", name, tools:[function tools]}`. Chat completions
 * has no namespaces, so each member becomes one chat function named `${ns}__${fn}`
 * (chat names must match ^[a-zA-Z0-9_-]{1,64}$). The reverse lookup lives in a
 * ToolNameMap so a chat tool call maps back to the Responses shape
 * `{type:"function_call", name: fn, namespace: ns}` - the `namespace` field that
 * openai-node's ResponseFunctionToolCall and Codex's `ResponseItem::FunctionCall`
 * carry, with `name` being the bare member name.
 */
import type { ToolIdentity, ToolNameMap } from "./chat-types.js";
import { namespaceKey } from "./chat-types.js";

const MAX_NAME = 64;
const UNSAFE = /[^a-zA-Z0-9_-]/g;

/** 32-bit FNV-1a, hex: a short deterministic suffix for over-long names. */
function fnv1a(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(16).padStart(8, "0");
}

/** The deterministic chat name of `ns`'s member `fn` (before collision handling). */
export function joinedToolName(namespace: string, name: string): string {
  const joined = `${namespace}__${name}`;
  const safe = joined.replace(UNSAFE, "_");
  if (safe.length <= MAX_NAME && safe.length > 0) return safe;
  return `${safe.slice(0, MAX_NAME - 9)}_${fnv1a(joined)}`;
}

/** Registers a namespaced function, avoiding names already `taken`; returns its chat name. */
export function registerNamespaced(map: ToolNameMap, taken: Set<string>, namespace: string, name: string): string {
  const base = joinedToolName(namespace, name);
  let chatName = base;
  for (let n = 2; taken.has(chatName); n++) {
    const suffix = `_${n}`;
    chatName = base.slice(0, MAX_NAME - suffix.length) + suffix;
  }
  taken.add(chatName);
  map.fromChat[chatName] = { name, namespace };
  map.toChat[namespaceKey(namespace, name)] = chatName;
  return chatName;
}

/** Chat name for a Responses function identity (history replay). */
export function chatNameFor(map: ToolNameMap | undefined, name: string, namespace: string | undefined): string {
  if (!namespace) return name;
  const key = namespaceKey(namespace, name);
  return map && Object.hasOwn(map.toChat, key) ? map.toChat[key]! : joinedToolName(namespace, name);
}

/** Responses identity of a chat function name; plain functions map to themselves. */
export function identityFor(map: ToolNameMap | undefined, chatName: string): ToolIdentity {
  return map && Object.hasOwn(map.fromChat, chatName) ? map.fromChat[chatName]! : { name: chatName };
}

/**
 * The map when it names any tool, else undefined (which every reader takes as "names as they
 * are"). What an open stream keeps: its two null-prototype records are dictionaries of ~150
 * bytes each even when empty, as they are for most requests.
 */
export function namedTools(map: ToolNameMap): ToolNameMap | undefined {
  for (const _ in map.fromChat) return map;
  for (const _ in map.toChat) return map;
  return undefined;
}
