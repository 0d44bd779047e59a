import type { FileStore, StoreFilePatch, StoredFile, StoredFileBatch, StoredVectorStore, StoredVectorStoreFile } from "../files.js";

/**
 * The Files and Vector Stores records in process memory. Records are kept as JSON strings, so
 * a caller never holds a reference into the store (as with the Redis adapter). Not bounded by
 * `storage.memory`: these records are the user's data, not a cache, and live until deleted.
 */
export class MemoryFileStore implements FileStore {
  private readonly files = new Map<string, string>();
  private readonly stores = new Map<string, string>();
  /** vector store id -> file id -> record JSON. */
  private readonly storeFiles = new Map<string, Map<string, string>>();
  /** file id -> the vector stores it is attached to. */
  private readonly holders = new Map<string, Set<string>>();
  private readonly batches = new Map<string, string>();
  /** Expiring files and vector stores: id -> `expires_at`. */
  private readonly fileExpiry = new Map<string, number>();
  private readonly storeExpiry = new Map<string, number>();

  async putFile(rec: StoredFile): Promise<void> {
    this.files.set(rec.file.id, JSON.stringify(rec));
    setExpiry(this.fileExpiry, rec.file.id, rec.file.expires_at);
  }

  async getFile(id: string): Promise<StoredFile | null> {
    return parse(this.files.get(id));
  }

  async listFiles(owner: string): Promise<StoredFile[]> {
    return [...this.files.values()].map((j) => JSON.parse(j) as StoredFile).filter((r) => r.owner === owner);
  }

  async deleteFile(id: string): Promise<boolean> {
    this.fileExpiry.delete(id);
    return this.files.delete(id);
  }

  async putVectorStore(rec: StoredVectorStore): Promise<void> {
    this.stores.set(rec.store.id, JSON.stringify(rec));
    setExpiry(this.storeExpiry, rec.store.id, rec.store.expires_at);
  }

  async getVectorStore(id: string): Promise<StoredVectorStore | null> {
    return parse(this.stores.get(id));
  }

  async listVectorStores(owner: string): Promise<StoredVectorStore[]> {
    return [...this.stores.values()].map((j) => JSON.parse(j) as StoredVectorStore).filter((r) => r.owner === owner);
  }

  async deleteVectorStore(id: string): Promise<boolean> {
    for (const fileId of this.storeFiles.get(id)?.keys() ?? []) this.holders.get(fileId)?.delete(id);
    this.storeFiles.delete(id);
    this.storeExpiry.delete(id);
    for (const [batchId, json] of this.batches) if ((JSON.parse(json) as StoredFileBatch).batch.vector_store_id === id) this.batches.delete(batchId);
    return this.stores.delete(id);
  }

  async putStoreFile(rec: StoredVectorStoreFile): Promise<void> {
    const vs = rec.file.vector_store_id;
    let files = this.storeFiles.get(vs);
    if (!files) this.storeFiles.set(vs, (files = new Map()));
    files.set(rec.file.id, JSON.stringify(rec));
    let held = this.holders.get(rec.file.id);
    if (!held) this.holders.set(rec.file.id, (held = new Set()));
    held.add(vs);
  }

  async updateStoreFile(vectorStoreId: string, fileId: string, patch: StoreFilePatch): Promise<StoredVectorStoreFile | null> {
    const files = this.storeFiles.get(vectorStoreId);
    const rec = parse<StoredVectorStoreFile>(files?.get(fileId));
    if (!files || !rec) return null;
    Object.assign(rec.file, patch);
    files.set(fileId, JSON.stringify(rec));
    return rec;
  }

  async getStoreFile(vectorStoreId: string, fileId: string): Promise<StoredVectorStoreFile | null> {
    return parse(this.storeFiles.get(vectorStoreId)?.get(fileId));
  }

  async listStoreFiles(vectorStoreId: string): Promise<StoredVectorStoreFile[]> {
    return [...(this.storeFiles.get(vectorStoreId)?.values() ?? [])].map((j) => JSON.parse(j) as StoredVectorStoreFile);
  }

  async deleteStoreFile(vectorStoreId: string, fileId: string): Promise<boolean> {
    const held = this.holders.get(fileId);
    held?.delete(vectorStoreId);
    if (held?.size === 0) this.holders.delete(fileId);
    return this.storeFiles.get(vectorStoreId)?.delete(fileId) ?? false;
  }

  async storesHolding(fileId: string): Promise<string[]> {
    return [...(this.holders.get(fileId) ?? [])];
  }

  async expiredFiles(now: number, limit: number): Promise<string[]> {
    return expiredIds(this.fileExpiry, now, limit);
  }

  async expiredVectorStores(now: number, limit: number): Promise<string[]> {
    return expiredIds(this.storeExpiry, now, limit);
  }

  async sweptVectorStore(id: string): Promise<void> {
    this.storeExpiry.delete(id);
  }

  async putBatch(rec: StoredFileBatch): Promise<void> {
    this.batches.set(rec.batch.id, JSON.stringify(rec));
  }

  async getBatch(id: string): Promise<StoredFileBatch | null> {
    return parse(this.batches.get(id));
  }

  async cancelBatch(id: string): Promise<boolean> {
    const rec = parse<StoredFileBatch>(this.batches.get(id));
    if (!rec) return false;
    rec.batch.cancelled = true;
    this.batches.set(id, JSON.stringify(rec));
    return true;
  }
}

function setExpiry(index: Map<string, number>, id: string, expiresAt: number | null | undefined): void {
  if (typeof expiresAt === "number") index.set(id, expiresAt);
  else index.delete(id);
}

function expiredIds(index: Map<string, number>, now: number, limit: number): string[] {
  const out: string[] = [];
  for (const [id, at] of index) {
    if (out.length >= limit) break;
    if (at <= now) out.push(id);
  }
  return out;
}

function parse<T>(json: string | undefined): T | null {
  return json === undefined ? null : (JSON.parse(json) as T);
}
