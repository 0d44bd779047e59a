import { redisCall, RedisStatus, waitReady, type RedisClient } from "./client.js";
import { storeWrite, throwFailed, type DurableWriter } from "./durable.js";
import { recordJson } from "../record-json.js";
import { chainTag, concatItems, joinRecord, recordParts, segmentedIndex, standalone, wholeIndex, type RecordParts, type Segment } from "../chain.js";
import { heldInput, HistoryCache, type HeldHistory } from "../history-cache.js";
import { chainKeys, DELETE, HISTORY, INPUT_IDS, INPUT_LOAD, ITEMS_OF, SAVE } from "./chain-scripts.js";
import type { Item } from "../../wire/types.js";
import { itemIdsOf } from "../../wire/ids.js";
import { itemOfRecord, type InputIndex, type CachedResponse, type FoundItem, type ResponseCache, type ResponseStore, type SaveIfOpenResult, type StoreStatus, type StoredResponse } from "../types.js";
import { FINISHED_STATUSES, isFinished } from "../../wire/protocol.js";

/** storage.history_cache_bytes by default: a few dozen long sessions' history. */
export const DEFAULT_HISTORY_CACHE_BYTES = 64 * 1024 * 1024;

/**
 * saveIfOpen of a record the previous release stored (a background response it queued), in
 * one step. KEYS: the response key. ARGV: the record's JSON, the TTL in ms, the response id. The stored response's status is read by walking the tokens
 * of the object under "response" (the record's first key, see record-json.ts), strings skipped
 * whole, up to its own top-level "status": a few dozen bytes in however large the record, where
 * decoding it all would hold Redis for milliseconds per megabyte. Another shape is decoded.
 */
const SAVE_IF_OPEN = String.raw`
local FINISHED = { ${[...FINISHED_STATUSES].map((s) => `["${s}"] = true`).join(", ")} }
local function scanStatus(json)
  if string.sub(json, 1, 13) ~= '{"response":{' then return nil end
  local pos, depth = 14, 1
  while true do
    local s = string.find(json, '["{}%[%]]', pos)
    if not s then return nil end
    local c = string.sub(json, s, s)
    if c == '"' then
      local e = s + 1
      while true do
        local q = string.find(json, '["\]', e)
        if not q then return nil end
        if string.sub(json, q, q) == '"' then e = q break end
        e = q + 2
      end
      if depth == 1 and e - s == 7 and string.sub(json, s + 1, e - 1) == 'status' and string.sub(json, e + 1, e + 2) == ':"' then
        return string.sub(json, e + 3, string.find(json, '"', e + 3, true) - 1)
      end
      pos = e + 1
    elseif c == '{' or c == '[' then
      depth = depth + 1
      pos = s + 1
    else
      depth = depth - 1
      if depth == 0 then return nil end
      pos = s + 1
    end
  end
end
local current = redis.call('GET', KEYS[1])
if not current then return 'missing' end
local status = scanStatus(current)
if status == nil then
  local ok, rec = pcall(cjson.decode, current)
  if ok and type(rec) == 'table' and type(rec.response) == 'table' then status = rec.response.status end
end
if FINISHED[status] then return 'finished' end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 'saved'`;

export interface RedisStoreOptions {
  /** Key namespace, e.g. "rr:" -> "rr:chain:{<tag>}". */
  prefix: string;
  ttlMs: number;
  /** How long a call waits for a reconnecting client before StoreUnavailableError (default 500 ms). */
  readyTimeoutMs?: number;
  /** storage.durability: replica - writes run on the writer's connections, each confirmed by a replica. */
  durable?: DurableWriter;
  /** storage.history_cache_bytes: the bytes of recent chains' history this instance holds (../history-cache.ts); 0 holds none. */
  historyCacheBytes?: number;
}

/** A record's links and owner, as the chain's hash keeps them (`X:m`, see chain-scripts.ts). */
interface Meta {
  /** The parent response. */
  p?: string;
  /** The conversation, and the position in its items this record builds on. */
  c?: string;
  a?: number;
  /** How many of the items before `a` are the record's own input (linked there, not copied). */
  n?: number;
  /** Expiry, ms since the epoch. */
  x: number;
  w?: string;
  e?: string;
}

