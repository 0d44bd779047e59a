import type { Item } from "../../wire/types.js";
import { itemIdsOf } from "../../wire/ids.js";
import { redisCall, type RedisClient } from "./client.js";
import { storeWrite, throwFailed, type DurableWriter } from "./durable.js";
import { chainTag } from "../chain.js";
import { chainKeys, DELETE_CONVERSATION } from "./chain-scripts.js";
import type { ConversationHistory, ConversationRecord, ConversationStore, FoundItem, StoredConversation } from "../types.js";

/**
 * Only if the conversation still exists: push the items onto its list, record the endpoint
 * and refresh both TTLs. One script, so turns appended by several instances never
 * interleave and a turn never resurrects a deleted conversation.
 * KEYS: record hash, items list, their ids list. ARGV: ttl ms, endpoint ('' keeps it), n, then
 * the n items as JSON, then their n ids. Returns the list's length before the items (their
 * position), or -1.
 */
const APPEND = `
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
if ARGV[2] ~= '' then redis.call('HSET', KEYS[1], 'endpoint', ARGV[2]) end
local at = redis.call('LLEN', KEYS[2])
local n = tonumber(ARGV[3])
if n > 0 then
  redis.call('RPUSH', KEYS[2], unpack(ARGV, 4, 3 + n))
  redis.call('RPUSH', KEYS[3], unpack(ARGV, 4 + n, 3 + 2 * n))
end
for i = 1, 3 do redis.call('PEXPIRE', KEYS[i], ARGV[1]) end
return at`;

/** The record and the item with that id, in one call. KEYS: record hash, items list. ARGV: the item id. */
const FIND_ITEM = `
local rec = redis.call('HGET', KEYS[1], 'record')
if not rec then return false end
for _, json in ipairs(redis.call('LRANGE', KEYS[2], 0, -1)) do
  if json ~= '' then
    local ok, item = pcall(cjson.decode, json)
    if ok and item.id == ARGV[1] then return {rec, json} end
  end
end
return false`;

/** Replaces the record field only while the hash exists. KEYS: record hash. ARGV: record JSON. */
const UPDATE = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'record', ARGV[1])
return 1`;

/**
 * Empties the place of the first item whose id matches: positions never move, so a response
 * built on the first N items (HistoryBasis) still names the same ones. KEYS: items list, ids list. ARGV: item id.
 */
const DELETE_ITEM = `
for i, json in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do
  if json ~= '' then
    local ok, item = pcall(cjson.decode, json)
    if ok and item.id == ARGV[1] then
      redis.call('LSET', KEYS[1], i - 1, '')
      if redis.call('LLEN', KEYS[2]) > i - 1 then redis.call('LSET', KEYS[2], i - 1, '') end
      return 1
    end
  end
