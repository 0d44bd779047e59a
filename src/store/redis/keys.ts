import { closeClient, createRedisClient, redisCall, type RedisClient } from "./client.js";
import type { RedisTarget } from "./target.js";
import { byCreation, patched, type KeyPolicyPatch, type KeyStore, type StoredKey } from "../keys.js";

/**
 * Made keys shared by every instance. One hash of records (`id -> JSON`), one of names
 * (`name -> id`, which keeps names unique), a version counter, and a channel each change is
 * published on; all under the `{keys}` hash tag, so a Redis Cluster keeps them on one slot and
 * each script below touches them in one step. KEYS: records, names, version; ARGV[last]: channel.
 */
const CREATE = `
if redis.call('HSETNX', KEYS[2], ARGV[2], ARGV[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
redis.call('PUBLISH', ARGV[4], redis.call('INCR', KEYS[3]))
return 1
`;
/** Replaces a record that still exists. ARGV: id, JSON, channel. */
const UPDATE = `
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('PUBLISH', ARGV[3], redis.call('INCR', KEYS[3]))
return 1
`;
/** Removes a record and frees its name. ARGV: id, channel. */
const REVOKE = `
local rec = redis.call('HGET', KEYS[1], ARGV[1])
if not rec then return 0 end
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], cjson.decode(rec).name)
redis.call('PUBLISH', ARGV[2], redis.call('INCR', KEYS[3]))
return 1
`;

type KeysClient = RedisClient & {
  rrKeyCreate(records: string, names: string, version: string, id: string, name: string, json: string, channel: string): Promise<number>;
  rrKeyUpdate(records: string, names: string, version: string, id: string, json: string, channel: string): Promise<number>;
  rrKeyRevoke(records: string, names: string, version: string, id: string, channel: string): Promise<number>;
};

export class RedisKeyStore implements KeyStore {
  private readonly client: KeysClient;
  private readonly records: string;
  private readonly names: string;
  private readonly versionKey: string;
  private readonly channel: string;
  /** The subscriber connection (a subscribed connection can send nothing else), made by the first watch. */
  private subscriber: RedisClient | null = null;
  private readonly listeners = new Set<() => void>();

  constructor(
    client: RedisClient,
    private readonly target: RedisTarget,
    private readonly opts: { prefix: string; readyTimeoutMs?: number },
  ) {
    if (!("rrKeyCreate" in client)) {
      client.defineCommand("rrKeyCreate", { numberOfKeys: 3, lua: CREATE });
      client.defineCommand("rrKeyUpdate", { numberOfKeys: 3, lua: UPDATE });
      client.defineCommand("rrKeyRevoke", { numberOfKeys: 3, lua: REVOKE });
    }
    this.client = client as KeysClient;
    const base = `${opts.prefix}{keys}:`;
    this.records = `${base}records`;
    this.names = `${base}names`;
    this.versionKey = `${base}version`;
    this.channel = `${base}changed`;
  }

  private call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    return redisCall(this.client, `keys.${what}`, fn, this.opts.readyTimeoutMs);
  }

  async create(key: StoredKey): Promise<"created" | "name_taken"> {
    const done = await this.call("create", () => this.client.rrKeyCreate(this.records, this.names, this.versionKey, key.id, key.name, JSON.stringify(key), this.channel));
    return done === 1 ? "created" : "name_taken";
  }

  async get(id: string): Promise<StoredKey | null> {
    const json = await this.call("get", () => this.client.hget(this.records, id));
    return json ? (JSON.parse(json) as StoredKey) : null;
  }

  async list(): Promise<StoredKey[]> {
    const all = await this.call("list", () => this.client.hvals(this.records));
    return all.map((json) => JSON.parse(json) as StoredKey).sort(byCreation);
  }

  async update(id: string, patch: KeyPolicyPatch): Promise<StoredKey | null> {
    const current = await this.get(id);
    if (!current) return null;
    const next = patched(current, patch);
    const done = await this.call("update", () => this.client.rrKeyUpdate(this.records, this.names, this.versionKey, id, JSON.stringify(next), this.channel));
    return done === 1 ? next : null;
  }

  async revoke(id: string): Promise<boolean> {
    return (await this.call("revoke", () => this.client.rrKeyRevoke(this.records, this.names, this.versionKey, id, this.channel))) === 1;
  }

  async version(): Promise<number> {
    return Number((await this.call("version", () => this.client.get(this.versionKey))) ?? 0);
  }

  watch(onChange: () => void): () => void {
    const fn = () => onChange();
    this.listeners.add(fn);
    if (!this.subscriber) {
      // Queues while reconnecting and resubscribes after (ioredis's autoResubscribe); what is
      // published while it is away is caught by the callers' version checks.
      const sub = createRedisClient(this.target, { blocking: true, connectionName: "rr-keys-sub" });
      sub.on("message", () => {
        for (const l of this.listeners) l();
      });
      sub.subscribe(this.channel).catch(() => {});
      this.subscriber = sub;
    }
    return () => void this.listeners.delete(fn);
  }

  async close(): Promise<void> {
    this.listeners.clear();
    if (this.subscriber) await closeClient(this.subscriber);
    this.subscriber = null;
  }
}
