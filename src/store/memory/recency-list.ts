/**
 * An intrusive doubly linked list in recency order, for the memory store's bounded maps: a
 * sentinel node whose `next` is the oldest entry and whose `prev` is the newest. Eviction walks
 * it from the sentinel, never a Map from its front: V8 keeps the entries deleted there until it
 * next compacts the table, and each such walk would skip them all (170 µs per write in a full
 * item index, test/bench/lru-cost.ts).
 */
export class Linked<T extends Linked<T>> {
  prev: T;
  next: T;
  constructor() {
    this.prev = this.next = this as unknown as T;
  }
}

/** Puts `node` last (newest) in the list of `head`. */
export function linkLast<T extends Linked<T>>(head: T, node: T): void {
  const last = head.prev;
  node.prev = last;
  node.next = head;
  last.next = node;
  head.prev = node;
}

/** Takes `node` out of its list. */
export function unlink<T extends Linked<T>>(node: T): void {
  node.prev.next = node.next;
  node.next.prev = node.prev;
  node.prev = node.next = node;
}

/** Empties the list of `head`. */
export function empty<T extends Linked<T>>(head: T): void {
  head.prev = head.next = head;
}