end
return 0`;

/**
 * Conversations in Redis: a hash `${prefix}conv2:{T}:${id}` (fields `record`: the
 * conversation and its owner as JSON, `endpoint`) and a list `...:items` of item JSON, oldest
 * first, a deleted item's place left empty. `{T}` is the chain tag of the id (../chain.ts):
 * the responses made in the conversation share it, so a response's history walk reads the
 * conversation's items in the same script. Both keys expire ttlMs after the last write; the
 * items stay while a stored response still builds on them. `${prefix}conv2item:${itemId}`
 * names the conversation that took an item (findItem). Conversations of the previous release
 * (`${prefix}conv:{id}`) are read as they are and moved to this layout on their first write.
 */
export class RedisConversationStore implements ConversationStore {
  constructor(
    private readonly client: RedisClient,
    /** `durable`: storage.durability: replica - writes run on its connections, each confirmed by a replica. */
    private readonly opts: { prefix: string; ttlMs: number; readyTimeoutMs?: number; durable?: DurableWriter },
  ) {}

  /** The record hash, the items list, and the list of their ids (a page of a response's input_items reads those, not the items). */
  private keys(id: string): [string, string, string] {
    const base = `${chainKeys(this.opts.prefix, chainTag(id)).conv}${id}`;
    return [base, `${base}:items`, `${base}:items:ids`];
  }

  private legacyKeys(id: string): [string, string] {
    const base = `${this.opts.prefix}conv:{${id}}`;
    return [base, `${base}:items`];
  }

  /** Item id -> the conversation that last took it (findItem). */
  private get itemPrefix(): string {
    return `${this.opts.prefix}conv2item:`;
  }

  private call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    return redisCall(this.client, `conversations.${what}`, fn, this.opts.readyTimeoutMs);
  }

  /** A write a client depends on: on the durable writer's connections when there is one (confirmed by a replica when `confirm` holds). */
  private write<T>(what: string, key: string, fn: (client: RedisClient) => Promise<T>, confirm?: (result: T) => boolean): Promise<T> {
    return storeWrite(this.client, this.opts.durable, `conversations.${what}`, key, fn, confirm, this.opts.readyTimeoutMs);
  }

  /** One SET per item id (each key its own slot on a Cluster). */
  private async index(id: string, items: Item[]): Promise<void> {
    const ids = itemIdsOf(items);
    if (ids.length === 0) return;
    await this.write("index", this.itemPrefix + ids[0]!, (client) => Promise.all(ids.map((itemId) => client.set(this.itemPrefix + itemId, id, "PX", this.opts.ttlMs))));
  }

  async create(record: StoredConversation, items: Item[]): Promise<void> {
    await this.put(record, items);
    await this.index(record.conversation.id, items);
  }

  private async put(record: StoredConversation, items: Item[]): Promise<void> {
    const [hash, list, ids] = this.keys(record.conversation.id);
    const ttl = this.opts.ttlMs;
    await this.write("create", hash, async (client) => {
      const tx = client.multi().del(hash, list, ids).hset(hash, "record", JSON.stringify({ conversation: record.conversation, owner: record.owner }), "endpoint", record.endpoint ?? "");
      if (items.length > 0) tx.rpush(list, ...items.map((i) => JSON.stringify(i))).pexpire(list, ttl).rpush(ids, ...itemIds(items)).pexpire(ids, ttl);
      throwFailed(await tx.pexpire(hash, ttl).exec());
    });
  }

  async get(id: string): Promise<StoredConversation | null> {
    const fields = await this.call("get", () => this.client.hmget(this.keys(id)[0], "record", "endpoint"));
    if (fields[0]) return toStored(fields[0], fields[1]);
    const legacy = await this.call("get", () => this.client.hmget(this.legacyKeys(id)[0], "record", "endpoint"));
    return legacy[0] ? toStored(legacy[0], legacy[1]) : null;
  }

  /**
   * A conversation the previous release stored, moved to this layout (once, before a write):
   * its items keep their order and so their positions. False when there is none.
   */
  private async migrate(id: string): Promise<boolean> {
    const [hash, list] = this.legacyKeys(id);
    const [fields, raw] = await this.call("migrate", async () => {
      const results = await this.client.multi().hmget(hash, "record", "endpoint").lrange(list, 0, -1).exec();
      return [(results?.[0]?.[1] ?? []) as (string | null)[], (results?.[1]?.[1] ?? []) as string[]] as const;
    });
    if (!fields[0]) return false;
    await this.put(toStored(fields[0], fields[1] ?? null), raw.map((json) => JSON.parse(json) as Item));
    await this.write("migrate", hash, (client) => client.del(hash, list));
    return true;
  }

  /** Runs a write on the conversation; when it finds none, moves one of the previous release over and tries once more. */
  private async onCurrent<T>(id: string, run: () => Promise<T>, missed: (result: T) => boolean): Promise<T> {
    const result = await run();
    if (!missed(result) || !(await this.migrate(id))) return result;
    return run();
  }

  async update(id: string, metadata: Record<string, string>): Promise<StoredConversation | null> {
    const current = await this.get(id);
    if (!current) return null;
    const next: StoredConversation = { ...current, conversation: { ...current.conversation, metadata } };
    const [hash] = this.keys(id);
    const json = JSON.stringify({ conversation: next.conversation, owner: next.owner });
    const done = await this.onCurrent(id, () => this.write("update", hash, (client) => client.eval(UPDATE, 1, hash, json), (n) => n === 1), (n) => n !== 1);
    return done === 1 ? next : null;
  }

  async delete(id: string): Promise<boolean> {
    const [hash, list] = this.keys(id);
    const { hash: chain } = chainKeys(this.opts.prefix, chainTag(id));
    const n = (await this.call("delete", () => this.client.eval(DELETE_CONVERSATION, 3, hash, list, chain, id))) as number;
    const legacy = await this.call("delete", () => this.client.del(...this.legacyKeys(id)));
    return n + legacy > 0;
  }

  async append(id: string, items: Item[], endpoint?: string): Promise<boolean> {
    const [hash, list, ids] = this.keys(id);
    const args = [String(this.opts.ttlMs), endpoint ?? "", String(items.length), ...items.map((i) => JSON.stringify(i)), ...itemIds(items)];
    const at = await this.onCurrent(id, () => this.write("append", hash, (client) => client.eval(APPEND, 3, hash, list, ids, ...args) as Promise<number>, (n) => n >= 0), (n) => n < 0);
    if (at < 0) return false;
    await this.index(id, items);
    return true;
  }

  async items(id: string): Promise<Item[] | null> {
    return (await this.history(id))?.items ?? null;
  }

  async history(id: string): Promise<ConversationHistory | null> {
    const read = async ([hash, list]: [string, string, ...string[]]) => {
      const results = await this.call("items", () => this.client.multi().exists(hash).lrange(list, 0, -1).exec());
      return results?.[0]?.[1] ? ((results[1]?.[1] ?? []) as string[]) : null;
    };
    const raw = (await read(this.keys(id))) ?? (await read(this.legacyKeys(id)));
    if (!raw) return null;
    return { items: raw.flatMap((json) => (json === "" ? [] : [JSON.parse(json) as Item])), at: raw.length };
  }

  async findItem(itemId: string): Promise<FoundItem | null> {
    const id = (await this.call("findItem", () => this.client.get(this.itemPrefix + itemId))) ?? (await this.call("findItem", () => this.client.get(`${this.opts.prefix}convitem:${itemId}`)));
    if (id === null) return null;
    const find = ([hash, list]: [string, string, ...string[]]) => this.call("findItem", () => this.client.eval(FIND_ITEM, 2, hash, list, itemId)) as Promise<[string, string] | null>;
    const found = (await find(this.keys(id))) ?? (await find(this.legacyKeys(id)));
    if (!found) return null;
    return { item: JSON.parse(found[1]) as Item, owner: toStored(found[0], null).owner };
  }

  async deleteItem(id: string, itemId: string): Promise<boolean> {
    const [hash, list, ids] = this.keys(id);
    const exists = () => this.call("deleteItem", () => this.client.exists(hash));
    if ((await exists()) === 0 && !(await this.migrate(id))) return false;
    const n = await this.call("deleteItem", () => this.client.eval(DELETE_ITEM, 2, list, ids, itemId));
    return n === 1;
  }
}

function toStored(recordJson: string, endpoint: string | null): StoredConversation {
  const { conversation, owner } = JSON.parse(recordJson) as { conversation: ConversationRecord; owner: string | null };
  return { conversation, owner, endpoint: endpoint || null };
}

/** The items' ids, '' where an item has none. */
function itemIds(items: Item[]): string[] {
  return items.map((i) => (typeof i.id === "string" ? i.id : ""));
}
