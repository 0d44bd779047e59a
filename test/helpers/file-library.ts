/**
 * A TEST DOUBLE of the `FileLibrary` contract (src/tools/file-search/library.ts): files and
 * vector stores held in memory, and a real, deterministic keyword search over them, so the
 * responses path (the file_search tool, `input_file` by `file_id`) is tested against the
 * contract without the Files room's LanceDB index. Not the router's library: that one is built
 * by the server from `files:`; this one is set on `runtime.files` by the tests.
 *
 * Search: each file is cut into passages at blank lines; a passage scores the share of the
 * query's distinct words it contains (in [0, 1]); ties go to the earlier file and passage.
 * Filters are applied on the file's `attributes` (comparison and compound, as OpenAI's);
 * `score_threshold` drops what scores below it. The embedding tokens reported are the query's
 * word count (deterministic, so tests can assert usage and metrics).
 */
import { ApiError } from "../../src/ops/errors.js";
import type { AttributeFilter, ComparisonFilter, FileLibrary, FileSearchHit, FileSearchOutcome, FileSearchQuery, StoredFileContent } from "../../src/tools/file-search/library.js";

export interface TestFile {
  id: string;
  owner: string;
  filename: string;
  mime?: string;
  /** Default `user_data`. */
  purpose?: string;
  text?: string;
  bytes?: Buffer;
  attributes?: Record<string, string | number | boolean> | null;
}

export interface TestStore {
  id: string;
  owner: string;
  fileIds: string[];
}

export class InMemoryFileLibrary implements FileLibrary {
  readonly files = new Map<string, TestFile>();
  readonly stores = new Map<string, TestStore>();
  /** Every query run, in order (what the router asked for). */
  readonly searches: FileSearchQuery[] = [];
  /** Every file read, as [owner, id]. */
  readonly reads: [string, string][] = [];
  /** When set, search fails with it (an index or embedding model that is down). */
  failWith: ApiError | null = null;

  addFile(f: TestFile): this {
    this.files.set(f.id, f);
    return this;
  }

  addStore(s: TestStore): this {
    this.stores.set(s.id, s);
    return this;
  }

  async assertVectorStores(owner: string, ids: string[]): Promise<void> {
    for (const id of ids) {
      const s = this.stores.get(id);
      if (!s || s.owner !== owner) throw new ApiError(404, `Vector store with id '${id}' not found.`, { type: "invalid_request_error", param: "vector_store_ids", code: "not_found" });
    }
  }

  async readFile(owner: string, id: string): Promise<StoredFileContent> {
    this.reads.push([owner, id]);
    const f = this.files.get(id);
    if (!f || f.owner !== owner) throw new ApiError(404, `No such File object: ${id}`, { type: "invalid_request_error", param: "file_id", code: "not_found" });
    return { id, filename: f.filename, purpose: f.purpose ?? "user_data", mime: f.mime ?? "text/plain", bytes: f.bytes ?? Buffer.from(f.text ?? "", "utf8") };
  }

  /** The ids this double holds (whoever's) are its own; any other is not (an OpenAI file's). */
  mints(id: string): boolean {
    return this.files.has(id);
  }

  async search(q: FileSearchQuery): Promise<FileSearchOutcome> {
    this.searches.push({ ...q, signal: undefined });
    await this.assertVectorStores(q.owner, q.vectorStoreIds);
    if (this.failWith) throw this.failWith;
    const queries = Array.isArray(q.query) ? q.query : [q.query];
    const terms = [...new Set(queries.flatMap(words))];
    const hits: FileSearchHit[] = [];
    for (const storeId of q.vectorStoreIds) {
      for (const fileId of this.stores.get(storeId)!.fileIds) {
        const f = this.files.get(fileId);
        if (!f || (q.filters && !matches(q.filters, f.attributes ?? {}))) continue;
        for (const passage of (f.text ?? "").split(/\n\s*\n/)) {
          const have = new Set(words(passage));
          const score = terms.length === 0 ? 0 : terms.filter((t) => have.has(t)).length / terms.length;
          if (score === 0 || score < (q.rankingOptions?.score_threshold ?? 0)) continue;
          hits.push({ file_id: f.id, filename: f.filename, score, attributes: f.attributes ?? null, content: [{ type: "text", text: passage.trim() }], vector_store_id: storeId });
        }
      }
    }
    // A stable sort: equal scores keep store, file and passage order.
    hits.sort((a, b) => b.score - a.score);
    return { hits: hits.slice(0, q.maxNumResults ?? 10), queries, embeddingTokens: terms.length };
  }
}

function words(text: string): string[] {
  return text.toLowerCase().match(/[a-z0-9][a-z0-9_-]*/g) ?? [];
}

function matches(f: AttributeFilter, attrs: Record<string, string | number | boolean>): boolean {
  if (f.type === "and") return f.filters.every((x) => matches(x, attrs));
  if (f.type === "or") return f.filters.some((x) => matches(x, attrs));
  return compare(f as ComparisonFilter, attrs[(f as ComparisonFilter).key]);
}

function compare(f: ComparisonFilter, v: string | number | boolean | undefined): boolean {
  switch (f.type) {
    case "eq":
      return v === f.value;
    case "ne":
      return v !== f.value;
    case "gt":
      return typeof v === "number" && v > (f.value as number);
    case "gte":
      return typeof v === "number" && v >= (f.value as number);
    case "lt":
      return typeof v === "number" && v < (f.value as number);
    case "lte":
      return typeof v === "number" && v <= (f.value as number);
    case "in":
      return (f.value as (string | number)[]).includes(v as string | number);
    case "nin":
      return !(f.value as (string | number)[]).includes(v as string | number);
  }
}
