import { byCreation, patched, type KeyPolicyPatch, type KeyStore, type StoredKey } from "../keys.js";

/** Made keys of this instance (memory mode): a map, a version and in-process listeners. */
export class MemoryKeyStore implements KeyStore {
  private readonly keys = new Map<string, StoredKey>();
  private changes = 0;
  private readonly listeners = new Set<() => void>();

  async create(key: StoredKey): Promise<"created" | "name_taken"> {
    for (const k of this.keys.values()) if (k.name === key.name) return "name_taken";
    this.keys.set(key.id, { ...key });
    this.changed();
    return "created";
  }

  async get(id: string): Promise<StoredKey | null> {
    const k = this.keys.get(id);
    return k ? { ...k } : null;
  }

  async list(): Promise<StoredKey[]> {
    return [...this.keys.values()].map((k) => ({ ...k })).sort(byCreation);
  }

  async update(id: string, patch: KeyPolicyPatch): Promise<StoredKey | null> {
    const k = this.keys.get(id);
    if (!k) return null;
    const next = patched(k, patch);
    this.keys.set(id, next);
    this.changed();
    return { ...next };
  }

  async revoke(id: string): Promise<boolean> {
    if (!this.keys.delete(id)) return false;
    this.changed();
    return true;
  }

  async version(): Promise<number> {
    return this.changes;
  }

  watch(onChange: () => void): () => void {
    // A wrapper of its own, so one listener given twice is two subscriptions.
    const fn = () => onChange();
    this.listeners.add(fn);
    return () => void this.listeners.delete(fn);
  }

  async close(): Promise<void> {
    this.listeners.clear();
  }

  private changed(): void {
    this.changes++;
    for (const fn of this.listeners) queueMicrotask(fn);
  }
}
