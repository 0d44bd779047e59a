import type { Item } from "../../wire/types.js";
import { redisCall, setApart, type RedisClient } from "./client.js";
import { storeWrite, throwFailed, type DurableWriter } from "./durable.js";
import type { ConversationRecord, ConversationStore, FoundItem, StoredConversation } from "../types.js";

/**
 * Only if the conversation still exists: push the items onto its list, record the endpoint
 * and refresh both TTLs. One script, so turns appended by several instances never
 * interleave and a turn never resurrects a deleted conversation.
 * Each item's id gets an index key naming the conversation (findItem).
 * KEYS: record hash, items list. ARGV: ttl ms, endpoint ('' keeps it), index key prefix,
 * conversation id, n, then n items as JSON, then their n ids ('' for none).
 */
const APPEND = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if ARGV[2] ~= '' then redis.call('HSET', KEYS[1], 'endpoint', ARGV[2]) end
local n = tonumber(ARGV[5])
if n > 0 then redis.call('RPUSH', KEYS[2], unpack(ARGV, 6, 5 + n)) end
for i = 6 + n, 5 + 2 * n do
  if ARGV[i] ~= '' then redis.call('SET', ARGV[3] .. ARGV[i], ARGV[4], 'PX', ARGV[1]) end
end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
redis.call('PEXPIRE', KEYS[2], ARGV[1])
return 1`;

/** A conversation's record and the item with an id, given its hash, its items list and the id (Lua expressions). */
const findIn = (hash: string, list: string, itemId: string) => `
local rec = redis.call('HGET', ${hash}, 'record')
if not rec then return false end
for _, json in ipairs(redis.call('LRANGE', ${list}, 0, -1)) do
  local ok, item = pcall(cjson.decode, json)
  if ok and item.id == ${itemId} then return {rec, json} end
end
return false`;

/**
 * The conversation an item id points to, its record and the item, in one round trip.
 * KEYS: item key. ARGV: the conversation key prefix ("<prefix>conv:"), the item id.
 */
const FIND_ITEM = `
local id = redis.call('GET', KEYS[1])
if not id then return false end
local base = ARGV[1] .. '{' .. id .. '}'
${findIn("base", "base .. ':items'", "ARGV[2]")}`;

/** On a cluster, once the index key named the conversation. KEYS: record hash, items list. ARGV: the item id. */
const FIND_IN_CONVERSATION = findIn("KEYS[1]", "KEYS[2]", "ARGV[1]");

/** Replaces the record field only while the hash exists. KEYS: record hash. ARGV: record JSON. */
const UPDATE = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'record', ARGV[1])
return 1`;

/** Removes the first item whose id matches. KEYS: items list. ARGV: item id. */
const DELETE_ITEM = `
local items = redis.call('LRANGE', KEYS[1], 0, -1)
for _, json in ipairs(items) do
  local ok, item = pcall(cjson.decode, json)
  if ok and item.id == ARGV[1] then
    redis.call('LREM', KEYS[1], 1, json)
    return 1
  end
end
return 0`;

/**
 * Conversations in Redis: a hash `${prefix}conv:{id}` (fields `record`: the conversation
 * and its owner as JSON, `endpoint`) and a list `${prefix}conv:{id}:items` of item JSON,
 * oldest first. Both keys share a hash tag and expire ttlMs after the last write.
 */
export class RedisConversationStore implements ConversationStore {
  constructor(
    private readonly client: RedisClient,
    /** `durable`: storage.durability: replica - writes run on its connections, each confirmed by a replica. */
    private readonly opts: { prefix: string; ttlMs: number; readyTimeoutMs?: number; durable?: DurableWriter },
  ) {}

  private keys(id: string): [string, string] {
    const base = `${this.opts.prefix}conv:{${id}}`;
    return [base, `${base}:items`];
  }

  /** Item id -> the conversation that last took it (findItem). */
  private get itemPrefix(): string {
    return `${this.opts.prefix}convitem:`;
  }

