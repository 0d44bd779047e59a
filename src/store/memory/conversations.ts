import type { Item } from "../../wire/types.js";
import { BoundedLru, itemIndexLimits, type LruLimits } from "./lru.js";
import type { ConversationStore, FoundItem, StoredConversation } from "../types.js";

interface Entry extends StoredConversation {
  items: Item[];
}

/**
 * Conversations in process memory: one JSON string per conversation (record and items)
 * in the bounded LRU, expiring ttlMs after the last write. Every method runs to the end
 * without awaiting, so appends to one conversation are atomic in a single process.
 */
export class MemoryConversationStore implements ConversationStore {
  private readonly lru: BoundedLru;
  /** item id -> the conversation that last took it (findItem). */
  private readonly itemIndex: BoundedLru;

  constructor(private readonly opts: LruLimits & { ttlMs: number; now?: () => number }) {
    this.lru = new BoundedLru(opts, opts.now);
    this.itemIndex = new BoundedLru(itemIndexLimits(opts), opts.now);
  }

  private index(conversationId: string, items: Item[]): void {
    for (const item of items) if (typeof item.id === "string" && item.id) this.itemIndex.set(item.id, conversationId, this.opts.ttlMs);
  }

  private read(id: string): Entry | null {
    const json = this.lru.get(id);
    return json === null ? null : (JSON.parse(json) as Entry);
  }

  private write(entry: Entry): void {
    this.lru.set(entry.conversation.id, JSON.stringify(entry), this.opts.ttlMs);
  }

  async create(record: StoredConversation, items: Item[]): Promise<void> {
    this.write({ ...record, items });
    this.index(record.conversation.id, items);
  }

  async get(id: string): Promise<StoredConversation | null> {
    const entry = this.read(id);
    if (!entry) return null;
    const { items: _items, ...record } = entry;
    return record;
  }

  async update(id: string, metadata: Record<string, string>): Promise<StoredConversation | null> {
    const entry = this.read(id);
    if (!entry) return null;
    entry.conversation.metadata = metadata;
    this.write(entry);
    const { items: _items, ...record } = entry;
    return record;
  }

  async delete(id: string): Promise<boolean> {
    return this.lru.delete(id);
  }

  async append(id: string, items: Item[], endpoint?: string): Promise<boolean> {
    const entry = this.read(id);
    if (!entry) return false;
    entry.items.push(...items);
    if (endpoint !== undefined) entry.endpoint = endpoint;
    this.write(entry);
    this.index(id, items);
    return true;
  }

  async items(id: string): Promise<Item[] | null> {
    return this.read(id)?.items ?? null;
  }

  async deleteItem(id: string, itemId: string): Promise<boolean> {
    const entry = this.read(id);
    const at = entry ? entry.items.findIndex((i) => i.id === itemId) : -1;
    if (!entry || at === -1) return false;
    entry.items.splice(at, 1);
    this.write(entry);
    return true;
  }

  async findItem(itemId: string): Promise<FoundItem | null> {
    const conversationId = this.itemIndex.get(itemId);
    const entry = conversationId === null ? null : this.read(conversationId);
    const item = entry?.items.find((i) => i.id === itemId);
    return entry && item ? { item, owner: entry.owner } : null;
  }

  async close(): Promise<void> {
    this.lru.clear();
    this.itemIndex.clear();
  }
}
