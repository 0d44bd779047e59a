/** The pure translation core: Responses <-> chat completions. No I/O, clock or randomness. */
export type {
  ChatChunkLike,
  ChatCompletionLike,
  ChatRequestBody,
  ChatTool,
  ToolIdentity,
  ToolNameMap,
} from "./chat-types.js";
export { emptyToolNameMap, namespaceKey } from "./chat-types.js";
export { emptyUsage, outputText, responseSkeleton } from "./skeleton.js";
export type { SkeletonMeta } from "./skeleton.js";
export { normalizeInput, responsesToChatRequest } from "./request.js";
export type { ChatRequestOptions, ChatRequestResult } from "./request.js";
export { chatCompletionToResponse, chatMessageToOutputItems, chatUsageToResponses, terminalFromFinishReason } from "./response.js";
export { ChatStreamTranslator } from "./stream.js";
export type { StreamTranslatorOptions } from "./stream.js";
export { responseToEvents } from "./replay.js";
export { chatNameFor, identityFor, joinedToolName } from "./tool-names.js";
export type { CompactionOptions } from "./request-input.js";
export { DEFAULT_SUMMARY_PROMPT, SUMMARY_PREFIX, keptUserMessages, messageText, summaryMessageText, supersededByCompaction } from "./compaction.js";
