/** The pure translation core: Responses <-> chat completions. No I/O, clock or randomness. */
export type {
  ChatChunkLike,
  ChatCompletionLike,
  ChatRequestBody,
  ChatTool,
  ToolIdentity,
  ToolNameMap,
} from "./chat/chat-types.js";
export { emptyToolNameMap, namespaceKey } from "./chat/chat-types.js";
export { emptyUsage, failedResponse, outputText, responseSkeleton } from "./skeleton.js";
export type { SkeletonMeta } from "./skeleton.js";
export { normalizeInput, responsesToChatRequest } from "./chat/request.js";
export type { ChatRequestOptions, ChatRequestResult } from "./chat/request.js";
export { chatCompletionToResponse, chatMessageToOutputItems, chatUsageToResponses, terminalFromFinishReason, wantsReasoningSummary } from "./chat/response.js";
export type { FetchedFile, FileOptions } from "./chat/files.js";
export { ChatStreamTranslator, textOnlyContent } from "./chat/stream.js";
export { FrameShape } from "./frame-shape.js";
export type { StreamTranslatorOptions } from "./chat/stream.js";
export { responseToEvents } from "./replay.js";
export { chatNameFor, identityFor, joinedToolName, namedTools } from "./chat/tool-names.js";
export type { CompactionOptions } from "./chat/request-input.js";
export { DEFAULT_SUMMARY_PROMPT, SUMMARY_PREFIX, keptUserMessages, messageText, summaryMessageText, supersededByCompaction } from "./chat/compaction.js";
