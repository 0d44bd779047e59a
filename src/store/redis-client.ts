import { Redis, type RedisOptions } from "ioredis";
import { StoreUnavailableError, type StoreStatus } from "./types.js";

export interface RedisClientOptions {
  /** Give up one connection attempt after this long (default 1000 ms). */
  connectTimeoutMs?: number;
  /** Reject a command that got no reply after this long (default 1000 ms; 0 = never, for blocking reads). */
  commandTimeoutMs?: number;
  /** For BullMQ workers and blocking readers: queue commands while reconnecting and retry them
   * forever (BullMQ requires maxRetriesPerRequest: null) instead of failing fast. */
  blocking?: boolean;
  connectionName?: string;
}

/**
 * An ioredis client tuned to fail fast: while Redis is unreachable commands reject at
 * once (no offline queue) and a hung Redis times out, while the client keeps reconnecting
 * in the background (backoff capped at 1 s). Errors are never left unhandled.
 */
export function createRedisClient(url: string, opts: RedisClientOptions = {}): Redis {
  const options: RedisOptions = {
    connectTimeout: opts.connectTimeoutMs ?? 1_000,
    retryStrategy: (times) => Math.min(50 * 2 ** Math.min(times, 5), 1_000),
    connectionName: opts.connectionName,
    ...(opts.blocking
      ? { maxRetriesPerRequest: null, enableOfflineQueue: true }
      : {
          maxRetriesPerRequest: 1,
          enableOfflineQueue: false,
          commandTimeout: opts.commandTimeoutMs === 0 ? undefined : (opts.commandTimeoutMs ?? 1_000),
        }),
  };
  const client = new Redis(url, options);
  // Connection errors surface through the 'ready'/'close' status and rejected commands;
  // without a listener ioredis would print every reconnect failure.
  client.on("error", () => {});
  return client;
}

/** Waits until the client is connected, or rejects with StoreUnavailableError after ms. */
export function waitReady(client: Redis, ms: number, what = "redis"): Promise<void> {
  if (client.status === "ready") return Promise.resolve();
  if (client.status === "end") return Promise.reject(new StoreUnavailableError(`${what}: the Redis client is closed`));
  if (client.status === "wait") client.connect().catch(() => {});
  return new Promise<void>((resolve, reject) => {
    const onReady = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      client.off("ready", onReady);
      reject(new StoreUnavailableError(`${what}: Redis is not reachable (${client.status})`));
    }, ms);
    client.once("ready", onReady);
  });
}

/** Runs one Redis operation, turning "not connected", timeouts and connection errors into StoreUnavailableError. */
export async function redisCall<T>(client: Redis, what: string, fn: () => Promise<T>, readyTimeoutMs = 500): Promise<T> {
  await waitReady(client, readyTimeoutMs, what);
  try {
    return await fn();
  } catch (err) {
    throw toStoreError(what, err);
  }
}

export function toStoreError(what: string, err: unknown): StoreUnavailableError {
  if (err instanceof StoreUnavailableError) return err;
  const detail = err instanceof Error ? err.message : String(err);
  return new StoreUnavailableError(`${what}: ${detail}`);
}

/** Tracks whether a client is connected, for metrics and /readyz. */
export class RedisStatus implements StoreStatus {
  private readonly listeners = new Set<(connected: boolean) => void>();
  private state: boolean;

  constructor(client: Redis) {
    this.state = client.status === "ready";
    client.on("ready", () => this.set(true));
    for (const ev of ["close", "end", "reconnecting"]) client.on(ev, () => this.set(false));
  }

  get connected(): boolean {
    return this.state;
  }

  onStatusChange(cb: (connected: boolean) => void): () => void {
    this.listeners.add(cb);
    return () => this.listeners.delete(cb);
  }

  private set(connected: boolean): void {
    if (connected === this.state) return;
    this.state = connected;
    for (const cb of this.listeners) {
      try {
        cb(connected);
      } catch {
        // A metrics callback must never break the connection handling.
      }
    }
  }
}

/** Disconnects a client, politely if possible, never taking longer than ms. */
export async function closeClient(client: Redis, ms = 500): Promise<void> {
  if (client.status === "end") return;
  if (client.status === "ready") {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([client.quit().catch(() => {}), new Promise((r) => (timer = setTimeout(r, ms)))]);
    clearTimeout(timer);
  }
  client.disconnect();
}
