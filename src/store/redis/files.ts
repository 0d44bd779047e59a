import { redisCall, type RedisClient } from "./client.js";
import { storeWrite, throwFailed, type DurableWriter } from "./durable.js";
import type { FileStore, StoreFilePatch, StoredFile, StoredFileBatch, StoredVectorStore, StoredVectorStoreFile } from "../files.js";

/**
 * Changes the given top-level fields of a store file's record while it exists.
 * KEYS: the store's file hash. ARGV: file id, patch JSON.
 */
const UPDATE_STORE_FILE = `
local json = redis.call('HGET', KEYS[1], ARGV[1])
if not json then return false end
local rec = cjson.decode(json)
for k, v in pairs(cjson.decode(ARGV[2])) do rec.file[k] = v end
local out = cjson.encode(rec)
redis.call('HSET', KEYS[1], ARGV[1], out)
return out`;

/** Sets the batch's cancelled flag. KEYS: batch hash. ARGV: batch id. */
const CANCEL_BATCH = `
local json = redis.call('HGET', KEYS[1], ARGV[1])
if not json then return 0 end
local rec = cjson.decode(json)
rec.batch.cancelled = true
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(rec))
return 1`;

/**
 * The Files and Vector Stores records in Redis, shared by every instance. Every key carries
 * the `{files}` hash tag, so the scripts and transactions that touch several of them stay on one
 * slot. Hashes hold the records as JSON (`file`, `vs`, `batch`, and `vsf:<store>` for a store's
 * files); sets index them by owner, the stores holding a file and a store's batches. No TTL:
 * the records are the user's data and live until deleted (or expired by `expires_after`:
 * sorted sets `exp-file` and `exp-vs` score the expiring ones by `expires_at`, for the expiry
 * sweep to find them in O(log n) whoever owns them).
 */
export class RedisFileStore implements FileStore {
  private readonly base: string;

  constructor(
    private readonly client: RedisClient,
    private readonly opts: { prefix: string; readyTimeoutMs?: number; durable?: DurableWriter },
  ) {
    this.base = `${opts.prefix}{files}:`;
  }

  private key(...parts: string[]): string {
    return this.base + parts.join(":");
  }

