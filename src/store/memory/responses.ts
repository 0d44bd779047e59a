import { BoundedLru, itemIndexLimits, type LruLimits } from "./lru.js";
import { concatItems, joinRecord, recordParts, segmentedIndex, standalone } from "../chain.js";
import { MemoryChains, type Chain, type ChainRecord } from "./chains.js";
import type { Item } from "../../wire/types.js";
import { itemIdsOf } from "../../wire/ids.js";
import { type InputIndex, type CachedResponse, type FoundItem, type ResponseCache, type ResponseStore, type SaveIfOpenResult, type StoredResponse } from "../types.js";
import { recordJson } from "../record-json.js";
import { isFinished } from "../../wire/protocol.js";

export interface MemoryStoreOptions extends LruLimits {
  ttlMs: number;
  now?: () => number;
}

/**
 * Stored responses in process memory, each item stored once, in the chains of chains.ts
 * (shared with the conversations, so a response made in one links to its items). Records are
 * kept as JSON strings, so a caller mutating what it saved or got never changes the store.
 */
export class MemoryResponseStore implements ResponseStore {
  /** item id -> the id of the response that last saved it (findItem). */
  private readonly items: BoundedLru;
  readonly chains: MemoryChains;

  constructor(opts: MemoryStoreOptions, chains?: MemoryChains) {
    this.chains = chains ?? new MemoryChains(opts, opts.ttlMs, opts.now);
    this.items = new BoundedLru(itemIndexLimits(opts), opts.now);
  }

  /** Records and conversations held (expired ones may linger until touched or evicted). */
  get size(): number {
    return this.chains.size;
  }

  /** The bytes of JSON held. */
  get bytes(): number {
    return this.chains.totalBytes;
  }

  /** (The response's JSON a caller made is not reused: the output is kept apart from the rest.) */
  async save(record: StoredResponse, _responseJson?: string): Promise<void> {
    const parts = recordParts(record);
    const basis = parts.basis;
    const chain = basis ? this.chains.chainOf("response" in basis ? basis.response : basis.conversation) : null;
    const linked =
      basis && chain && ("response" in basis ? chain.records.has(basis.response) : (chain.conversations.get(basis.conversation)?.items.length ?? -1) >= basis.at) ? basis : null;
    if (basis && !linked) return this.save(standalone(record));
    const now = this.chains.now();
    const stored: ChainRecord = {
      expiresAt: now + this.chains.ttlMs,
      owner: record.owner,
      status: record.response.status,
      deleted: false,
      kids: 0,
      response: parts.responseJson,
      output: parts.outputJson,
      input: parts.ownInputJson,
      ids: parts.idsJson,
    };
    if (record.endpoint) stored.endpoint = record.endpoint;
    if (linked && "response" in linked) stored.parent = linked.response;
    if (linked && "conversation" in linked) {
      stored.conversation = linked.conversation;
      stored.at = linked.at;
    }
    this.chains.putRecord(linked ? chain : this.chains.chainOf(record.response.id), record.response.id, stored);
    this.index(parts.itemIds, record.response.id);
  }

  async saveIfOpen(record: StoredResponse): Promise<SaveIfOpenResult> {
    const found = this.chains.live(record.response.id);
    if (!found) return "missing";
    // One synchronous step: no other call runs between the check and the write.
    if (isFinished(found.record.status)) return "finished";
    const parts = recordParts(record);
    this.chains.updateRecord(found.chain, record.response.id, found.record, {
      status: record.response.status,
      response: parts.responseJson,
      output: parts.outputJson,
      input: parts.ownInputJson,
      ids: parts.idsJson,
      owner: record.owner,
      endpoint: record.endpoint,
    });
    this.index(itemIdsOf(record.response.output), record.response.id);
    return "saved";
  }

