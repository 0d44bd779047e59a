import type { KeyStore, StoredKey } from "../store/keys.js";
import type { ApiKey } from "./policy.js";

/** A made key as a request carries it: the config key's shape (its policy fields) plus its id. */
export type MadeApiKey = ApiKey & { id: string; expires_at: number | null };

/** How often an instance compares its copy with the store's version, besides pub/sub. */
export const KEY_VERSION_CHECK_MS = 500;

/**
 * This instance's copy of the made keys, by the hex SHA-256 of their secrets: what auth reads
 * on every request, with no store call. It follows the store three ways: a change made here
 * refreshes it before the admin API answers; a change made on another instance arrives by the
 * store's `watch` (Redis pub/sub, sub-millisecond); and every KEY_VERSION_CHECK_MS one cheap
 * version read catches what pub/sub missed (a reconnect). A token it does not know makes it
 * look at the version once (one look shared by every such token meanwhile), so a key made a
 * moment ago elsewhere works on its first request here. Expiry is read at each lookup.
 */
export class KeyRing {
  private byHash = new Map<string, MadeApiKey>();
  private byName = new Map<string, MadeApiKey>();
  private loaded = -1;
  private timer: NodeJS.Timeout | undefined;
  private unwatch: (() => void) | undefined;
  private syncing: Promise<void> | null = null;
  private queued: Promise<void> | null = null;

  constructor(
    private readonly store: KeyStore,
    private readonly now: () => number,
    private readonly onError: (err: unknown) => void,
  ) {}

  /** Loads the keys and starts following the store. */
  async start(): Promise<void> {
    this.unwatch = this.store.watch(() => void this.sync(true));
    this.timer = setInterval(() => void this.sync(false), KEY_VERSION_CHECK_MS);
    this.timer.unref();
    await this.sync(true);
  }

  stop(): void {
    clearInterval(this.timer);
    this.unwatch?.();
  }

  /** How many made keys this instance knows (expired ones included). */
  get size(): number {
    return this.byHash.size;
  }

  /** The live key whose secret has this digest, or null (unknown, or expired). */
  lookup(hashHex: string): MadeApiKey | null {
    const key = this.byHash.get(hashHex);
    return key && this.live(key) ? key : null;
  }

  /** The live key of this name (background jobs and sockets find their owner by name). */
  named(name: string): MadeApiKey | null {
    const key = this.byName.get(name);
    return key && this.live(key) ? key : null;
  }

  /** Every made key as auth sees it, live or expired. */
  all(): MadeApiKey[] {
    return [...this.byName.values()];
  }

  /**
   * A token nobody knows: resolves once the copy is as new as the store's (one version read,
   * shared by every caller meanwhile), then the key or null. Rejects never: a store that
   * cannot answer leaves the copy as it is.
   */
  async lookupFresh(hashHex: string): Promise<MadeApiKey | null> {
    await this.sync(false);
    return this.lookup(hashHex);
  }

  private live(key: MadeApiKey): boolean {
    return key.expires_at === null || key.expires_at * 1000 > this.now();
  }

  /**
   * Brings the copy up to the store's version; `force` reloads even when the version looks
   * the same (a change notice). One sync at a time; one asked for meanwhile runs after it.
   */
  sync(force: boolean): Promise<void> {
    if (!this.syncing) return this.run(force);
    if (!force) return this.syncing;
    // The sync running may have read the store before the change: one more after it.
    this.queued ??= this.syncing.then(() => {
      this.queued = null;
      return this.run(true);
    });
    return this.queued;
  }

  private run(force: boolean): Promise<void> {
    const p: Promise<void> = this.load(force)
      .catch(this.onError)
      .finally(() => {
        if (this.syncing === p) this.syncing = null;
      });
    this.syncing = p;
    return p;
  }

  private async load(force: boolean): Promise<void> {
    const version = await this.store.version();
    if (!force && version === this.loaded) return;
    const keys = await this.store.list();
    const byHash = new Map<string, MadeApiKey>();
    const byName = new Map<string, MadeApiKey>();
    for (const k of keys) {
      const key = asApiKey(k);
      byHash.set(k.hash, key);
      byName.set(k.name, key);
    }
    this.byHash = byHash;
    this.byName = byName;
    this.loaded = version;
  }
}

/** A stored key as requests use it. `key` (the config's secret) is its digest: the secret is nowhere. */
function asApiKey(k: StoredKey): MadeApiKey {
  const key: MadeApiKey = { id: k.id, name: k.name, key: `sha256:${k.hash}`, role: k.role, expires_at: k.expires_at };
  if (k.models) key.models = k.models;
  if (k.limits) key.limits = k.limits;
  if (k.budget) key.budget = k.budget;
  if (k.tools) key.tools = k.tools;
  return key;
}

/** True for a key made by the admin API (not one from the config). */
export function isMadeKey(key: ApiKey | null | undefined): key is MadeApiKey {
  return key !== null && key !== undefined && "id" in key;
}
