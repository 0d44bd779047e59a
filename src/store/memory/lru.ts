/**
 * A bounded map of serialized values: at most maxEntries entries and about maxBytes
 * (the sum of the stored strings' lengths), each with its own expiry. Map insertion
 * order is the recency order: get() moves an entry to the back, eviction takes from
 * the front. Storing strings means callers can never mutate what is stored.
 */
export interface LruLimits {
  maxEntries: number;
  maxBytes: number;
}

/**
 * Bounds for an index of item ids (item id -> record id) beside a store of records: several
 * items per record (an id met again in a later record moves, it is not added), each entry two
 * short ids, so more entries within a small share of the bytes.
 */
export function itemIndexLimits(limits: LruLimits): LruLimits {
  return { maxEntries: limits.maxEntries * 16, maxBytes: Math.ceil(limits.maxBytes / 8) };
}

interface Entry {
  value: string;
  expiresAt: number;
}

export class BoundedLru {
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;

  constructor(
    private readonly limits: LruLimits,
    private readonly now: () => number = Date.now,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  get totalBytes(): number {
    return this.bytes;
  }

  get(key: string): string | null {
    const entry = this.entries.get(key);
    if (!entry) return null;
    if (entry.expiresAt <= this.now()) {
      this.remove(key, entry);
      return null;
    }
    // Refresh recency.
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.value;
  }

  set(key: string, value: string, ttlMs: number): void {
    const old = this.entries.get(key);
    if (old) this.remove(key, old);
    this.entries.set(key, { value, expiresAt: this.now() + ttlMs });
    this.bytes += value.length;
    this.evict(key);
  }

  delete(key: string): boolean {
    const entry = this.entries.get(key);
    if (!entry) return false;
    const live = entry.expiresAt > this.now();
    this.remove(key, entry);
    return live;
  }

  clear(): void {
    this.entries.clear();
    this.bytes = 0;
  }

  private remove(key: string, entry: Entry): void {
    this.entries.delete(key);
    this.bytes -= entry.value.length;
  }

  /** Drops expired entries, then the least recently used ones until within limits.
   * The entry just written (`keep`) stays even when it alone exceeds maxBytes. */
  private evict(keep: string): void {
    const now = this.now();
    for (const [key, entry] of this.entries) {
      const over = this.entries.size > this.limits.maxEntries || this.bytes > this.limits.maxBytes;
      if (!over && entry.expiresAt > now) break;
      if (key === keep) continue;
      this.remove(key, entry);
    }
  }
}
