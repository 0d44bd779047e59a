/**
 * A bounded map of serialized values: at most maxEntries entries and about maxBytes
 * (the sum of the stored strings' lengths), each with its own expiry. A linked list beside
 * the Map keeps the recency order: get() moves an entry to its back, eviction takes from its
 * front. Storing strings means callers can never mutate what is stored.
 */
import { empty, Linked, linkLast, unlink } from "./recency-list.js";

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

/** An entry, in the list from the least recently used to the most. */
class Node extends Linked<Node> {
  constructor(
    readonly key: string,
    public value: string,
    public expiresAt: number,
  ) {
    super();
  }
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
    linkLast(this.head, node);
    return node.value;
  }

  set(key: string, value: string, ttlMs: number): void {
    const old = this.entries.get(key);
    if (old) this.remove(old);
    const node = new Node(key, value, this.now() + ttlMs);
    this.entries.set(key, node);
    linkLast(this.head, node);
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
    empty(this.head);
    this.bytes = 0;
  }

  private remove(node: Node): void {
    this.entries.delete(node.key);
    unlink(node);
    this.bytes -= node.value.length;
  }

  /**
   * Drops expired entries, then the least recently used ones until within limits, walking the
   * list from its oldest entry (recency-list.ts says why not the Map). The entry just written
   * (`keep`) stays even when it alone exceeds maxBytes.
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