  private call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    return redisCall(this.client, `files.${what}`, fn, this.opts.readyTimeoutMs);
  }

  /** Every key is under the `{files}` tag: the replica WAIT runs on the shard that serves it. */
  private write<T>(what: string, fn: (client: RedisClient) => Promise<T>): Promise<T> {
    return storeWrite(this.client, this.opts.durable, `files.${what}`, this.base, fn, undefined, this.opts.readyTimeoutMs);
  }

  async putFile(rec: StoredFile): Promise<void> {
    await this.write("putFile", async (c) => {
      const tx = c.multi().hset(this.key("file"), rec.file.id, JSON.stringify(rec)).sadd(this.key("file-owner", rec.owner), rec.file.id);
      throwFailed(await this.indexExpiry(tx, "exp-file", rec.file.id, rec.file.expires_at).exec());
    });
  }

  async getFile(id: string): Promise<StoredFile | null> {
    return parse(await this.call("getFile", () => this.client.hget(this.key("file"), id)));
  }

  async listFiles(owner: string): Promise<StoredFile[]> {
    return this.listOwned("listFiles", this.key("file"), this.key("file-owner", owner));
  }

  async deleteFile(id: string): Promise<boolean> {
    const rec = await this.getFile(id);
    if (!rec) return false;
    const results = await this.write("deleteFile", (c) => c.multi().hdel(this.key("file"), id).srem(this.key("file-owner", rec.owner), id).zrem(this.key("exp-file"), id).exec());
    throwFailed(results);
    return results?.[0]?.[1] === 1;
  }

  async putVectorStore(rec: StoredVectorStore): Promise<void> {
    await this.write("putVectorStore", async (c) => {
      const tx = c.multi().hset(this.key("vs"), rec.store.id, JSON.stringify(rec)).sadd(this.key("vs-owner", rec.owner), rec.store.id);
      throwFailed(await this.indexExpiry(tx, "exp-vs", rec.store.id, rec.store.expires_at).exec());
    });
  }

  async getVectorStore(id: string): Promise<StoredVectorStore | null> {
    return parse(await this.call("getVectorStore", () => this.client.hget(this.key("vs"), id)));
  }

  async listVectorStores(owner: string): Promise<StoredVectorStore[]> {
    return this.listOwned("listVectorStores", this.key("vs"), this.key("vs-owner", owner));
  }

  async deleteVectorStore(id: string): Promise<boolean> {
    const rec = await this.getVectorStore(id);
    if (!rec) return false;
    const [fileIds, batchIds] = await this.call("deleteVectorStore", () => Promise.all([this.client.hkeys(this.key("vsf", id)), this.client.smembers(this.key("vs-batches", id))]));
    const results = await this.write("deleteVectorStore", (c) => {
      const tx = c.multi().hdel(this.key("vs"), id).srem(this.key("vs-owner", rec.owner), id).zrem(this.key("exp-vs"), id).del(this.key("vsf", id), this.key("vs-batches", id));
      for (const f of fileIds) tx.srem(this.key("held", f), id);
      if (batchIds.length > 0) tx.hdel(this.key("batch"), ...batchIds);
      return tx.exec();
    });
    throwFailed(results);
    return results?.[0]?.[1] === 1;
  }

  async putStoreFile(rec: StoredVectorStoreFile): Promise<void> {
    const vs = rec.file.vector_store_id;
    await this.write("putStoreFile", async (c) => throwFailed(await c.multi().hset(this.key("vsf", vs), rec.file.id, JSON.stringify(rec)).sadd(this.key("held", rec.file.id), vs).exec()));
  }

  async updateStoreFile(vectorStoreId: string, fileId: string, patch: StoreFilePatch): Promise<StoredVectorStoreFile | null> {
    const out = (await this.write("updateStoreFile", (c) => c.eval(UPDATE_STORE_FILE, 1, this.key("vsf", vectorStoreId), fileId, JSON.stringify(patch)))) as string | null;
    return fixEmpty(parse(out));
  }

  async getStoreFile(vectorStoreId: string, fileId: string): Promise<StoredVectorStoreFile | null> {
    return fixEmpty(parse(await this.call("getStoreFile", () => this.client.hget(this.key("vsf", vectorStoreId), fileId))));
  }

  async listStoreFiles(vectorStoreId: string): Promise<StoredVectorStoreFile[]> {
    const all = await this.call("listStoreFiles", () => this.client.hvals(this.key("vsf", vectorStoreId)));
    return all.map((j) => fixEmpty(JSON.parse(j) as StoredVectorStoreFile)!);
  }

  async deleteStoreFile(vectorStoreId: string, fileId: string): Promise<boolean> {
    const results = await this.write("deleteStoreFile", (c) => c.multi().hdel(this.key("vsf", vectorStoreId), fileId).srem(this.key("held", fileId), vectorStoreId).exec());
    throwFailed(results);
    return results?.[0]?.[1] === 1;
  }

  async storesHolding(fileId: string): Promise<string[]> {
    return this.call("storesHolding", () => this.client.smembers(this.key("held", fileId)));
  }

  async expiredFiles(now: number, limit: number): Promise<string[]> {
    return this.call("expiredFiles", () => this.client.zrangebyscore(this.key("exp-file"), "-inf", now, "LIMIT", 0, limit));
  }

  async expiredVectorStores(now: number, limit: number): Promise<string[]> {
    return this.call("expiredVectorStores", () => this.client.zrangebyscore(this.key("exp-vs"), "-inf", now, "LIMIT", 0, limit));
  }

  async sweptVectorStore(id: string): Promise<void> {
    await this.write("sweptVectorStore", (c) => c.zrem(this.key("exp-vs"), id));
  }

  /** Adds the expiry's score to a transaction (or takes the id out when it has none). */
  private indexExpiry<T extends { zadd(key: string, score: number, member: string): T; zrem(key: string, member: string): T }>(tx: T, set: "exp-file" | "exp-vs", id: string, expiresAt: number | null | undefined): T {
    return typeof expiresAt === "number" ? tx.zadd(this.key(set), expiresAt, id) : tx.zrem(this.key(set), id);
  }

  async putBatch(rec: StoredFileBatch): Promise<void> {
    await this.write("putBatch", async (c) => throwFailed(await c.multi().hset(this.key("batch"), rec.batch.id, JSON.stringify(rec)).sadd(this.key("vs-batches", rec.batch.vector_store_id), rec.batch.id).exec()));
  }

  async getBatch(id: string): Promise<StoredFileBatch | null> {
    const rec = parse<StoredFileBatch>(await this.call("getBatch", () => this.client.hget(this.key("batch"), id)));
    // cjson writes an empty array as an object.
    if (rec && !Array.isArray(rec.file_ids)) rec.file_ids = [];
    return rec;
  }

  async cancelBatch(id: string): Promise<boolean> {
    return (await this.write("cancelBatch", (c) => c.eval(CANCEL_BATCH, 1, this.key("batch"), id))) === 1;
  }

  private async listOwned<T>(what: string, hash: string, set: string): Promise<T[]> {
    const values: Array<string | null> = await this.call(what, async () => {
      const ids = await this.client.smembers(set);
      return ids.length === 0 ? [] : this.client.hmget(hash, ...ids);
    });
    return values.filter((v): v is string => v !== null).map((j) => JSON.parse(j) as T);
  }
}

function parse<T>(json: string | null | undefined): T | null {
  return json ? (JSON.parse(json) as T) : null;
}

/** A record rewritten by a script: cjson turned an empty `attributes` object into `[]`. */
function fixEmpty(rec: StoredVectorStoreFile | null): StoredVectorStoreFile | null {
  if (rec && Array.isArray(rec.file.attributes)) rec.file.attributes = {};
  return rec;
}