/**
 * Stored responses in Redis, each item stored once: a response keeps its own input and its
 * output in its chain's hash with a link to its parent or conversation (chain-scripts.ts
 * has the layout), and `${prefix}chainitem:${itemId}` names the response that last saved an
 * item (findItem). History at any depth is one script call. Records of the previous release
 * (`${prefix}resp:${id}`, full input; `${prefix}item:${itemId}`) are still read, deleted and
 * finished; new ones never go there, so that release answers 404 for them rather than a
 * history cut short. Unreachable Redis -> StoreUnavailableError within about a second; the
 * client keeps reconnecting in the background. The history of the chains this instance served
 * last is held in memory (../history-cache.ts): the history script then sends only what the
 * instance lacks, checked in the same call.
 */
export class RedisResponseStore implements ResponseStore, StoreStatus {
  private readonly status: RedisStatus;
  private readonly history: HistoryCache | null;

  constructor(
    private readonly client: RedisClient,
    private readonly opts: RedisStoreOptions,
  ) {
    this.status = new RedisStatus(client);
    this.history = (opts.historyCacheBytes ?? DEFAULT_HISTORY_CACHE_BYTES) > 0 ? new HistoryCache(opts.historyCacheBytes ?? DEFAULT_HISTORY_CACHE_BYTES) : null;
  }

  get connected(): boolean {
    return this.status.connected;
  }

  onStatusChange(cb: (connected: boolean) => void): () => void {
    return this.status.onStatusChange(cb);
  }

  /** The chain's keys and the first ARGVs every chain script takes, for the chain of `id`. */
  private chain(id: string, now = Date.now()): { keys: string[]; argv: string[] } {
    const { hash, leaves, conv } = chainKeys(this.opts.prefix, chainTag(id));
    return { keys: [hash, leaves], argv: [conv, String(now)] };
  }

  private legacyKey(id: string): string {
    return `${this.opts.prefix}resp:${id}`;
  }

  private itemKey(itemId: string): string {
    return `${this.opts.prefix}chainitem:${itemId}`;
  }

