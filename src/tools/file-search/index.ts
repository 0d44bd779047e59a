/**
 * The hosted `file_search` tool's pure parts: the request's tool checked and turned into a query
 * against the router's `FileLibrary` (`library.ts`, the contract with the room that keeps the
 * files), and what the model and the client see of a search. The tool loop calls this.
 */
export type { FileLibrary, FileSearchHit, FileSearchOutcome, FileSearchQuery, StoredFileContent } from "./library.js";
export { FILE_SEARCH_FUNCTION, callResult, fileCitations, fileSearchCallItem } from "./output.js";
export { DEFAULT_MAX_RESULTS, checkFileSearchTool, fileSearchQueryFor, isFileSearchType, type FileSearchToolParam } from "./tool.js";