  async findItem(itemId: string): Promise<FoundItem | null> {
    const responseId = this.items.get(itemId);
    const found = responseId === null ? null : this.chains.live(responseId);
    if (!found) return null;
    const item = concatItems([found.record.output, found.record.input]).find((i) => i.id === itemId);
    return item ? { item, owner: found.record.owner } : null;
  }

  private index(itemIds: string[], responseId: string): void {
    for (const id of itemIds) this.items.set(id, responseId, this.chains.ttlMs);
  }

  async get(id: string): Promise<StoredResponse | null> {
    const found = this.chains.live(id);
    const parts = found && this.historyParts(found.chain, found.record);
    if (!found || !parts) return null;
    const { record } = found;
    const history = concatItems(parts.map((p) => p.json));
    const basis = record.parent ? { response: record.parent, items: history.length } : record.conversation ? { conversation: record.conversation, at: record.at!, items: history.length } : null;
    return joinRecord(record.response!, record.output, history, JSON.parse(record.input) as Item[], { owner: record.owner, endpoint: record.endpoint, basis });
  }

  async inputIndex(id: string): Promise<InputIndex | null> {
    const found = this.chains.live(id);
    const parts = found && this.historyParts(found.chain, found.record);
    if (!found || !parts) return null;
    const own = JSON.parse(found.record.ids) as { i: string[] };
    parts.push({ json: found.record.input, ids: () => own.i });
    // In process the parts are at hand; only the ones a page shows are parsed.
    const segments = parts.map((part, k) => ({ ref: String(k), ids: part.ids() }));
    return segmentedIndex(found.record.owner, segments, async (refs) => refs.map((k) => parts[Number(k)]!.json));
  }

  /**
   * The history of a record in parts, oldest first (the conversation's items if the chain was
   * made in one, then each ancestor's own input and output), each with its item ids; null when
   * a link is broken (never a history cut short).
   */
  private historyParts(chain: Chain, record: ChainRecord): { json: string; ids: () => string[] }[] | null {
    const parts: { json: string; ids: () => string[] }[] = [];
    let root = record;
    for (let at = record.parent; at !== undefined; ) {
      const parent = chain.records.get(at);
      if (!parent) return null;
      const ids = () => JSON.parse(parent.ids) as { i: string[]; o: string[] };
      parts.push({ json: parent.output, ids: () => ids().o }, { json: parent.input, ids: () => ids().i });
      root = parent;
      at = parent.parent;
    }
    if (root.conversation !== undefined) {
      const conversation = chain.conversations.get(root.conversation);
      if (!conversation || conversation.items.length < root.at!) return null;
      const items = conversation.items.slice(0, root.at).filter((s) => s !== "");
      parts.push({ json: `[${items.join(",")}]`, ids: () => items.map((json) => (JSON.parse(json) as { id?: string }).id ?? "") });
    }
    return parts.reverse();
  }

  async delete(id: string): Promise<boolean> {
    const found = this.chains.live(id);
    if (!found) return false;
    this.chains.deleteRecord(found.chain, id, found.record);
    return true;
  }

  async ping(): Promise<boolean> {
    return true;
  }

  async close(): Promise<void> {
    this.chains.clear();
    this.items.clear();
  }
}

/** The response cache in process memory: bounded by entries and bytes, per-entry TTL. */
export class MemoryResponseCache implements ResponseCache {
  private readonly lru: BoundedLru;

  constructor(opts: LruLimits & { now?: () => number }) {
    this.lru = new BoundedLru(opts, opts.now);
  }

  get size(): number {
    return this.lru.size;
  }

  async get(key: string): Promise<CachedResponse | null> {
    const json = this.lru.get(key);
    return json === null ? null : (JSON.parse(json) as CachedResponse);
  }

  async set(key: string, value: CachedResponse, ttlMs: number, responseJson?: string): Promise<void> {
    if (ttlMs <= 0) return;
    this.lru.set(key, recordJson(value, responseJson), ttlMs);
  }

  async close(): Promise<void> {
    this.lru.clear();
  }
}
