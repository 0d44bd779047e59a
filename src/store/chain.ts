/**
 * Each item stored once. A stored response keeps what its turn added (its own input items
 * and its output) and a link to the history it builds on: its parent response (whose own
 * items link on in turn) or a conversation's first items. Storing a turn therefore costs
 * that turn, whatever the depth, and history is the walk up the links.
 *
 * A chain (a root response, its descendants and forks, and a conversation with the responses
 * made in it) shares one hash tag, so the walk is one script call in Redis, also on a
 * Cluster. The tag is read off the response id itself: a response built on a parent (or in a
 * conversation) gets an id that starts with its parent's tag (idInChain), so a bare id is
 * enough to find its whole chain in one round trip. Ids the router did not make this way (a
 * test's `resp_1`) all share the tag "~" - correct, only not spread over a Cluster's shards.
 */
import type { IdGenerator } from "../wire/ids.js";
import type { Item, ResponseObject } from "../wire/types.js";
import type { HistoryBasis, InputIndex, StoredResponse } from "./types.js";

/** `<prefix>_<48 hex>`: the router's own ids (randomId); the first 16 hex digits are the chain's tag. */
const ROUTER_ID = /^[a-z]+_([0-9a-f]{16})[0-9a-f]{32}$/;

/** The hash tag of the chain a response or conversation id belongs to. */
export function chainTag(id: string): string {
  return ROUTER_ID.exec(id)?.[1] ?? "~";
}

/** A new response id in the chain of `of` (the parent response or the conversation), or a fresh one. */
export function idInChain(ids: IdGenerator, of: string | null): string {
  const fresh = ids("resp");
  const tag = of === null ? null : ROUTER_ID.exec(of)?.[1];
  if (!tag || !ROUTER_ID.test(fresh)) return fresh;
  return `resp_${tag}${fresh.slice(5 + 16)}`;
}

/**
 * What a store writes for a record: the response without its output (`responseJson`), the
 * output, and the record's own input items (after its basis), each as JSON. `linked`: the
 * basis the store may link to (same chain); without it the whole input is the record's own.
 */
export interface RecordParts {
  responseJson: string;
  outputJson: string;
  ownInputJson: string;
  basis: HistoryBasis | null;
  /** The ids of the own input items and the output items (the item index). */
  itemIds: string[];
  /** `{"i": own input ids, "o": output ids}` as JSON ("" for an item without one): a page of input_items is found from these. */
  idsJson: string;
}

export function recordParts(record: StoredResponse): RecordParts {
  const basis = linkableBasis(record);
  const own = basis ? record.input.slice(basis.items) : record.input;
  const output = record.response.output;
  // The output keeps its place among the response's keys (an empty array there).
  const responseJson = JSON.stringify({ ...record.response, output: [] });
  const itemIds: string[] = [];
  for (const item of own) if (typeof item.id === "string" && item.id) itemIds.push(item.id);
  for (const item of output as { id?: unknown }[]) if (typeof item.id === "string" && item.id) itemIds.push(item.id);
  const idOf = (i: { id?: unknown }) => (typeof i.id === "string" ? i.id : "");
  const idsJson = JSON.stringify({ i: own.map(idOf), o: (output as { id?: unknown }[]).map(idOf) });
  return { responseJson, outputJson: JSON.stringify(output), ownInputJson: JSON.stringify(own), basis, itemIds, idsJson };
}

/** The record's basis when it can be linked: in the same chain as the record, and no larger than its input. */
function linkableBasis(record: StoredResponse): HistoryBasis | null {
  const basis = record.basis;
  if (!basis || basis.items > record.input.length) return null;
  const of = "response" in basis ? basis.response : basis.conversation;
  return chainTag(of) === chainTag(record.response.id) ? basis : null;
}

/** The same record with every item its own (the fallback when the basis is gone: a legacy or deleted parent). */
export function standalone(record: StoredResponse): StoredResponse {
  const { basis: _basis, ...rest } = record;
  return rest;
}

/** A record back from its parts: the response with its output put back in place, the history then the own input. */
export function joinRecord(
  responseJson: string,
  outputJson: string,
  history: Item[],
  ownInput: Item[],
  meta: { owner: string | null; endpoint?: string | null; basis: HistoryBasis | null },
): StoredResponse {
  const response = JSON.parse(responseJson) as ResponseObject;
  response.output = JSON.parse(outputJson) as ResponseObject["output"];
  const record: StoredResponse = { response, input: history.length === 0 ? ownInput : history.concat(ownInput), owner: meta.owner };
  if (meta.endpoint) record.endpoint = meta.endpoint;
  if (meta.basis) record.basis = meta.basis;
  return record;
}

/** Items from JSON arrays, concatenated in order. */
export function concatItems(chunks: string[]): Item[] {
  const out: Item[] = [];
  for (const chunk of chunks) for (const item of JSON.parse(chunk) as Item[]) out.push(item);
  return out;
}

/** A part of a history that loads apart (a record's own input or output, a conversation's items), with its items' ids. */
export interface Segment {
  ref: string;
  ids: string[];
}

/** An InputIndex over segments, oldest first: `load` asks `loadRefs` for the segments the positions fall in (their JSON arrays), once. */
export function segmentedIndex(owner: string | null, segments: Segment[], loadRefs: (refs: string[]) => Promise<string[]>): InputIndex {
  const ids: string[] = [];
  const where: [number, number][] = [];
  segments.forEach((segment, s) => segment.ids.forEach((id, k) => (ids.push(id), where.push([s, k]))));
  return {
    owner,
    ids,
    async load(at) {
      const wanted = [...new Set(at.map((k) => where[k]![0]))];
      const chunks = wanted.length === 0 ? [] : await loadRefs(wanted.map((s) => segments[s]!.ref));
      const loaded = new Map(wanted.map((s, n) => [s, JSON.parse(chunks[n]!) as Item[]]));
      return at.map((k) => loaded.get(where[k]![0])![where[k]![1]]!);
    },
  };
}

/** An InputIndex over items already at hand (a record stored whole by the previous release). */
export function wholeIndex(owner: string | null, items: Item[]): InputIndex {
  return { owner, ids: items.map((i) => i.id as string | undefined), load: async (at) => at.map((k) => items[k]!) };
}
