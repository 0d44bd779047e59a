import type { Item } from "../../wire/types.js";
import { BoundedLru, itemIndexLimits, type LruLimits } from "./lru.js";
import { MemoryChains, type Chain, type ChainConversation } from "./chains.js";
import type { ConversationHistory, ConversationRecord, ConversationStore, FoundItem, StoredConversation } from "../types.js";

/**
 * Conversations in process memory, in the chains of chains.ts (the responses made in a
 * conversation live in its chain and link to its items): each item kept once as a JSON
 * string, an append adds the turn's items only. A conversation expires ttlMs after its last
 * write. Every method runs to the end without awaiting, so appends to one conversation are
 * atomic in a single process.
 */
export class MemoryConversationStore implements ConversationStore {
  /** item id -> the conversation that last took it (findItem). */
  private readonly itemIndex: BoundedLru;
  private readonly chains: MemoryChains;

  constructor(opts: LruLimits & { ttlMs: number; now?: () => number }, chains?: MemoryChains) {
    this.chains = chains ?? new MemoryChains(opts, opts.ttlMs, opts.now);
    this.itemIndex = new BoundedLru(itemIndexLimits(opts), opts.now);
  }

  private index(conversationId: string, items: Item[]): void {
    for (const item of items) if (typeof item.id === "string" && item.id) this.itemIndex.set(item.id, conversationId, this.chains.ttlMs);
  }

  /** A live conversation (not deleted, not expired), with its chain. */
  private read(id: string): { chain: Chain; conversation: ChainConversation; record: StoredConversation } | null {
    const chain = this.chains.chainOf(id);
    const conversation = chain?.conversations.get(id);
    if (!chain || !conversation || conversation.record === null || conversation.expiresAt <= this.chains.now()) return null;
    const { conversation: fields, owner } = JSON.parse(conversation.record) as { conversation: ConversationRecord; owner: string | null };
    return { chain, conversation, record: { conversation: fields, owner, endpoint: conversation.endpoint } };
  }

  async create(record: StoredConversation, items: Item[]): Promise<void> {
    const id = record.conversation.id;
    this.chains.putConversation(this.chains.chainOf(id), id, {
      record: JSON.stringify({ conversation: record.conversation, owner: record.owner }),
      endpoint: record.endpoint,
      items: items.map((i) => JSON.stringify(i)),
      refs: 0,
      expiresAt: this.chains.now() + this.chains.ttlMs,
    });
    this.index(id, items);
  }

  async get(id: string): Promise<StoredConversation | null> {
    return this.read(id)?.record ?? null;
  }

  async update(id: string, metadata: Record<string, string>): Promise<StoredConversation | null> {
    const found = this.read(id);
    if (!found) return null;
    const { chain, conversation, record } = found;
    record.conversation.metadata = metadata;
    const before = conversation.record!.length;
    conversation.record = JSON.stringify({ conversation: record.conversation, owner: record.owner });
    this.chains.touchConversation(chain, conversation, conversation.record.length - before);
    return record;
  }

  async delete(id: string): Promise<boolean> {
    const found = this.read(id);
    if (!found) return false;
    this.chains.deleteConversation(found.chain, id, found.conversation);
    return true;
  }

  async append(id: string, items: Item[], endpoint?: string): Promise<boolean> {
    const found = this.read(id);
    if (!found) return false;
    const { chain, conversation } = found;
    let bytes = 0;
    for (const item of items) {
      const json = JSON.stringify(item);
      conversation.items.push(json);
      bytes += json.length;
    }
    if (endpoint !== undefined) conversation.endpoint = endpoint;
    this.chains.touchConversation(chain, conversation, bytes);
    this.index(id, items);
    return true;
  }

  async items(id: string): Promise<Item[] | null> {
    return (await this.history(id))?.items ?? null;
  }

  async history(id: string): Promise<ConversationHistory | null> {
    const found = this.read(id);
    if (!found) return null;
    const raw = found.conversation.items;
    return { items: raw.flatMap((json) => (json === "" ? [] : [JSON.parse(json) as Item])), at: raw.length };
  }

  async deleteItem(id: string, itemId: string): Promise<boolean> {
    const found = this.read(id);
    if (!found) return false;
    const raw = found.conversation.items;
    // Its place stays, empty: positions never move (a response's HistoryBasis names them).
    const at = raw.findIndex((json) => json !== "" && (JSON.parse(json) as Item).id === itemId);
    if (at === -1) return false;
    const bytes = raw[at]!.length;
    raw[at] = "";
    this.chains.touchConversation(found.chain, found.conversation, -bytes);
    return true;
  }

  async findItem(itemId: string): Promise<FoundItem | null> {
    const conversationId = this.itemIndex.get(itemId);
    const found = conversationId === null ? null : this.read(conversationId);
    const json = found?.conversation.items.find((s) => s !== "" && (JSON.parse(s) as Item).id === itemId);
    return found && json ? { item: JSON.parse(json) as Item, owner: found.record.owner } : null;
  }

  async close(): Promise<void> {
    this.chains.clear();
    this.itemIndex.clear();
  }
}
