import type { ChainableCommander } from "ioredis";
import { hashTag, redisCall, RedisStatus, setApart, waitReady, type RedisClient } from "./client.js";
import { storeWrite, throwFailed, type DurableWriter } from "./durable.js";
import { recordJson } from "../record-json.js";
import { itemOfRecord, recordItemIds, type CachedResponse, type FoundItem, type ResponseCache, type ResponseStore, type SaveIfOpenResult, type StoreStatus, type StoredResponse } from "../types.js";
import { FINISHED_STATUSES } from "../../wire/protocol.js";

/** The response an item id points to, in one round trip. KEYS: item key. ARGV: the response key prefix. */
const FIND_ITEM = `
local id = redis.call('GET', KEYS[1])
if not id then return false end
return redis.call('GET', ARGV[1] .. id)`;

/**
 * saveIfOpen in one step. KEYS: the response key, then its item keys. ARGV: the record's JSON,
 * the TTL in ms, the response id. The stored response's status is read by walking the tokens
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
for i = 2, #KEYS do redis.call('SET', KEYS[i], ARGV[3], 'PX', ARGV[2]) end
return 'saved'`;

export interface RedisStoreOptions {
  /** Key namespace, e.g. "rr:" -> "rr:resp:<id>". */
  prefix: string;
  ttlMs: number;
  /** How long a call waits for a reconnecting client before StoreUnavailableError (default 500 ms). */
  readyTimeoutMs?: number;
  /** storage.durability: replica - writes run on the writer's connections, each confirmed by a replica. */
  durable?: DurableWriter;
}

/**
 * Stored responses in Redis: one JSON string per response under `${prefix}resp:${id}`,
 * expiring after ttlMs (SET PX), and per item id `${prefix}item:${itemId}` naming the
 * response that last saved it (same TTL, written in the same transaction; findItem). On a
 * cluster the record is `${prefix}resp:{${id}}` (the tag its event log shares) and the item
 * index keys, on slots of their own, are written right after it, and read in two steps. Unreachable Redis -> StoreUnavailableError within about
 * a second; the client keeps reconnecting in the background.
 */
export class RedisResponseStore implements ResponseStore, StoreStatus {
  private readonly status: RedisStatus;

  constructor(
    private readonly client: RedisClient,
    private readonly opts: RedisStoreOptions,
  ) {
    this.status = new RedisStatus(client);
  }

  get connected(): boolean {
    return this.status.connected;
  }

  onStatusChange(cb: (connected: boolean) => void): () => void {
    return this.status.onStatusChange(cb);
  }

  private key(id: string): string {
    return `${this.opts.prefix}resp:${hashTag(this.client, id)}`;
  }

  private itemKey(itemId: string): string {
    return `${this.opts.prefix}item:${itemId}`;
  }

  /** A write a client depends on: on the durable writer's connections when there is one (confirmed by a replica when `confirm` holds). */
  private write<T>(what: string, id: string, fn: (client: RedisClient) => Promise<T>, confirm?: (result: T) => boolean): Promise<T> {
    return storeWrite(this.client, this.opts.durable, what, this.key(id), fn, confirm, this.opts.readyTimeoutMs);
  }

  async save(record: StoredResponse, responseJson?: string): Promise<void> {
    const json = recordJson(record, responseJson);
    await this.write("store.save", record.response.id, async (client) => {
      const tx = client.multi().set(this.key(record.response.id), json, "PX", this.opts.ttlMs);
      if (!this.client.isCluster) this.indexItems(tx, record);
      throwFailed(await tx.exec());
    });
    await this.indexApart(record);
  }

  private indexItems(tx: ChainableCommander, record: StoredResponse): void {
    for (const id of recordItemIds(record)) tx.set(this.itemKey(id), record.response.id, "PX", this.opts.ttlMs);
  }

  /** On a cluster the item index keys live on slots of their own: written once the record is. */
  private indexApart(record: StoredResponse): Promise<void> {
    if (!this.client.isCluster) return Promise.resolve();
    const keys = recordItemIds(record).map((itemId) => this.itemKey(itemId));
    return setApart(this.client, "store.save", keys, record.response.id, this.opts.ttlMs, this.opts.readyTimeoutMs);
  }

  async saveIfOpen(record: StoredResponse): Promise<SaveIfOpenResult> {
    const id = record.response.id;
    // On a cluster the script is given the record's key alone (indexApart follows).
    const keys = [this.key(id), ...(this.client.isCluster ? [] : recordItemIds(record).map((itemId) => this.itemKey(itemId)))];
    const json = JSON.stringify(record);
    const result = await this.write(
      "store.save",
      id,
      async (client) => (await client.eval(SAVE_IF_OPEN, keys.length, ...keys, json, String(this.opts.ttlMs), id)) as SaveIfOpenResult,
      (result) => result === "saved",
    );
    if (result === "saved") await this.indexApart(record);
    return result;
  }

  async get(id: string): Promise<StoredResponse | null> {
    const json = await redisCall(this.client, "store.get", () => this.client.get(this.key(id)), this.opts.readyTimeoutMs);
    return json === null ? null : (JSON.parse(json) as StoredResponse);
  }

  async findItem(itemId: string): Promise<FoundItem | null> {
    const json = (await redisCall(
      this.client,
      "store.findItem",
      async () => {
        if (!this.client.isCluster) return this.client.eval(FIND_ITEM, 1, this.itemKey(itemId), this.key(""));
        const id = await this.client.get(this.itemKey(itemId));
        return id === null ? null : this.client.get(this.key(id));
      },
      this.opts.readyTimeoutMs,
    )) as string | null;
    return json ? itemOfRecord(JSON.parse(json) as StoredResponse, itemId) : null;
  }

  async delete(id: string): Promise<boolean> {
    const n = await redisCall(this.client, "store.delete", () => this.client.del(this.key(id)), this.opts.readyTimeoutMs);
    return n > 0;
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
