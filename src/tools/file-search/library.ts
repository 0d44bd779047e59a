/**
 * What the `file_search` tool and `input_file` by `file_id` need from the router's Files and
 * Vector Stores: the contract between the room that keeps them (`src/files/`, which owns
 * ingestion, the index and the routes) and the responses path that uses them (the tool loop,
 * the planner). It lives down here so that both sides import it without importing each other:
 * the server builds the library and hangs it on the runtime (`Runtime.files`).
 *
 * Every method scopes by `owner` (the API key's id, as stored responses are): another key's
 * file or store is not found. Errors are `ApiError`s in OpenAI's shape (404 `not_found` for an
 * unknown or foreign id, 400 for a bad query, 503 when the index or the embedding model is down).
 */

/** A comparison filter on a file's `attributes` (OpenAI's `ComparisonFilter`). */
export interface ComparisonFilter {
  type: "eq" | "ne" | "gt" | "gte" | "lt" | "lte" | "in" | "nin";
  key: string;
  value: string | number | boolean | Array<string | number>;
}

/** `and` / `or` of filters (OpenAI's `CompoundFilter`). */
export interface CompoundFilter {
  type: "and" | "or";
  filters: Array<ComparisonFilter | CompoundFilter>;
}

export type AttributeFilter = ComparisonFilter | CompoundFilter;

export interface RankingOptions {
  /** `auto`, `default-2024-11-15`, or `none` (no hybrid re-ranking: vector order). */
  ranker?: string;
  /** Results scoring below this (scores are in [0, 1]) are left out. */
  score_threshold?: number;
  /** How the reciprocal-rank fusion weighs the vector list against the full-text list. */
  hybrid_search?: HybridSearchWeights;
}

/** OpenAI's `ranking_options.hybrid_search`: non-negative weights, not both 0. */
export interface HybridSearchWeights {
  embedding_weight: number;
  text_weight: number;
}

export interface FileSearchQuery {
  owner: string;
  vectorStoreIds: string[];
  query: string | string[];
  /** 1..50, default 10 (the Responses tool's default as OpenAI's). */
  maxNumResults?: number;
  filters?: AttributeFilter | null;
  rankingOptions?: RankingOptions;
  rewriteQuery?: boolean;
  signal?: AbortSignal;
}

/** One hit, laid out as OpenAI's `VectorStoreSearchResponse` (and the tool's result). */
export interface FileSearchHit {
  file_id: string;
  filename: string;
  /** In [0, 1], higher is better. */
  score: number;
  attributes: Record<string, string | number | boolean> | null;
  content: Array<{ type: "text"; text: string }>;
  /** The vector store the hit came from. */
  vector_store_id: string;
}

export interface FileSearchOutcome {
  hits: FileSearchHit[];
  /** The queries actually run (after `rewrite_query`), as `file_search_call.queries` reports them. */
  queries: string[];
  /** Tokens the query embeddings cost (usage and metrics count them). */
  embeddingTokens: number;
}

/** A stored file's bytes, for an `input_file` or `input_image` given by `file_id`. */
export interface StoredFileContent {
  id: string;
  filename: string;
  /** The purpose it was uploaded for (`user_data`, `vision`, `assistants`, ...). */
  purpose: string;
  /** The media type the upload was read as (e.g. `application/pdf`, `text/plain`). */
  mime: string;
  bytes: Buffer;
}

export interface FileLibrary {
  /** Hybrid (vector + BM25) search over the given stores; 404 when any store is unknown or foreign. */
  search(q: FileSearchQuery): Promise<FileSearchOutcome>;
  /** Resolves when every id is a vector store this owner may use; 404 (`param` names the id) otherwise. */
  assertVectorStores(owner: string, vectorStoreIds: string[]): Promise<void>;
  /** A file's bytes by id; 404 when unknown, expired, deleted or another key's. */
  readFile(owner: string, fileId: string): Promise<StoredFileContent>;
  /**
   * Whether an id is in the library's own namespace (one it mints), whoever holds it and whether
   * it still exists: told by the id's form, so the answer says nothing of a file. An id that is
   * not (a file uploaded to OpenAI directly) is passed on to a `kind: openai` endpoint untouched.
   */
  mints(fileId: string): boolean;
}
