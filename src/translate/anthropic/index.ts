/** The pure translation core of `kind: anthropic`: Responses <-> the Messages API. No I/O, clock or randomness. */
export { responsesToMessagesRequest } from "./request.js";
export type { AnthropicRequestOptions, AnthropicRequestResult, Effort } from "./request.js";
export { itemsToMessages } from "./request-input.js";
export { anthropicUsageToResponses, messageToResponse, terminalFromStopReason } from "./response.js";
export type { AnswerOptions } from "./response.js";
export { AnthropicStreamTranslator } from "./stream.js";
export { DeltaShape } from "./delta-shape.js";
export { DEFAULT_ANTHROPIC_VERSION, anthropicHeaders, modelBetaHeader, versionTraits } from "./version.js";
export { anthropicErrorBody, paramOf } from "./errors.js";
export { decodeThinking, encodeThinking } from "./types.js";
export type { Message, MessagesRequest, RawMessageStreamEvent } from "./types.js";
