/**
 * The embedded store's chains: the same layout as Redis (../redis/chain-scripts.ts), each item
 * stored once. A chain holds a root response, every response built on it (forks included),
 * and a conversation with the responses made in it; a record keeps its own input and output
 * as JSON with a link to its parent or conversation. Bounds (entries: records and
 * conversations; bytes: the JSON they hold) evict whole chains, least recently used first, so
 * a response never loses part of its history: it is gone with its chain or it is whole.
 * A chain expires ttl after its last write; a record past its own expiry, or deleted, stays
 * as a tombstone while a live record links to it, and is dropped with the last one that does.
 */
import { empty, Linked, linkLast, unlink } from "./recency-list.js";
import type { LruLimits } from "./lru.js";

export interface ChainRecord {
  parent?: string;
  conversation?: string;
  /** The conversation's position this record builds on. */
  at?: number;
  expiresAt: number;
  owner: string | null;
  endpoint?: string;
  status: string;
  deleted: boolean;
  /** Records linking to this one. */
  kids: number;
  /** The response without its output (JSON); null once deleted. */
  response: string | null;
  output: string;
  input: string;
  /** `{"i": own input ids, "o": output ids}` (RecordParts.idsJson). */
  ids: string;
}

export interface ChainConversation {
  /** `{conversation, owner}` as JSON; null once the conversation is deleted (its items kept for the records built on them). */
  record: string | null;
  endpoint: string | null;
  /** Item JSON, "" where an item was deleted (positions never move). */
  items: string[];
  /** Records built on these items. */
  refs: number;
  expiresAt: number;
}

export class Chain extends Linked<Chain> {
  readonly records = new Map<string, ChainRecord>();
  readonly conversations = new Map<string, ChainConversation>();
  /** Records nothing links to. */
  readonly leaves = new Set<string>();
  bytes = 0;
  expiresAt = 0;
}

const recordBytes = (id: string, r: ChainRecord) => id.length + (r.response?.length ?? 0) + r.output.length + r.input.length + r.ids.length + (r.owner?.length ?? 0);
const conversationBytes = (id: string, c: ChainConversation) => id.length + (c.record?.length ?? 0) + c.items.reduce((n, s) => n + s.length, 0);

export class MemoryChains {
  /** Response or conversation id -> its chain. */
  private readonly byId = new Map<string, Chain>();
  /** Sentinel of the chains in recency order (`head.next` the oldest). */
  private readonly head = new Chain();
  private bytes = 0;
  private entries = 0;

  constructor(
    private readonly limits: LruLimits,
    readonly ttlMs: number,
    readonly now: () => number = Date.now,
  ) {}

  get totalBytes(): number {
    return this.bytes;
  }

  get size(): number {
    return this.entries;
  }

  /** The live chain holding `id` (a touch: it becomes the most recent), or null. */
  chainOf(id: string): Chain | null {
    const chain = this.byId.get(id);
    if (!chain) return null;
    if (chain.expiresAt <= this.now()) {
      this.evict(chain);
      return null;
    }
    unlink(chain);
    linkLast(this.head, chain);
    return chain;
  }

  /** A live record (not deleted, not expired), with its chain. */
  live(id: string): { chain: Chain; record: ChainRecord } | null {
    const chain = this.chainOf(id);
    const record = chain?.records.get(id);
    if (!chain || !record || record.deleted || record.expiresAt <= this.now()) return null;
    return { chain, record };
  }

  /** Writes a record into `chain` (a new chain when null), keeping links, bytes and bounds right. */
  putRecord(chain: Chain | null, id: string, record: ChainRecord): void {
    const target = chain ?? this.newChain();
    const old = target.records.get(id);
    if (old) {
      this.unlinkRecord(target, old);
      record.kids = old.kids;
      this.forget(target, recordBytes(id, old), 1);
      target.records.delete(id);
    } else if (this.byId.get(id) && this.byId.get(id) !== target) {
      this.removeRecord(this.byId.get(id)!, id);
    }
    if (record.parent) {
      const parent = target.records.get(record.parent)!;
      parent.kids++;
      target.leaves.delete(record.parent);
    }
    if (record.conversation) target.conversations.get(record.conversation)!.refs++;
    target.records.set(id, record);
    if (record.kids === 0) target.leaves.add(id);
    this.byId.set(id, target);
    this.add(target, recordBytes(id, record), 1);
    this.sweep(target);
    this.wrote(target);
  }

  /** Replaces an open record's own parts; its links stay. */
  updateRecord(chain: Chain, id: string, record: ChainRecord, change: Pick<ChainRecord, "status" | "response" | "output" | "input" | "ids" | "owner" | "endpoint">): void {
    const before = recordBytes(id, record);
    Object.assign(record, change);
    this.add(chain, recordBytes(id, record) - before, 0);
    this.wrote(chain);
  }

