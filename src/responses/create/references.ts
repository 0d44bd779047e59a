/**
 * `item_reference` input items: an item named by its id alone. OpenAI resolves any item it
 * stored; the router looks in the request's own history first, then in what the caller may
 * read: a WebSocket connection's recent responses, the stored responses (their input and
 * output items) and the conversations, in memory or Redis (so any instance finds them).
 */
import { notFound } from "../../ops/errors.js";
import type { Tracing } from "../../tracing/index.js";
import type { ConversationStore, FoundItem, ResponseStore } from "../../store/types.js";
import { isBareReasoning } from "../../wire/protocol.js";
import type { Item } from "../../wire/types.js";
import { callStore, traced } from "./store-access.js";

/** An item the caller may read, by id; null when there is none. */
export type ItemLookup = (id: string) => Promise<Item | null>;

/** Items held outside the store (a WebSocket connection's recent responses, `store: false` ones included). */
export interface LocalItems {
  findItem?(id: string): Item | undefined;
}

/** OpenAI's answer for an id it cannot resolve (a 404 naming `input`, no code). */
export const itemNotFound = (id: string) =>
  notFound(
    `Item with id '${id}' not found. Items are not persisted when \`store\` is set to false. Try again with \`store\` set to true, or remove this item from your input.`,
    "input",
    null,
  );

/**
 * Replaces every `item_reference` by the item it names: from `history`, else from `lookup`; 404 when neither has it.
 * A bare reasoning item (sent back without its `encrypted_content`) gets the stored item's back,
 * or a signed Anthropic thinking block (and an OpenAI upstream's reasoning, sent with store:
 * false) would be lost; it stays as sent when there is none.
 */
export async function resolveReferences(items: Item[], history: Item[], lookup?: ItemLookup): Promise<Item[]> {
  if (!items.some((i) => i.type === "item_reference" || isBareReasoning(i))) return items;
  // Every lookup starts before any is awaited (each may be two store reads); they are read in input
  // order, so the error a request gets is still the one its first failing item meets.
  const lookups = new Map<string, Promise<Item | null>>();
  const find = (id: string): Item | Promise<Item | null> => {
    const own = history.findLast((h) => h.id === id);
    if (own) return own;
    let pending = lookups.get(id);
    if (!pending) {
      pending = lookup ? lookup(id) : Promise.resolve(null);
      pending.catch(() => {}); // awaited below unless an earlier item fails first
      lookups.set(id, pending);
    }
    return pending;
  };
  const found = items.map((item) => (isBareReasoning(item) ? find(item.id as string) : item.type === "item_reference" ? find(String(item.id)) : null));
  const out: Item[] = [];
  for (const [k, item] of items.entries()) {
    if (isBareReasoning(item)) {
      const stored = await found[k];
      out.push(stored?.type === "reasoning" && stored.encrypted_content ? { ...item, encrypted_content: stored.encrypted_content } : item);
      continue;
    }
    if (item.type !== "item_reference") {
      out.push(item);
      continue;
    }
    const stored = await found[k];
    if (!stored) throw itemNotFound(String(item.id));
    out.push(stored);
  }
  return out;
}

/** Looks an id up where `owner` may read: the local items, then stored responses, then conversations (another key's item is a miss). */
export function storedItemLookup(deps: { responses: ResponseStore; conversations: ConversationStore; local?: LocalItems; tracing?: Tracing }, owner: string | null): ItemLookup {
  const readable = (found: FoundItem | null) => (found && (found.owner === null || found.owner === owner) ? found.item : null);
  const load = (op: string, fn: () => Promise<FoundItem | null>) => callStore(() => traced(deps.tracing, op, fn));
  return async (id) =>
    deps.local?.findItem?.(id) ??
    readable(await load("item.load", () => deps.responses.findItem(id))) ??
    readable(await load("conversation.item.load", () => deps.conversations.findItem(id)));
}