  private call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    return redisCall(this.client, what, fn, this.opts.readyTimeoutMs);
  }

  /** A write a client depends on: on the durable writer's connections when there is one (confirmed by a replica when `confirm` holds). */
  private write<T>(what: string, key: string, fn: (client: RedisClient) => Promise<T>, confirm?: (result: T) => boolean): Promise<T> {
    return storeWrite(this.client, this.opts.durable, what, key, fn, confirm, this.opts.readyTimeoutMs);
  }

  async save(record: StoredResponse, _responseJson?: string): Promise<void> {
    const result = await this.saveParts(record, "save");
    if (result === "nobasis") await this.saveParts(standalone(record), "save");
  }

  async saveIfOpen(record: StoredResponse): Promise<SaveIfOpenResult> {
    const result = await this.saveParts(record, "open");
    if (result !== "missing") return result as SaveIfOpenResult;
    // A background response queued by the previous release, finished by this one.
    return this.legacySaveIfOpen(record);
  }

  /** One script call writes the record's own parts; then its items are indexed (their keys are in other slots). */
  private async saveParts(record: StoredResponse, mode: "save" | "open"): Promise<string> {
    const id = record.response.id;
    const now = Date.now();
    const parts = recordParts(record);
    const meta: Meta = { x: now + this.opts.ttlMs };
    if (parts.basis && "response" in parts.basis) meta.p = parts.basis.response;
    if (parts.basis && "conversation" in parts.basis) {
      meta.c = parts.basis.conversation;
      meta.a = parts.basis.at;
    }
    if (record.owner !== null) meta.w = record.owner;
    if (record.endpoint) meta.e = record.endpoint;
    const { keys, argv } = this.chain(id, now);
    const convItems = meta.c ? `${argv[0]}${meta.c}:items` : keys[0]!;
    const metaJson = JSON.stringify(meta);
    // Taken before the write: what the chain's held history was when this record was built on it.
    // Only a finished record outside a conversation is held (history-cache.ts).
    const holds = this.history !== null && mode === "save" && isFinished(record.response.status) && !meta.c;
    const held = holds ? this.history!.held(chainTag(id)) : null;
    const args = [...argv, id, String(this.opts.ttlMs), metaJson, record.response.status, parts.responseJson, parts.outputJson, parts.ownInputJson, mode, parts.idsJson, ...conversationInput(record, parts)];
    const result = (await this.write("store.save", keys[0]!, (client) => client.eval(SAVE, 3, keys[0]!, keys[1]!, convItems, ...args) as Promise<string>, (r) => r === "saved")) as string;
    if (result === "saved") {
      if (holds) {
        // Held as copies of what was stored (the caller's objects stay the caller's).
        const added = [...(JSON.parse(parts.ownInputJson) as Item[]), ...(JSON.parse(parts.outputJson) as Item[])];
        // A new chain has no rewrites; a wrong guess (a root written again) only makes the next read whole.
        const link = { id, meta: metaJson, inputs: record.input.length - (parts.basis?.items ?? 0), outputs: record.response.output.length };
        this.history!.hold(chainTag(id), held, meta.p ?? null, added, link, parts.ownInputJson.length + parts.outputJson.length, held?.rewrites ?? "0");
      }
      await this.index(mode === "open" ? itemIdsOf(record.response.output) : parts.itemIds, id);
    }
    return result;
  }

  /** Item id -> the response that saved it, one SET each (each key its own slot on a Cluster). */
  private async index(itemIds: string[], responseId: string): Promise<void> {
    if (itemIds.length === 0) return;
    await this.write("store.index", this.itemKey(itemIds[0]!), (client) => Promise.all(itemIds.map((itemId) => client.set(this.itemKey(itemId), responseId, "PX", this.opts.ttlMs))));
  }

  async get(id: string): Promise<StoredResponse | null> {
    const { keys, argv } = this.chain(id);
    const tag = chainTag(id);
    // What this instance holds of the chain: the script checks it and sends only the rest.
    const held = this.history?.held(tag) ?? null;
    const heldArgs = held ? [held.rewrites, ...held.links.flatMap((l) => [l.id, l.meta])] : [];
    // As buffers: the history's parts are joined into one JSON array and decoded once (a string per part costs more than the parse).
    const found = (await this.call("store.get", () => this.client.callBuffer("EVAL", [HISTORY, 2, ...keys, ...argv, id, ...heldArgs]))) as Buffer[] | null;
    if (found) return this.fromHistory(tag, id, held, found);
    return this.legacyGet(id);
  }

  /** A record from the HISTORY script's answer, its history completed from what is held; a finished one without a conversation's items is held in turn. */
  private fromHistory(tag: string, id: string, held: HeldHistory | null, found: Buffer[]): StoredResponse {
    const [statusBuf, metaBuf, responseJson, outputJson, ownJson, fromBuf, rewrites, ...chunks] = found as [Buffer, Buffer, Buffer, Buffer, Buffer, Buffer, Buffer, ...Buffer[]];
    const metaJson = metaBuf.toString();
    const meta = JSON.parse(metaJson) as Meta;
    const from = fromBuf.toString();
    const basisOf = (items: number) => (meta.p ? { response: meta.p, items } : meta.c ? { conversation: meta.c, at: meta.a ?? 0, items } : null);
    const fromLink = from === "" || from === "\t" ? null : held!.links.find((l) => l.id === from)!;
    if (fromLink && from === id) {
      // The record itself is held: only its response without the output came.
      const { input, output } = heldInput(held!, fromLink);
      const response = JSON.parse(responseJson.toString()) as StoredResponse["response"];
      response.output = output as StoredResponse["response"]["output"];
      const record: StoredResponse = { response, input, owner: meta.w ?? null };
      if (meta.e) record.endpoint = meta.e;
      const basis = basisOf(input.length - fromLink.inputs);
      if (basis) record.basis = basis;
      return record;
    }
    const below = JSON.parse(joinArrays(chunks).toString()) as Item[];
    const history = fromLink ? held!.items.slice(0, fromLink.end).concat(below) : below;
    const ownInput = JSON.parse(ownJson.toString()) as Item[];
    const record = joinRecord(responseJson.toString(), outputJson.toString(), history, ownInput, { owner: meta.w ?? null, endpoint: meta.e, basis: basisOf(history.length) });
    if (this.history && from !== "\t" && !meta.c && isFinished(statusBuf.toString())) {
      const added = fromLink ? [...below, ...record.input.slice(history.length), ...record.response.output] : [...record.input, ...record.response.output];
      const addedBytes = chunks.reduce((n, c) => n + c.length, 0) + ownJson.length + outputJson.length;
      this.history.hold(tag, held, fromLink ? from : null, added, { id, meta: metaJson, inputs: ownInput.length, outputs: record.response.output.length }, addedBytes, rewrites.toString());
    }
    return record;
  }

  async inputIndex(id: string): Promise<InputIndex | null> {
    const { keys, argv } = this.chain(id);
    const found = (await this.call("store.inputIndex", () => this.client.eval(INPUT_IDS, 2, ...keys, ...argv, id))) as string[] | string | null;
    if (found === null || found === "whole") {
      const record = await this.get(id);
      return record ? wholeIndex(record.owner, record.input) : null;
    }
    const [metaJson, ownIds, ...rest] = found as [string, string, ...string[]];
    const parts = (rid: string, json: string): Segment[] => {
      const d = JSON.parse(json) as { i: string[]; o: string[] };
      return [
        { ref: `${rid}\ti`, ids: d.i },
        { ref: `${rid}\to`, ids: d.o },
      ];
    };
    // The script names the parts nearest first; the index wants them oldest first.
    const nearestFirst: Segment[][] = [];
    let k = 0;
    for (; k + 1 < rest.length && rest[k] !== ""; k += 2) nearestFirst.push(parts(rest[k]!, rest[k + 1]!));
    const segments: Segment[] = [];
    if (rest[k] === "") segments.push({ ref: `\t${rest[k + 1]}\t${rest[k + 2]}`, ids: (JSON.parse(rest[k + 3]!) as string[]).filter((i) => i !== "") });
    for (const pair of nearestFirst.reverse()) segments.push(...pair);
    segments.push(parts(id, ownIds)[0]!);
    const owner = (JSON.parse(metaJson) as Meta).w ?? null;
    return segmentedIndex(owner, segments, async (refs) => (await this.call("store.inputItems", () => this.client.eval(INPUT_LOAD, 2, ...keys, ...argv, ...refs))) as string[]);
  }

  async findItem(itemId: string): Promise<FoundItem | null> {
    const responseId = await this.call("store.findItem", () => this.client.get(this.itemKey(itemId)));
    if (responseId !== null) {
      const { keys, argv } = this.chain(responseId);
      const found = (await this.call("store.findItem", () => this.client.eval(ITEMS_OF, 2, ...keys, ...argv, responseId))) as [string, string, string] | null;
      if (!found) return null;
      const item = concatItems([found[2], found[1]]).find((i) => i.id === itemId);
      return item ? { item, owner: (JSON.parse(found[0]) as Meta).w ?? null } : null;
    }
    return this.legacyFindItem(itemId);
  }

  async delete(id: string): Promise<boolean> {
    const { keys, argv } = this.chain(id);
    const n = await this.call("store.delete", () => this.client.eval(DELETE, 2, ...keys, ...argv, id));
    if (n === 1) return true;
    const legacy = await this.call("store.delete", () => this.client.del(this.legacyKey(id)));
    return legacy > 0;
  }

  // ---- records of the previous release (full input under resp:<id>) -----------------

  private async legacyGet(id: string): Promise<StoredResponse | null> {
    const json = await this.call("store.get", () => this.client.get(this.legacyKey(id)));
    return json === null ? null : (JSON.parse(json) as StoredResponse);
  }

  private async legacyFindItem(itemId: string): Promise<FoundItem | null> {
    const responseId = await this.call("store.findItem", () => this.client.get(`${this.opts.prefix}item:${itemId}`));
    const record = responseId === null ? null : await this.legacyGet(responseId);
    return record ? itemOfRecord(record, itemId) : null;
  }

  private legacySaveIfOpen(record: StoredResponse): Promise<SaveIfOpenResult> {
    const id = record.response.id;
    const keys = [this.legacyKey(id)];
    const json = JSON.stringify(standalone(record));
    return this.write(
      "store.save",
      keys[0]!,
      async (client) => (await client.eval(SAVE_IF_OPEN, keys.length, ...keys, json, String(this.opts.ttlMs), id)) as SaveIfOpenResult,
      (result) => result === "saved",
    );
  }

  /** True when Redis answers PING (waits up to timeoutMs for a connection first). */
  async ping(timeoutMs = 1_000): Promise<boolean> {
    try {
      await waitReady(this.client, timeoutMs, "store.ping");
      return (await this.client.ping()) === "PONG";
    } catch {
      return false;
    }
  }

  /** The client is shared and closed by whoever created it (createStores). */
  async close(): Promise<void> {}
}

