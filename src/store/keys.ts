/**
 * API keys made by the admin API (POST /v1/admin/keys), beside the ones in the config. The
 * store keeps the SHA-256 digest of each secret, never the secret: a key is found by the digest
 * of the token a request brings. Adapters: memory (one instance) and Redis (every instance sees
 * the same keys); one contract suite (test/store/). Every change bumps `version` and tells the
 * `watch` listeners, so each instance's cache of the keys (keys/key-ring.ts) follows within a
 * second without a store call per request.
 */
export interface StoredKey {
  /** `key_...`: names the key in the admin API. */
  id: string;
  /** Hex SHA-256 of the secret. */
  hash: string;
  /** `sk-...abcd`: the secret's last four characters, what pages and lists show. */
  redacted_value: string;
  /** Unique among every key (config ones too): usage, limits and metrics count by it. */
  name: string;
  role: "admin" | "user";
  models?: string[];
  limits?: { requests_per_minute?: number; tokens_per_minute?: number; max_concurrent?: number };
  budget?: { tokens_per_day?: number; tokens_per_month?: number };
  tools?: string[];
  /** Unix seconds after which the key answers 401; null: never. */
  expires_at: number | null;
  metadata: Record<string, string>;
  /** Unix seconds. */
  created_at: number;
}

/**
 * What `update` may change: the policy fields (name, secret and id stay). Undefined leaves a
 * field; null takes an optional one away (models, limits, budget, tools) or, for expires_at, means never.
 */
export interface KeyPolicyPatch {
  role?: StoredKey["role"];
  models?: string[] | null;
  limits?: StoredKey["limits"] | null;
  budget?: StoredKey["budget"] | null;
  tools?: string[] | null;
  expires_at?: number | null;
  metadata?: Record<string, string>;
}

export interface KeyStore {
  /** Adds the key; "name_taken" when a made key already has its name (nothing written). */
  create(key: StoredKey): Promise<"created" | "name_taken">;
  get(id: string): Promise<StoredKey | null>;
  /** Every made key, ordered by created_at then id. */
  list(): Promise<StoredKey[]>;
  /** Replaces the fields the patch names (undefined: unchanged); null when no such key. */
  update(id: string, patch: KeyPolicyPatch): Promise<StoredKey | null>;
  /** Removes the key (its name is free again); false when there was none. */
  revoke(id: string): Promise<boolean>;
  /** A number that changes with every create, update and revoke (on any instance). */
  version(): Promise<number>;
  /** Calls `onChange` after a change made anywhere (Redis: pub/sub); returns the unsubscribe. */
  watch(onChange: () => void): () => void;
  close(): Promise<void>;
}

/** The one order of `list` both adapters keep. */
export function byCreation(a: StoredKey, b: StoredKey): number {
  return a.created_at - b.created_at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** `key` with the patch laid over it (see KeyPolicyPatch). */
export function patched(key: StoredKey, patch: KeyPolicyPatch): StoredKey {
  const out = { ...key } as unknown as Record<string, unknown>;
  for (const [field, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    if (value === null && field !== "expires_at") delete out[field];
    else out[field] = value;
  }
  return out as unknown as StoredKey;
}