  /** Deletes a live record: a tombstone while records link to it, else dropped. */
  deleteRecord(chain: Chain, id: string, record: ChainRecord): void {
    if (record.kids > 0) {
      const before = recordBytes(id, record);
      record.deleted = true;
      record.response = null;
      this.add(chain, recordBytes(id, record) - before, 0);
      return;
    }
    this.drop(chain, id);
    if (chain.records.size === 0 && chain.conversations.size === 0) this.evict(chain);
  }

  putConversation(chain: Chain | null, id: string, conversation: ChainConversation): void {
    const target = chain ?? this.newChain();
    const old = target.conversations.get(id);
    if (old) {
      this.forget(target, conversationBytes(id, old), 1);
      conversation.refs = old.refs;
    }
    target.conversations.set(id, conversation);
    this.byId.set(id, target);
    this.add(target, conversationBytes(id, conversation), 1);
    this.wrote(target);
  }

  /** Bytes a conversation's change added (or took: negative); it was written now. */
  touchConversation(chain: Chain, conversation: ChainConversation, deltaBytes: number): void {
    conversation.expiresAt = this.now() + this.ttlMs;
    this.add(chain, deltaBytes, 0);
    this.wrote(chain);
  }

  /** Deletes a conversation's record; its items stay while records are built on them. */
  deleteConversation(chain: Chain, id: string, conversation: ChainConversation): void {
    if (conversation.refs > 0) {
      this.add(chain, -(conversation.record?.length ?? 0), 0);
      conversation.record = null;
      return;
    }
    this.forget(chain, conversationBytes(id, conversation), 1);
    chain.conversations.delete(id);
    this.byId.delete(id);
    if (chain.records.size === 0 && chain.conversations.size === 0) this.evict(chain);
  }

  clear(): void {
    this.byId.clear();
    empty(this.head);
    this.bytes = 0;
    this.entries = 0;
  }

  private newChain(): Chain {
    const chain = new Chain();
    linkLast(this.head, chain);
    return chain;
  }

  /** The chain was written: it lives ttl from now, is the most recent, and the bounds hold again. */
  private wrote(chain: Chain): void {
    chain.expiresAt = this.now() + this.ttlMs;
    unlink(chain);
    linkLast(this.head, chain);
    const now = this.now();
    for (let node = this.head.next; node !== this.head; ) {
      const next = node.next;
      const over = this.entries > this.limits.maxEntries || this.bytes > this.limits.maxBytes;
      if (!over && node.expiresAt > now) break;
      if (node !== chain) this.evict(node);
      node = next;
    }
  }

  /** Drops the chain's expired leaves (and what was kept only for them). */
  private sweep(chain: Chain): void {
    const now = this.now();
    for (const id of [...chain.leaves]) if (chain.records.get(id)!.expiresAt <= now) this.drop(chain, id);
  }

  /** Drops record `id`, then each ancestor kept only for it. */
  private drop(chain: Chain, id: string | undefined): void {
    const now = this.now();
    while (id) {
      const record = chain.records.get(id);
      if (!record) return;
      this.removeRecord(chain, id);
      this.unlinkRecord(chain, record);
      const parent = record.parent ? chain.records.get(record.parent) : undefined;
      if (!parent || parent.kids > 0) return;
      if (!parent.deleted && parent.expiresAt > now) {
        chain.leaves.add(record.parent!);
        return;
      }
      id = record.parent;
    }
  }

  /** Takes a record's links back (its parent's kids, its conversation's refs). */
  private unlinkRecord(chain: Chain, record: ChainRecord): void {
    if (record.parent) {
      const parent = chain.records.get(record.parent);
      if (parent) parent.kids--;
    }
    if (record.conversation) {
      const conversation = chain.conversations.get(record.conversation);
      if (conversation && --conversation.refs <= 0 && conversation.record === null) {
        this.forget(chain, conversationBytes(record.conversation, conversation), 1);
        chain.conversations.delete(record.conversation);
        this.byId.delete(record.conversation);
      }
    }
  }

  private removeRecord(chain: Chain, id: string): void {
    const record = chain.records.get(id);
    if (!record) return;
    this.forget(chain, recordBytes(id, record), 1);
    chain.records.delete(id);
    chain.leaves.delete(id);
    this.byId.delete(id);
  }

  private evict(chain: Chain): void {
    for (const id of chain.records.keys()) this.byId.delete(id);
    for (const id of chain.conversations.keys()) this.byId.delete(id);
    this.bytes -= chain.bytes;
    this.entries -= chain.records.size + chain.conversations.size;
    chain.records.clear();
    chain.conversations.clear();
    chain.leaves.clear();
    chain.bytes = 0;
    unlink(chain);
  }

  private add(chain: Chain, bytes: number, entries: number): void {
    chain.bytes += bytes;
    this.bytes += bytes;
    this.entries += entries;
  }

  private forget(chain: Chain, bytes: number, entries: number): void {
    this.add(chain, -bytes, -entries);
  }
}
