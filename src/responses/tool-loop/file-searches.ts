/**
 * The file searches of one response, as the tool loop runs them: each call of the model's
 * `file_search` function is one query against the request's vector stores through the router's
 * `FileLibrary` (`Runtime.files`). Every hit is kept, numbered across the response's searches as
 * the model read them, so an answer's `[n]` resolves to its file (`file_citation`). A search that
 * fails is a failed `file_search_call` the model is told about, never a failed response. Each is
 * counted (file_search_calls_total, tool_calls_total, a CLIENT span) and its query embeddings'
 * tokens go to the key's usage under the embedding model.
 */
import type { ResponseOutputText } from "openai/resources/responses/responses";
import { NO_KEY } from "../../keys/policy.js";
import { recordUsage } from "../../keys/usage.js";
import { usageDeps, type Runtime } from "../../runtime/runtime.js";
import { callResult, fileCitations, fileSearchCallItem, fileSearchQueryFor, type FileSearchHit } from "../../tools/file-search/index.js";
import { searchArguments } from "../../tools/search/index.js";
import { fileSearchResultsText } from "../../translate/hosted-calls.js";
import type { Item } from "../../wire/types.js";
import { timedTool } from "./mcp-runner.js";
import type { FileSearchFunction } from "./toolbox.js";

export class FileSearches {
  private readonly hits: FileSearchHit[] = [];

  constructor(
    private readonly rt: Runtime,
    private readonly owner: string | null,
    private readonly signal: AbortSignal,
  ) {}

  /** The `file_search_call` of a call the model made, before it runs (its query read from the arguments). */
  open(id: string, args: string): Item {
    const query = searchArguments(args);
    return fileSearchCallItem(id, query ? [query] : [], "in_progress", null) as unknown as Item;
  }

  /**
   * Runs one search: the finished item (its results kept whole; the client sees them only when
   * included) and, in `outputs`, the text the model reads.
   */
  async run(open: Item, fn: FileSearchFunction, outputs: Map<string, string>): Promise<Item> {
    const id = open.id as string;
    const query = (open.queries as string[])[0];
    if (!query) {
      outputs.set(id, "The file search was not run: the call named no query.");
      this.count("error", 0);
      return fileSearchCallItem(id, [], "failed", null) as unknown as Item;
    }
    try {
      const found = await timedTool(this.rt, "file_search_call", "files", () => fn.library.search(fileSearchQueryFor(fn.tool, fn.owner, query, this.signal)), (r) => (r ? "ok" : "error"));
      outputs.set(id, fileSearchResultsText(found.hits.map(callResult), this.hits.length + 1));
      this.hits.push(...found.hits);
      this.count(found.hits.length > 0 ? "ok" : "empty", found.embeddingTokens);
      return fileSearchCallItem(id, found.queries.length ? found.queries : [query], "completed", found.hits) as unknown as Item;
    } catch (err) {
      outputs.set(id, `The file search failed: ${(err as Error).message}`);
      this.count("error", 0);
      return fileSearchCallItem(id, [query], "failed", null) as unknown as Item;
    }
  }

  /** The file citations of an answer, against the hits so far; null before any. */
  citer(): ((text: string) => ResponseOutputText.FileCitation[]) | null {
    if (this.hits.length === 0) return null;
    const hits = this.hits.slice();
    return (text) => fileCitations(text, hits);
  }

  private count(outcome: "ok" | "empty" | "error", embeddingTokens: number): void {
    const m = this.rt.metrics;
    m.fileSearches.inc({ outcome });
    if (embeddingTokens <= 0) return;
    const key = this.owner ?? NO_KEY;
    m.fileSearchEmbeddingTokens.inc({ key }, embeddingTokens);
    recordUsage(usageDeps(this.rt), key, embeddingModel(this.rt), 0, embeddingTokens, 0);
  }
}

/**
 * The model whose `/v1/embeddings` the queries are embedded with (`tools.file_search.embedding_model`,
 * which the Files room's config adds): the name the key's usage counts their tokens under.
 */
function embeddingModel(rt: Runtime): string {
  const fs = (rt.config.tools as { file_search?: { embedding_model?: unknown } }).file_search;
  return typeof fs?.embedding_model === "string" ? fs.embedding_model : "file_search";
}
