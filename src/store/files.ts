/**
 * The records of the Files and Vector Stores API (`src/files/`): uploaded files, vector stores,
 * the files attached to each store and file batches, laid out as OpenAI's objects so that what
 * a route answers is the record itself. The bytes and the search index are not here: they live
 * under `files.storage` (src/files/). Adapters: memory and Redis; the contract suite is
 * test/store/files-contract.ts.
 *
 * Counts (`file_counts`, `usage_bytes`) are not stored: the service derives them from the
 * store's files when it answers, so two instances updating files of one store never race on a
 * counter. A store file's status is written with `updateStoreFile`, which changes only the
 * fields given and only while the record exists: an indexing job that ends after its file was
 * detached never brings the record back.
 */

/** OpenAI's `FileObject` (node_modules/openai/resources/files.d.ts). */
export interface FileObjectRecord {
  id: string;
  object: "file";
  bytes: number;
  created_at: number;
  filename: string;
  purpose: string;
  status: "uploaded" | "processed" | "error";
  expires_at?: number | null;
  status_details?: string | null;
}

export interface StoredFile {
  file: FileObjectRecord;
  /** The key that uploaded it ("" without keys). */
  owner: string;
  /** The media type the file is read as (from its name and its declared type). */
  mime: string;
}

export type FileCountsRecord = { in_progress: number; completed: number; failed: number; cancelled: number; total: number };
export type ChunkingStrategyRecord = { type: "static"; static: { max_chunk_size_tokens: number; chunk_overlap_tokens: number } } | { type: "other" };

/** A vector store's own fields; `status`, `file_counts`, `usage_bytes` are derived on read. */
export interface VectorStoreRecord {
  id: string;
  object: "vector_store";
  created_at: number;
  name: string;
  metadata: Record<string, string> | null;
  last_active_at: number | null;
  expires_after?: { anchor: "last_active_at"; days: number } | null;
  expires_at?: number | null;
}

export interface StoredVectorStore {
  store: VectorStoreRecord;
  owner: string;
  /** Expired, and its chunks dropped by the expiry sweep (which counts each store once). */
  swept?: boolean;
}

/** OpenAI's `VectorStoreFile` (node_modules/openai/resources/vector-stores/files.d.ts). */
export interface VectorStoreFileRecord {
  id: string;
  object: "vector_store.file";
  created_at: number;
  vector_store_id: string;
  status: "in_progress" | "completed" | "cancelled" | "failed";
  usage_bytes: number;
  last_error: { code: "server_error" | "unsupported_file" | "invalid_file"; message: string } | null;
  attributes: Record<string, string | number | boolean> | null;
  chunking_strategy: ChunkingStrategyRecord;
}

export interface StoredVectorStoreFile {
  file: VectorStoreFileRecord;
  owner: string;
  /** The batch that attached it, if any. */
  batch_id: string | null;
}

/** A file batch: its own fields and the files it attached; `status` and `file_counts` derived on read but for `cancelled`. */
export interface StoredFileBatch {
  batch: { id: string; object: "vector_store.files_batch"; created_at: number; vector_store_id: string; cancelled: boolean };
  owner: string;
  file_ids: string[];
}

/** The fields of a store file an update may change. */
export type StoreFilePatch = Partial<Pick<VectorStoreFileRecord, "status" | "usage_bytes" | "last_error" | "attributes">>;

/** Unreachable store: StoreUnavailableError, as for the other stores. */
export interface FileStore {
  putFile(rec: StoredFile): Promise<void>;
  getFile(id: string): Promise<StoredFile | null>;
  /** The owner's files, in no particular order. */
  listFiles(owner: string): Promise<StoredFile[]>;
  /** True when something was deleted. */
  deleteFile(id: string): Promise<boolean>;

  putVectorStore(rec: StoredVectorStore): Promise<void>;
  getVectorStore(id: string): Promise<StoredVectorStore | null>;
  listVectorStores(owner: string): Promise<StoredVectorStore[]>;
  /** Deletes the store, its files' records and its batches; true when the store was there. */
  deleteVectorStore(id: string): Promise<boolean>;

  /** Creates or replaces a store's file. */
  putStoreFile(rec: StoredVectorStoreFile): Promise<void>;
  /** Changes the given fields of a store's file while it exists; the record after, or null. */
  updateStoreFile(vectorStoreId: string, fileId: string, patch: StoreFilePatch): Promise<StoredVectorStoreFile | null>;
  getStoreFile(vectorStoreId: string, fileId: string): Promise<StoredVectorStoreFile | null>;
  /** Every file of a store, in no particular order. */
  listStoreFiles(vectorStoreId: string): Promise<StoredVectorStoreFile[]>;
  deleteStoreFile(vectorStoreId: string, fileId: string): Promise<boolean>;
  /** The vector stores a file is attached to (to remove it from each when it is deleted). */
  storesHolding(fileId: string): Promise<string[]>;

  /**
   * Ids of files whose `expires_at` is at or before `now` (unix seconds), at most `limit`: what
   * the expiry sweep removes. A file leaves this list when it is deleted.
   */
  expiredFiles(now: number, limit: number): Promise<string[]>;
  /**
   * Ids of vector stores whose `expires_at` is at or before `now`, at most `limit`, that the sweep
   * has not dealt with yet (`sweptVectorStore`). A store leaves this list when it is deleted or
   * swept, and comes back when it is put again with an `expires_at`.
   */
  expiredVectorStores(now: number, limit: number): Promise<string[]>;
  /** The sweep dealt with this expired store (its chunks are gone): it leaves `expiredVectorStores`. */
  sweptVectorStore(id: string): Promise<void>;

  putBatch(rec: StoredFileBatch): Promise<void>;
  getBatch(id: string): Promise<StoredFileBatch | null>;
  /** Marks a batch cancelled; false when it does not exist. */
  cancelBatch(id: string): Promise<boolean>;
}
