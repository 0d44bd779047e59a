import { closeClient, createRedisClient, redisCall, waitForReplicas, type RedisClient, type RedisTarget } from "./client.js";
import { settlesWithin } from "../settles-within.js";
import { StoreUnavailableError } from "../types.js";

export interface DurableWriterOptions {
  /** WAIT 1 <timeoutMs>: how long a write waits for one replica (storage.durability_timeout). */
  timeoutMs: number;
  /** Connections kept for durable writes; more writes at once wait for one to be free (default 8). */
  size?: number;
  /** How long a write waits for a free connection, and for a reconnecting one (default 500 ms). */
  readyTimeoutMs?: number;
  /** The write itself (before WAIT) gives up after this long (default 1000 ms, the shared client's command timeout). */
  writeTimeoutMs?: number;
}

/** A write run on the durable connection it is handed. */
export type DurableWrite<T> = (client: RedisClient) => Promise<T>;

/**
 * A write a client depends on: on the durable writer's connections when there is one (confirmed
 * by a replica of the shard that holds `key` when `confirm` holds), else on the shared client.
 */
export function storeWrite<T>(shared: RedisClient, durable: DurableWriter | undefined, what: string, key: string, write: DurableWrite<T>, confirm: ((result: T) => boolean) | undefined, readyTimeoutMs: number | undefined): Promise<T> {
  return durable ? durable.write(what, key, write, confirm) : redisCall(shared, what, () => write(shared), readyTimeoutMs);
}

/** A MULTI whose reply holds an error (e.g. OOM) failed: throw it. */
export function throwFailed(results: [Error | null, unknown][] | null): void {
  const failed = results?.find(([err]) => err);
  if (failed) throw failed[0];
}

/**
 * `storage.durability: replica`: the writes a client depends on, each followed by `WAIT 1` on the
 * same connection (WAIT confirms only its own connection's writes). They run on connections of
 * their own, never on the one every other store call shares: during a failover each WAIT holds
 * its connection for up to `timeoutMs`, and on the shared one every read, limiter and cache call
 * (a `store: false` request's too) would queue behind it. A write waits at most `readyTimeoutMs`
 * for a free connection and for it to be connected (one budget), so a store call fails within
 * that, the write timeout and `timeoutMs`. After a WAIT found no replica (a primary just promoted,
 * its replicas not yet re-pointed to it), each write first asks the primary (ROLE) and fails at
 * once while it still has none, instead of waiting `timeoutMs` for a confirmation that cannot come.
 * A connection whose call failed is dropped (a command it gave up on may still hold it) and a
 * fresh one made when needed.
 */
export class DurableWriter {
  private readonly idle: RedisClient[] = [];
  private open = 0;
  private readonly waiting: { resolve: (c: RedisClient) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }[] = [];
  private closed = false;
  private readonly size: number;
  private readonly readyTimeoutMs: number;
  private readonly writeTimeoutMs: number;

  constructor(
    private readonly target: RedisTarget,
    private readonly opts: DurableWriterOptions,
  ) {
    this.size = opts.size ?? 8;
    this.readyTimeoutMs = opts.readyTimeoutMs ?? 500;
    this.writeTimeoutMs = opts.writeTimeoutMs ?? 1_000;
  }

  /**
   * Runs `write` on a durable connection, then waits for a replica when `confirm(result)` holds:
   * on a cluster, a replica of the shard that serves `key` (the key the write is about; the
   * keys one write touches share its hash tag).
   */
  async write<T>(what: string, key: string, write: DurableWrite<T>, confirm: (result: T) => boolean = () => true): Promise<T> {
    const started = Date.now();
    const client = await this.acquire(what);
    // Reusable afterwards only when nothing it sent is still unanswered.
    let clean = false;
    try {
      return await redisCall(
        client,
        what,
        async () => {
          // The primary had no replica at the last write that waited for one: a write that cannot
          // be confirmed fails now, before it is made, instead of after a whole WAIT.
          if (this.replicaMissing && !(await this.hasReplica(client))) {
            clean = true;
            throw new StoreUnavailableError(`${what}: the primary has no replica to confirm the write`);
          }
          const pending = write(client);
          if (!(await settlesWithin(pending, this.writeTimeoutMs))) throw new StoreUnavailableError(`${what}: the write got no answer within ${this.writeTimeoutMs} ms`);
          clean = true;
          const out = await pending;
          if (confirm(out)) {
            clean = false;
            const acked = await waitForReplicas(client, key, 1, this.opts.timeoutMs);
            clean = true;
            this.replicaMissing = acked < 1;
            if (acked < 1) throw new StoreUnavailableError(`${what}: no replica confirmed the write within ${this.opts.timeoutMs} ms`);
          }
          return out;
        },
        // Waiting for a free connection and for it to be connected share one budget.
        Math.max(1, this.readyTimeoutMs - (Date.now() - started)),
      );
    } finally {
      this.release(client, clean);
    }
  }

  /** Set when a write's WAIT found no replica: later writes ask first (ROLE) until one is back. */
  private replicaMissing = false;

  /**
   * Whether the primary this connection reaches has a replica connected (ROLE lists them). On a
   * cluster the shards differ and one ROLE names none of them: WAIT on the write's shard decides.
   */
  private async hasReplica(client: RedisClient): Promise<boolean> {
    if (client.isCluster) return true;
    const role = (await client.call("ROLE")) as [string, number, unknown[]?];
    const has = role[0] === "master" && (role[2]?.length ?? 0) > 0;
    if (has) this.replicaMissing = false;
    return has;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const w of this.waiting.splice(0)) {
      clearTimeout(w.timer);
      w.reject(new StoreUnavailableError("the store is closing"));
    }
    await Promise.all(this.idle.splice(0).map((c) => closeClient(c)));
  }

  private acquire(what: string): Promise<RedisClient> {
    if (this.closed) return Promise.reject(new StoreUnavailableError(`${what}: the store is closing`));
    const free = this.idle.pop();
    if (free) return Promise.resolve(free);
    if (this.open < this.size) {
      this.open++;
      // WAIT holds its reply up to timeoutMs: the command timeout must not cut it short.
      return Promise.resolve(createRedisClient(this.target, { connectionName: "rr-durable", commandTimeoutMs: this.opts.timeoutMs + 1_000 }));
    }
    return new Promise((resolve, reject) => {
      const entry = {
        resolve,
        reject,
        timer: setTimeout(() => {
          this.waiting.splice(this.waiting.indexOf(entry), 1);
          reject(new StoreUnavailableError(`${what}: every durable-write connection is still waiting for a replica`));
        }, this.readyTimeoutMs),
      };
      this.waiting.push(entry);
    });
  }

  private release(client: RedisClient, clean: boolean): void {
    if (!clean || this.closed) {
      this.open--;
      client.disconnect();
      // A waiter gets a fresh connection instead.
      const next = this.waiting.shift();
      if (next && !this.closed) {
        clearTimeout(next.timer);
        this.open++;
        next.resolve(createRedisClient(this.target, { connectionName: "rr-durable", commandTimeoutMs: this.opts.timeoutMs + 1_000 }));
      }
      return;
    }
    const next = this.waiting.shift();
    if (next) {
      clearTimeout(next.timer);
      next.resolve(client);
    } else this.idle.push(client);
  }
}
