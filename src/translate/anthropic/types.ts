/**
 * The Messages API shapes the core builds and reads, as the installed @anthropic-ai/sdk types
 * them (type-only: the core stays pure), plus the router's encoding of thinking blocks in a
 * reasoning item's `encrypted_content`.
 */
import type { MessageCreateParamsBase, RedactedThinkingBlockParam, ThinkingBlockParam } from "@anthropic-ai/sdk/resources/messages/messages";

export type {
  ContentBlockParam,
  DocumentBlockParam,
  ImageBlockParam,
  Message,
  MessageParam,
  RawMessageStreamEvent,
  RedactedThinkingBlockParam,
  TextBlockParam,
  ThinkingBlockParam,
  Tool,
  ToolChoice,
  ToolResultBlockParam,
  ToolUseBlockParam,
  Usage,
} from "@anthropic-ai/sdk/resources/messages/messages";

/**
 * The body sent to POST /v1/messages. `temperature`/`top_p` exist only on API versions that
 * take them (version.ts); the SDK's current types no longer list them.
 */
export type MessagesRequest = MessageCreateParamsBase & { temperature?: number; top_p?: number; stream?: boolean };

/** A thinking block as the next turn must send it back, byte for byte. */
export type ThinkingParam = ThinkingBlockParam | RedactedThinkingBlockParam;

const PREFIX = "anthropic.";

/**
 * A thinking block as a reasoning item's `encrypted_content`: the whole block (thinking text and
 * signature, or redacted data) as JSON in base64, so it comes back exactly as Anthropic sent it
 * whatever a client does to the item's visible text.
 */
export function encodeThinking(block: ThinkingParam): string {
  const json = block.type === "thinking" ? { type: block.type, thinking: block.thinking, signature: block.signature } : { type: block.type, data: block.data };
  return PREFIX + Buffer.from(JSON.stringify(json), "utf8").toString("base64");
}

/** An `encrypted_content` that carries an Anthropic thinking block (only an anthropic endpoint can take it). */
export const isAnthropicThinking = (encrypted: string): boolean => encrypted.startsWith(PREFIX);

/** The thinking block of an `encrypted_content` this core wrote, or null (OpenAI's, another provider's, altered). */
export function decodeThinking(encrypted: unknown): ThinkingParam | null {
  if (typeof encrypted !== "string" || !encrypted.startsWith(PREFIX)) return null;
  try {
    const j = JSON.parse(Buffer.from(encrypted.slice(PREFIX.length), "base64").toString("utf8")) as Record<string, unknown>;
    // An unsigned block (a compatible server that signs nothing: no signature in JSON, an empty one
    // streamed) is not sent back: the turn then lacks its thinking either way, so thinking is off for it.
    if (j.type === "thinking" && typeof j.thinking === "string" && typeof j.signature === "string" && j.signature) return { type: "thinking", thinking: j.thinking, signature: j.signature };
    if (j.type === "redacted_thinking" && typeof j.data === "string") return { type: "redacted_thinking", data: j.data };
  } catch {
    // not ours
  }
  return null;
}