const COMMA = Buffer.from(",");
const OPEN = Buffer.from("[");
const CLOSE = Buffer.from("]");

/** JSON arrays as one JSON array, without decoding them: each one's brackets dropped, the rest joined by commas. */
function joinArrays(arrays: Buffer[]): Buffer {
  const parts: Buffer[] = [OPEN];
  for (const a of arrays) {
    if (a.length <= 2) continue; // "[]"
    if (parts.length > 1) parts.push(COMMA);
    parts.push(a.subarray(1, a.length - 1));
  }
  parts.push(CLOSE);
  return Buffer.concat(parts);
}

/**
 * For a turn in a conversation, what SAVE needs to link past the turn's input when the
 * conversation holds it: the item ids without the own input, then the own input's ids. None
 * when an own item has no id (it could not be told apart in the conversation).
 */
function conversationInput(record: StoredResponse, parts: RecordParts): string[] {
  if (!parts.basis || !("conversation" in parts.basis)) return [];
  const own = record.input.slice(parts.basis.items);
  const ids = itemIdsOf(own);
  if (ids.length === 0 || ids.length < own.length) return [];
  return [JSON.stringify({ i: [], o: (JSON.parse(parts.idsJson) as { o: string[] }).o }), ...ids];
}

export type CacheErrorHook = (op: "get" | "set", err: unknown) => void;

