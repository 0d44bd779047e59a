import { readFileSync } from "node:fs";
import type { ConnectionOptions } from "node:tls";
import { Cluster, Command, Redis, SentinelConnector, type ClusterOptions, type RedisOptions, type SentinelConnectionOptions } from "ioredis";
import { StoreUnavailableError, type StoreStatus } from "../types.js";
import type { RedisTarget } from "./target.js";

export type { RedisTarget } from "./target.js";

/** One Redis server (by URL or through Sentinel) or a Redis Cluster: every store takes either. */
export type RedisClient = Redis | Cluster;

/**
 * A key part as a hash tag. On a Redis Cluster every key one command, script or transaction
 * touches must hash to one slot, and Redis hashes only what is inside a key's first `{...}`:
 * keys that go together carry the same tag. On one server or Sentinel the names stay as they
 * always were (no braces), so instances of an earlier release keep reading the same keys during
 * a rolling upgrade; a cluster is a deployment of its own (its keys were never written untagged).
 */
export function hashTag(client: RedisClient, part: string): string {
  return client.isCluster ? `{${part}}` : part;
}

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
export function createRedisClient(target: string | RedisTarget, opts: RedisClientOptions = {}): RedisClient {
  const t: RedisTarget = typeof target === "string" ? { url: target } : target;
  const options: RedisOptions = {
    ...targetOptions(t),
    connectTimeout: opts.connectTimeoutMs ?? 1_000,
    retryStrategy: reconnectBackoff,
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
  const client = t.cluster ? createCluster(t.cluster, options) : t.sentinels ? new Redis(options) : new Redis(t.url ?? "", options);
  // Connection errors surface through the 'ready'/'close' status and rejected commands;
  // without a listener ioredis would print every reconnect failure.
  client.on("error", () => {});
  // Every store call waiting for a reconnect adds a one-shot 'ready' listener (removed on timeout);
  // a number, not 0 (unlimited): BullMQ raises the limit by adding to it.
  client.setMaxListeners(1_000);
  return client;
}

const reconnectBackoff = (times: number) => Math.min(50 * 2 ** Math.min(times, 5), 1_000);

/**
 * A Redis Cluster client with the same fail-fast behaviour: `options` (credentials, TLS,
 * timeouts) apply to each node's connection. Reads and writes go to the primary of a key's slot
 * (replicas only take over in a failover). A command for a slot whose primary is gone is retried
 * on the slot map ioredis refreshes (every 100 ms, up to 8 tries: about a second), then rejected,
 * so a store call in a failover window ends in a 503, never a hang; `enableOfflineQueue` stays as
 * the caller asked (only blocking readers and BullMQ queue commands while the cluster is away).
 * The `ready` check waits for CLUSTER INFO to say `cluster_state:ok`.
 */
function createCluster(nodes: NonNullable<RedisTarget["cluster"]>, options: RedisOptions): Cluster {
  const { enableOfflineQueue, retryStrategy: _nodesDoNotReconnect, ...redisOptions } = options;
  const clusterOptions: ClusterOptions = {
    scaleReads: "master",
    enableOfflineQueue,
    clusterRetryStrategy: reconnectBackoff,
    retryDelayOnFailover: 100,
    retryDelayOnClusterDown: 100,
    retryDelayOnTryAgain: 100,
    maxRedirections: enableOfflineQueue ? 16 : 8,
    slotsRefreshTimeout: 1_000,
    redisOptions,
  };
  return new Cluster(
    nodes.map(({ host, port }) => ({ host, port })),
    clusterOptions,
  );
}

/**
 * On a cluster, index keys named by an item's id alone (findItem) hash to slots of their own, so
 * they cannot join the record's transaction: they are set after it, each by itself, at once.
 * A reader that finds an index key before its record is written misses, as it would before.
 */
export async function setApart(client: RedisClient, what: string, keys: string[], value: string, ttlMs: number, readyTimeoutMs?: number): Promise<void> {
  if (keys.length === 0) return;
  await redisCall(client, what, () => Promise.all(keys.map((k) => client.set(k, value, "PX", ttlMs))), readyTimeoutMs);
}

/**
 * A connection of its own for a blocking read (XREAD BLOCK holds its connection until it
 * answers), failing fast like the shared one. Under Sentinel it needs no failover detector of
 * its own (one subscription per sentinel): a lost primary ends its read.
 */
export function blockingReader(client: RedisClient, commandTimeoutMs: number): RedisClient {
  const conn =
    client instanceof Cluster
      ? client.duplicate([], { enableOfflineQueue: false, redisOptions: { ...client.options.redisOptions, commandTimeout: commandTimeoutMs } })
      : client.duplicate({ commandTimeout: commandTimeoutMs, enableOfflineQueue: false, maxRetriesPerRequest: 1, failoverDetector: false });
  conn.on("error", () => {});
  return conn;
}

/**
 * WAIT for `replicas` replicas on the connection that took the write: the client itself on one
 * server, or on a cluster the primary that serves `key`'s slot (WAIT has no key of its own, and
 * it confirms only its own connection's writes: the cluster's connection to that primary).
 */
export async function waitForReplicas(client: RedisClient, key: string, replicas: number, timeoutMs: number): Promise<number> {
  if (!(client instanceof Cluster)) return client.wait(replicas, timeoutMs);
  const owner = client.slots[new Command("get", [key]).getSlot()]?.[0];
  const node = client.nodes("master").find((n) => `${n.options.host}:${n.options.port}` === owner);
  if (!node) throw new StoreUnavailableError(`no primary serves the slot of ${key}`);
  return node.wait(replicas, timeoutMs);
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
export function waitReady(client: RedisClient, ms: number, what = "redis"): Promise<void> {
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
export async function redisCall<T>(client: RedisClient, what: string, fn: () => Promise<T>, readyTimeoutMs = 500): Promise<T> {
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

  constructor(private readonly client: RedisClient) {
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
export async function closeClient(client: RedisClient, ms = 500): Promise<void> {
  if (client.status === "end") return;
  if (client.status === "ready") {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([client.quit().catch(() => {}), new Promise((r) => (timer = setTimeout(r, ms)))]);
    clearTimeout(timer);
  }
  client.disconnect();
}