  private call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    return redisCall(this.client, `conversations.${what}`, fn, this.opts.readyTimeoutMs);
  }

  /** A write a client depends on: on the durable writer's connections when there is one (confirmed by a replica when `confirm` holds). */
  private write<T>(what: string, id: string, fn: (client: RedisClient) => Promise<T>, confirm?: (result: T) => boolean): Promise<T> {
    return storeWrite(this.client, this.opts.durable, `conversations.${what}`, this.keys(id)[0], fn, confirm, this.opts.readyTimeoutMs);
  }

  /**
   * On a cluster the item index keys (by item id alone) live on slots of their own: written
   * after the conversation's own keys, not in their transaction or script.
   */
  private indexApart(id: string, items: Item[]): Promise<void> {
    if (!this.client.isCluster) return Promise.resolve();
    const keys = itemIds(items).filter((i) => i !== "").map((i) => this.itemPrefix + i);
    return setApart(this.client, "conversations.index", keys, id, this.opts.ttlMs, this.opts.readyTimeoutMs);
  }

  async create(record: StoredConversation, items: Item[]): Promise<void> {
    const [hash, list] = this.keys(record.conversation.id);
    const ttl = this.opts.ttlMs;
    await this.write("create", record.conversation.id, async (client) => {
      const tx = client.multi().del(hash, list).hset(hash, "record", JSON.stringify({ conversation: record.conversation, owner: record.owner }), "endpoint", record.endpoint ?? "");
      if (items.length > 0) tx.rpush(list, ...items.map((i) => JSON.stringify(i))).pexpire(list, ttl);
      if (!this.client.isCluster) for (const id of itemIds(items)) if (id) tx.set(this.itemPrefix + id, record.conversation.id, "PX", ttl);
      throwFailed(await tx.pexpire(hash, ttl).exec());
    });
    await this.indexApart(record.conversation.id, items);
  }

  async get(id: string): Promise<StoredConversation | null> {
    const [hash] = this.keys(id);
    const fields = await this.call("get", () => this.client.hmget(hash, "record", "endpoint"));
    return fields[0] ? toStored(fields[0], fields[1]) : null;
  }

  async update(id: string, metadata: Record<string, string>): Promise<StoredConversation | null> {
    const current = await this.get(id);
    if (!current) return null;
    const next: StoredConversation = { ...current, conversation: { ...current.conversation, metadata } };
    const [hash] = this.keys(id);
    const json = JSON.stringify({ conversation: next.conversation, owner: next.owner });
    const done = await this.write("update", id, (client) => client.eval(UPDATE, 1, hash, json), (n) => n === 1);
    return done === 1 ? next : null;
  }

  async delete(id: string): Promise<boolean> {
    const [hash, list] = this.keys(id);
    const n = await this.call("delete", () => this.client.del(hash, list));
    return n > 0;
  }

  async append(id: string, items: Item[], endpoint?: string): Promise<boolean> {
    const [hash, list] = this.keys(id);
    // On a cluster the script indexes no item ('' ids): indexApart does, once the items are in.
    const ids = this.client.isCluster ? items.map(() => "") : itemIds(items);
    const args = [String(this.opts.ttlMs), endpoint ?? "", this.itemPrefix, id, String(items.length), ...items.map((i) => JSON.stringify(i)), ...ids];
    const done = await this.write("append", id, (client) => client.eval(APPEND, 2, hash, list, ...args), (n) => n === 1);
    if (done === 1) await this.indexApart(id, items);
    return done === 1;
  }

  async items(id: string): Promise<Item[] | null> {
    const [hash, list] = this.keys(id);
    const [exists, raw] = await this.call("items", async () => {
      const results = await this.client.multi().exists(hash).lrange(list, 0, -1).exec();
      return [results?.[0]?.[1] as number, (results?.[1]?.[1] ?? []) as string[]] as const;
    });
    return exists ? raw.map((json) => JSON.parse(json) as Item) : null;
  }

  async findItem(itemId: string): Promise<FoundItem | null> {
    const found = (await this.call("findItem", async () => {
      if (!this.client.isCluster) return this.client.eval(FIND_ITEM, 1, this.itemPrefix + itemId, `${this.opts.prefix}conv:`, itemId);
      const id = await this.client.get(this.itemPrefix + itemId);
      return id === null ? null : this.client.eval(FIND_IN_CONVERSATION, 2, ...this.keys(id), itemId);
    })) as [string, string] | null;
    if (!found) return null;
    return { item: JSON.parse(found[1]) as Item, owner: toStored(found[0], null).owner };
  }

  async deleteItem(id: string, itemId: string): Promise<boolean> {
    const [, list] = this.keys(id);
    const n = await this.call("deleteItem", () => this.client.eval(DELETE_ITEM, 1, list, itemId));
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