/**
 * The response cache in Redis under `${prefix}cache:${key}` with a per-entry TTL.
 * A cache must never fail a request: errors become misses / no-ops, reported through onError.
 */
export class RedisResponseCache implements ResponseCache {
  constructor(
    private readonly client: RedisClient,
    private readonly opts: { prefix: string; readyTimeoutMs?: number; onError?: CacheErrorHook },
  ) {}

  private key(key: string): string {
    return `${this.opts.prefix}cache:${key}`;
  }

  async get(key: string): Promise<CachedResponse | null> {
    try {
      const json = await redisCall(this.client, "cache.get", () => this.client.get(this.key(key)), this.opts.readyTimeoutMs ?? 100);
      return json === null ? null : (JSON.parse(json) as CachedResponse);
    } catch (err) {
      this.opts.onError?.("get", err);
      return null;
    }
  }

  async set(key: string, value: CachedResponse, ttlMs: number, responseJson?: string): Promise<void> {
    if (ttlMs <= 0) return;
    try {
      const json = recordJson(value, responseJson);
      await redisCall(this.client, "cache.set", () => this.client.set(this.key(key), json, "PX", Math.ceil(ttlMs)), this.opts.readyTimeoutMs ?? 100);
    } catch (err) {
      this.opts.onError?.("set", err);
    }
  }

  async close(): Promise<void> {}
}
