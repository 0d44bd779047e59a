/**
 * What the model and the client see of a file search: the function the model calls in place of
 * the hosted `file_search` tool, the text it reads back, the `file_search_call` item (typed by the
 * openai package) and the `file_citation` annotations of an answer that cites what was found.
 */
import type { ResponseFileSearchToolCall, ResponseOutputText } from "openai/resources/responses/responses";
import { FILE_SEARCH_FUNCTION_NAME } from "../../translate/hosted-calls.js";
import { codePointIndex, numberMarkers } from "../search/index.js";
import type { FileSearchHit } from "./library.js";

type FileCitation = ResponseOutputText.FileCitation;

/**
 * The function tool a model is given in place of `file_search`: one `query` string (small
 * local models call that reliably). Its name is the one a replayed `file_search_call` is shown as.
 */
export const FILE_SEARCH_FUNCTION: { name: string; description: string; parameters: Record<string, unknown> } = {
  name: FILE_SEARCH_FUNCTION_NAME,
  description:
    "Search the user's uploaded files (a knowledge base) for passages relevant to a question. Returns numbered passages with the file they come from; cite the passages you use by their number in brackets, e.g. [1].",
  parameters: {
    type: "object",
    properties: { query: { type: "string", description: "What to look for: a question or keywords, including any exact names, identifiers or error codes." } },
    required: ["query"],
    additionalProperties: false,
  },
};

/** One hit as a `file_search_call` result. */
export function callResult(hit: FileSearchHit): ResponseFileSearchToolCall.Result {
  return { file_id: hit.file_id, filename: hit.filename, score: hit.score, text: hit.content.map((c) => c.text).join("\n"), attributes: hit.attributes };
}

/**
 * The `file_search_call` item. Its `results` are kept whole here (the stored response keeps them);
 * a client sees them only with `include: ["file_search_call.results"]` (null otherwise).
 */
export function fileSearchCallItem(id: string, queries: string[], status: ResponseFileSearchToolCall["status"], hits: FileSearchHit[] | null): ResponseFileSearchToolCall {
  return { id, type: "file_search_call", status, queries, results: hits ? hits.map(callResult) : null };
}

/**
 * The `file_citation` annotations of an answer: one for each `[n]` marker naming result n of
 * `hits` (numbered across the response's searches, as the model read them), at the marker's
 * start, and one for each mention of a found file's name, at the mention's end. `index` counts
 * Unicode code points. Files the answer neither numbers nor names are not cited.
 */
export function fileCitations(text: string, hits: readonly FileSearchHit[]): FileCitation[] {
  if (hits.length === 0 || text.length === 0) return [];
  const found: { at: number; hit: FileSearchHit }[] = [];
  for (const m of numberMarkers(text)) {
    for (const n of m.numbers) {
      const hit = hits[n - 1];
      if (n >= 1 && hit) found.push({ at: m.start, hit });
    }
  }
  const names = new Map<string, FileSearchHit>();
  for (const h of hits) if (h.filename && !names.has(h.filename)) names.set(h.filename, h);
  for (const [name, hit] of names) {
    for (let from = text.indexOf(name); from !== -1; from = text.indexOf(name, from + name.length)) {
      const end = from + name.length;
      // A whole name, not a part of a longer word or file name (`a.md` inside `data.md`).
      if (!isNameChar(text.charCodeAt(from - 1)) && !isNameChar(text.charCodeAt(end))) found.push({ at: end, hit });
    }
  }
  found.sort((a, b) => a.at - b.at);
  const index = codePointIndex(text);
  return found.map(({ at, hit }) => ({ type: "file_citation", file_id: hit.file_id, filename: hit.filename, index: index(at) }));
}

/** Letters, digits, `_` and `-` would continue a file name (a sentence's full stop after it would not). */
function isNameChar(c: number): boolean {
  if (Number.isNaN(c)) return false;
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 45;
}
