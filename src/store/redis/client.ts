import { readFileSync } from "node:fs";
import type { ConnectionOptions } from "node:tls";
import { Redis, SentinelConnector, type RedisOptions, type SentinelConnectionOptions } from "ioredis";
import { StoreUnavailableError, type StoreStatus } from "../types.js";
import type { RedisTarget } from "./target.js";

export type { RedisTarget } from "./target.js";

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
 * ioredis's Sentinel connector keeps the previous connection's failover detector subscribed until
 * a new connection is up. A +switch-master that arrives while the client is between connections,
 * asking a sentinel where the primary now is (which a real failover makes likely: the old
 * primary's connection drops first, the announcement follows the promotion), makes that old
 * detector abandon the question, and ioredis then ends the client for good ("the Redis client is
 * closed" on every store call until a restart). Retiring the old detector before each new connect
 * closes that window; the new connection subscribes a detector of its own, as before.
 */
class SentinelConnectorWithoutStaleDetector extends SentinelConnector {
  // ioredis hands a custom connector its whole options object.
  constructor(options: unknown) {
    super(options as SentinelConnectionOptions);
  }

  override connect(...args: Parameters<SentinelConnector["connect"]>): ReturnType<SentinelConnector["connect"]> {
    const self = this as unknown as { failoverDetector: { cleanup(): void } | null };
    self.failoverDetector?.cleanup();
    self.failoverDetector = null;
    return super.connect(...args);
  }
}

/** After a failover a connection may still reach the demoted primary: reconnect (Sentinel then names the new one). */
const reconnectOnReadonly = (err: Error) => (/^READONLY\b/.test(err.message) ? 1 : false);

/**
 * The ioredis options for a target, without the URL (which ioredis parses itself). Sentinel
 * mode asks the sentinels for the current primary on every (re)connect, checks the role it
 * reaches, and listens for +switch-master so a failover is noticed before a command fails.
 */
export function targetOptions(target: RedisTarget): RedisOptions {
  const out: RedisOptions = {};
  if (target.username !== undefined) out.username = target.username;
  if (target.password !== undefined) out.password = target.password;
  const tls = target.tls ? tlsOptions(target.tls) : undefined;
  if (target.sentinels) {
    Object.assign(out, {
      sentinels: target.sentinels.map(({ host, port }) => ({ host, port })),
      name: target.name,
      sentinelPassword: target.sentinel_password,
      failoverDetector: true,
      // Copied into duplicates too (BullMQ duplicates its worker's connection).
      Connector: SentinelConnectorWithoutStaleDetector,
      // A sentinel that does not answer is skipped quickly; the next one is asked.
      sentinelCommandTimeout: 1_000,
      sentinelRetryStrategy: (times: number) => Math.min(100 * times, 1_000),
    } satisfies RedisOptions);
    if (tls) {
      out.tls = tls;
      out.enableTLSForSentinelMode = true;
      if (target.tls?.sentinels) out.sentinelTLS = tls;
    }
  } else if (tls) {
    out.tls = tls;
  }
  return out;
}

function tlsOptions(tls: NonNullable<RedisTarget["tls"]>): ConnectionOptions {
  const out: ConnectionOptions = {};
  if (tls.ca_file) out.ca = readFileSync(tls.ca_file);
  if (tls.servername) out.servername = tls.servername;
  return out;
}

/**
 * An ioredis client tuned to fail fast: while Redis is unreachable commands reject at
 * once (no offline queue) and a hung Redis times out, while the client keeps reconnecting
 * in the background (backoff capped at 1 s). Errors are never left unhandled.
 */
export function createRedisClient(target: string | RedisTarget, opts: RedisClientOptions = {}): Redis {
  const t: RedisTarget = typeof target === "string" ? { url: target } : target;
  const options: RedisOptions = {
    ...targetOptions(t),
    connectTimeout: opts.connectTimeoutMs ?? 1_000,
    retryStrategy: (times) => Math.min(50 * 2 ** Math.min(times, 5), 1_000),
    reconnectOnError: reconnectOnReadonly,
    connectionName: opts.connectionName,
    ...(opts.blocking
      ? { maxRetriesPerRequest: null, enableOfflineQueue: true }
      : {
          maxRetriesPerRequest: 1,
          enableOfflineQueue: false,
          commandTimeout: opts.commandTimeoutMs === 0 ? undefined : (opts.commandTimeoutMs ?? 1_000),
        }),
  };
  const client = t.sentinels ? new Redis(options) : new Redis(t.url ?? "", options);
  // Connection errors surface through the 'ready'/'close' status and rejected commands;
  // without a listener ioredis would print every reconnect failure.
  client.on("error", () => {});
  // Every store call waiting for a reconnect adds a one-shot 'ready' listener (removed on timeout);
  // a number, not 0 (unlimited): BullMQ raises the limit by adding to it.
  client.setMaxListeners(1_000);
  return client;
}

/**
 * A Redis error as it may be logged: ioredis attaches the failed command to its errors
 * (`err.command.args`), which for AUTH is the password. The copy keeps the name, message and
 * code (and a one-line stack, so the logger's error serializer shows it as an error).
 */
export function loggableRedisError(err: unknown): Error {
  const src = err instanceof Error ? err : new Error(String(err));
  const out = new Error(src.message) as Error & { code?: string };
  out.name = src.name;
  out.stack = `${src.name}: ${src.message}`;
  const code = (src as { code?: unknown }).code;
  if (typeof code === "string") out.code = code;
  return out;
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

/**
 * Tracks whether a client is connected, for metrics and /readyz. The answer is the client's
 * own status, read at each event: under Sentinel a failover can deliver the old connection's
 * 'close' after the new one's 'ready', and counting events would then report "down" for good.
 */
export class RedisStatus implements StoreStatus {
  private readonly listeners = new Set<(connected: boolean) => void>();
  private state: boolean;

  constructor(private readonly client: Redis) {
    this.state = client.status === "ready";
    for (const ev of ["ready", "close", "end", "reconnecting"]) client.on(ev, () => this.set(client.status === "ready"));
  }

  get connected(): boolean {
    return this.client.status === "ready";
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
