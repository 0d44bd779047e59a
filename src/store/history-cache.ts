/**
 * The history of the chains this instance served last, held in memory so that the next turn
 * of a chain (which usually lands on the instance that made its parent) does not read and
 * decode the whole history from a shared store again: at depth 500 that is 2 MB through
 * Redis and a 2 MB JSON.parse per turn, the only part of a stored turn's cost that grows with
 * the depth.
 *
 * What is held is never trusted on its own. A chain's entry names the records it covers
 * (`links`: a record's id and its meta exactly as the store keeps it, which changes whenever
 * the record is written again) and the store's one history read checks them: the read walks
 * up from the record asked for and stops at the first one held with the same meta, so only
 * the part below it travels; a record missing, deleted, expired or another key's is answered
 * by the store as it always is, never from here. Only finished records are held (a finished
 * record is never rewritten), and never history that starts with a conversation's items
 * (those can be deleted one by one).
 *
 * Memory stays linear: one entry per chain holds one array of the items of its newest record
 * (its input, then its output), every record of the entry covering a prefix of it. A turn
 * on the newest record appends to that array; a fork copies the array's prefix (pointers,
 * not items). Items are frozen when they enter: callers share them, none may change them.
 * The bound counts the JSON bytes of each entry's items; the least recently used chains go
 * first.
 */
import type { Item } from "../wire/types.js";

/** A record an entry covers: its history for a child is `items.slice(0, end)`, ending with its own `inputs` input items and its `outputs` output items. */
export interface HeldLink {
  id: string;
  /** The record's meta as the store keeps it (a version: any rewrite changes it). */
  meta: string;
  end: number;
  inputs: number;
  outputs: number;
  /** JSON bytes of `items.slice(0, end)`. */
  bytes: number;
}

/** One chain's held history, as of one moment: `items` only ever grows past the ends `links` name, so a snapshot stays true. */
export interface HeldHistory {
  readonly items: readonly Item[];
  readonly links: readonly HeldLink[];
  /** The store's count of rewrites in the chain when this was read: what is held counts only while it is unchanged. */
  readonly rewrites: string;
}

interface Entry {
  items: Item[];
  links: HeldLink[];
  rewrites: string;
}

/** Records an entry names: enough for a fork a few turns back, few enough to send with every read. */
const MAX_LINKS = 8;

export class HistoryCache {
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;

  constructor(readonly maxBytes: number) {}

  get totalBytes(): number {
    return this.bytes;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The chain's held history (a touch), or null. */
  held(tag: string): HeldHistory | null {
    const entry = this.entries.get(tag);
    if (!entry) return null;
    this.entries.delete(tag);
    this.entries.set(tag, entry);
    return { items: entry.items, links: entry.links, rewrites: entry.rewrites };
  }

  /**
   * Holds record `link.id` of chain `tag`: its history is `base`'s prefix up to record
   * `after` (null: the record's history starts with `added`), then `added` (frozen here);
   * `rewrites`: the chain's rewrite count it was read at. Nothing is held when `after` is not
   * in `base`, or the entry would not fit.
   */
  hold(tag: string, base: HeldHistory | null, after: string | null, added: Item[], link: Omit<HeldLink, "end" | "bytes">, addedBytes: number, rewrites: string): void {
    for (const item of added) deepFreeze(item);
    let items: Item[];
    let links: HeldLink[];
    let bytes = addedBytes;
    if (after === null) {
      items = added;
      links = [];
    } else {
      const at = base?.links.findIndex((l) => l.id === after) ?? -1;
      if (at === -1) return;
      const parent = base!.links[at]!;
      const current = this.entries.get(tag);
      // The newest record of the entry: its items are appended to in place (no copy of the history per turn).
      if (current && current.items === base!.items && current.links[current.links.length - 1] === parent && current.items.length === parent.end) items = current.items;
      else items = base!.items.slice(0, parent.end);
      for (const item of added) items.push(item);
      links = base!.links.slice(Math.max(0, at + 2 - MAX_LINKS), at + 1);
      bytes += parent.bytes;
    }
    links.push({ ...link, end: items.length, bytes });
    this.drop(tag);
    if (bytes > this.maxBytes) return;
    this.entries.set(tag, { items, links, rewrites });
    this.bytes += bytes;
    for (const [oldest, entry] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.bytes -= entry.links[entry.links.length - 1]!.bytes;
      this.entries.delete(oldest);
    }
  }

  /** Forgets a chain. */
  drop(tag: string): void {
    const entry = this.entries.get(tag);
    if (!entry) return;
    this.bytes -= entry.links[entry.links.length - 1]!.bytes;
    this.entries.delete(tag);
  }

  clear(): void {
    this.entries.clear();
    this.bytes = 0;
  }
}

/** The history `link` covers for its children, or its input and output apart. */
export function heldInput(held: HeldHistory, link: HeldLink): { input: Item[]; output: Item[] } {
  return { input: held.items.slice(0, link.end - link.outputs), output: held.items.slice(link.end - link.outputs, link.end) };
}

function deepFreeze(value: unknown): void {
  if (value === null || typeof value !== "object" || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const v of Object.values(value)) deepFreeze(v);
}
