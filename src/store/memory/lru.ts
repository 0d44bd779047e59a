/**
 * A bounded map of serialized values: at most maxEntries entries and about maxBytes
 * (the sum of the stored strings' lengths), each with its own expiry. A linked list beside
 * the Map keeps the recency order: get() moves an entry to its back, eviction takes from its
 * front. Storing strings means callers can never mutate what is stored.
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

/** An entry in recency order: the list runs from the least recently used (after the sentinel) to the most. */
class Node {
  prev: Node = this;
  next: Node = this;
  constructor(
    readonly key: string,
    public value: string,
    public expiresAt: number,
  ) {}
}

export class BoundedLru {
  private readonly entries = new Map<string, Node>();
  /** The list's sentinel: `head.next` is the oldest entry, `head.prev` the newest. */
  private readonly head = new Node("", "", 0);
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
    const node = this.entries.get(key);
    if (!node) return null;
    if (node.expiresAt <= this.now()) {
      this.remove(node);
      return null;
    }
    // Refresh recency.
    unlink(node);
    this.append(node);
    return node.value;
  }

  set(key: string, value: string, ttlMs: number): void {
    const old = this.entries.get(key);
    if (old) this.remove(old);
    const node = new Node(key, value, this.now() + ttlMs);
    this.entries.set(key, node);
    this.append(node);
    this.bytes += value.length;
    this.evict(key);
  }

  delete(key: string): boolean {
    const node = this.entries.get(key);
    if (!node) return false;
    const live = node.expiresAt > this.now();
    this.remove(node);
    return live;
  }

  clear(): void {
    this.entries.clear();
    this.head.next = this.head.prev = this.head;
    this.bytes = 0;
  }

  private append(node: Node): void {
    const last = this.head.prev;
    node.prev = last;
    node.next = this.head;
    last.next = node;
    this.head.prev = node;
  }

  private remove(node: Node): void {
    this.entries.delete(node.key);
    unlink(node);
    this.bytes -= node.value.length;
  }

  /**
   * Drops expired entries, then the least recently used ones until within limits, walking the
   * list from its oldest entry. (Walking the Map from its front instead cost a skip over every
   * entry deleted there since V8 last compacted the table: 170 µs per set in a full index.)
   * The entry just written (`keep`) stays even when it alone exceeds maxBytes.
   */
  private evict(keep: string): void {
    const now = this.now();
    for (let node = this.head.next; node !== this.head; ) {
      const next = node.next;
      const over = this.entries.size > this.limits.maxEntries || this.bytes > this.limits.maxBytes;
      if (!over && node.expiresAt > now) break;
      if (node.key !== keep) this.remove(node);
      node = next;
    }
  }
}

function unlink(node: Node): void {
  node.prev.next = node.next;
  node.next.prev = node.prev;
  node.prev = node.next = node;
}
