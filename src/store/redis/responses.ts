import type { Redis } from "ioredis";
import { redisCall, RedisStatus, waitReady } from "./client.js";
import type { CachedResponse, ResponseCache, ResponseStore, StoreStatus, StoredResponse } from "../types.js";
import { recordJson } from "../record-json.js";

export interface RedisStoreOptions {
  /** Key namespace, e.g. "rr:" -> "rr:resp:<id>". */
  prefix: string;
  ttlMs: number;
  /** How long a call waits for a reconnecting client before StoreUnavailableError (default 500 ms). */
  readyTimeoutMs?: number;
  /** storage.durability: replica - waits for a replica after a write (see replicaConfirm). */
  confirm?: (what: string) => Promise<void>;
}

/**
 * Stored responses in Redis: one JSON string per response under `${prefix}resp:${id}`,
 * expiring after ttlMs (SET PX). Unreachable Redis -> StoreUnavailableError within about
 * a second; the client keeps reconnecting in the background.
 */
export class RedisResponseStore implements ResponseStore, StoreStatus {
  private readonly status: RedisStatus;

  constructor(
    private readonly client: Redis,
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
    return `${this.opts.prefix}resp:${id}`;
  }

  async save(record: StoredResponse, responseJson?: string): Promise<void> {
    const json = recordJson(record, responseJson);
    await redisCall(
      this.client,
      "store.save",
      async () => {
        await this.client.set(this.key(record.response.id), json, "PX", this.opts.ttlMs);
        await this.opts.confirm?.("store.save");
      },
      this.opts.readyTimeoutMs,
    );
  }

  async saveIfExists(record: StoredResponse): Promise<boolean> {
    const json = JSON.stringify(record);
    return redisCall(
      this.client,
      "store.save",
      async () => {
        const ok = (await this.client.set(this.key(record.response.id), json, "PX", this.opts.ttlMs, "XX")) === "OK";
        if (ok) await this.opts.confirm?.("store.save");
        return ok;
      },
      this.opts.readyTimeoutMs,
    );
  }

  async get(id: string): Promise<StoredResponse | null> {
    const json = await redisCall(this.client, "store.get", () => this.client.get(this.key(id)), this.opts.readyTimeoutMs);
    return json === null ? null : (JSON.parse(json) as StoredResponse);
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
    private readonly client: Redis,
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
