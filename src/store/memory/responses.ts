import { BoundedLru, itemIndexLimits, type LruLimits } from "./lru.js";
import { itemOfRecord, recordItemIds, type CachedResponse, type FoundItem, type ResponseCache, type ResponseStore, type SaveIfOpenResult, type StoredResponse } from "../types.js";
import { recordJson } from "../record-json.js";
import { isFinished } from "../../wire/protocol.js";

export interface MemoryStoreOptions extends LruLimits {
  ttlMs: number;
  now?: () => number;
}

/**
 * Stored responses in process memory: bounded by entries and bytes (JSON length),
 * expiring after ttlMs, least recently used evicted first. Records are kept as JSON
 * strings, so a caller mutating what it saved or got never changes the store.
 */
export class MemoryResponseStore implements ResponseStore {
  private readonly lru: BoundedLru;
  /** item id -> the id of the response that last saved it (findItem). */
  private readonly items: BoundedLru;
  private readonly ttlMs: number;

  constructor(opts: MemoryStoreOptions) {
    this.lru = new BoundedLru(opts, opts.now);
    this.items = new BoundedLru(itemIndexLimits(opts), opts.now);
    this.ttlMs = opts.ttlMs;
  }

  /** Number of records held (expired ones may linger until touched or evicted). */
  get size(): number {
    return this.lru.size;
  }

  get bytes(): number {
    return this.lru.totalBytes;
  }

  async save(record: StoredResponse, responseJson?: string): Promise<void> {
    this.lru.set(record.response.id, recordJson(record, responseJson), this.ttlMs);
    this.index(record);
  }

  async saveIfOpen(record: StoredResponse): Promise<SaveIfOpenResult> {
    const current = this.lru.get(record.response.id);
    if (current === null) return "missing";
    // One synchronous step: no other call runs between the check and the write.
    if (isFinished((JSON.parse(current) as StoredResponse).response.status)) return "finished";
    this.lru.set(record.response.id, JSON.stringify(record), this.ttlMs);
    this.index(record);
    return "saved";
  }

  async findItem(itemId: string): Promise<FoundItem | null> {
    const responseId = this.items.get(itemId);
    const record = responseId === null ? null : await this.get(responseId);
    return record ? itemOfRecord(record, itemId) : null;
  }

  private index(record: StoredResponse): void {
    for (const id of recordItemIds(record)) this.items.set(id, record.response.id, this.ttlMs);
  }

  async get(id: string): Promise<StoredResponse | null> {
    const json = this.lru.get(id);
    return json === null ? null : (JSON.parse(json) as StoredResponse);
  }

  async delete(id: string): Promise<boolean> {
    return this.lru.delete(id);
  }

  async ping(): Promise<boolean> {
    return true;
  }

  async close(): Promise<void> {
    this.lru.clear();
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
