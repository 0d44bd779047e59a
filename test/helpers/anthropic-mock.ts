/**
 * An Anthropic Messages API on loopback for tests: the generic mock upstream (a real HTTP
 * server) answering /v1/messages with bodies built from the @anthropic-ai/sdk's own types
 * (a fixture that drifts from the API fails tsc), and a runtime check of every request the
 * router sent against the Messages request shape (fields, content blocks, alternation,
 * tool_use/tool_result pairing, at most four cache breakpoints).
 */
import { expect } from "vitest";
import type { ContentBlock, Message, MessageCreateParamsBase, RawMessageStreamEvent } from "@anthropic-ai/sdk/resources/messages/messages";
import { startMockUpstream, type MockUpstream, type RecordedRequest, type Reply } from "./mock-upstream.js";

export type Usage = Message["usage"];

export const usage = (o: Partial<Usage> = {}): Usage => ({
  input_tokens: 12,
  output_tokens: 6,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
  cache_creation: null,
  inference_geo: null,
  output_tokens_details: null,
  server_tool_use: null,
  service_tier: "standard",
  speed: null,
  ...o,
});

export function message(content: ContentBlock[], o: Partial<Message> = {}): Message {
  return { id: "msg_01XYZ", type: "message", role: "assistant", model: "claude-upstream", content, container: null, diagnostics: null, stop_details: null, stop_reason: "end_turn", stop_sequence: null, usage: usage(), ...o };
}

export const textBlock = (text: string): ContentBlock => ({ type: "text", text, citations: null });
export const thinkingBlock = (thinking: string, signature: string): ContentBlock => ({ type: "thinking", thinking, signature });
export const toolUseBlock = (id: string, name: string, input: unknown): ContentBlock => ({ type: "tool_use", id, name, input, caller: { type: "direct" } });

/** The stream Anthropic sends for a message: start, each block in pieces, delta with the stop reason and usage, stop (a ping in between). */
export function streamEvents(msg: Message): RawMessageStreamEvent[] {
  const events: RawMessageStreamEvent[] = [{ type: "message_start", message: { ...msg, content: [], stop_reason: null, usage: { ...msg.usage, output_tokens: 1 } } }];
  msg.content.forEach((block, index) => {
    if (block.type === "text") {
      events.push({ type: "content_block_start", index, content_block: { type: "text", text: "", citations: null } });
      for (const piece of split(block.text)) events.push({ type: "content_block_delta", index, delta: { type: "text_delta", text: piece } });
    } else if (block.type === "thinking") {
      events.push({ type: "content_block_start", index, content_block: { type: "thinking", thinking: "", signature: "" } });
      for (const piece of split(block.thinking)) events.push({ type: "content_block_delta", index, delta: { type: "thinking_delta", thinking: piece } });
      events.push({ type: "content_block_delta", index, delta: { type: "signature_delta", signature: block.signature } });
    } else if (block.type === "tool_use") {
      events.push({ type: "content_block_start", index, content_block: { ...block, input: {} } });
      for (const piece of split(JSON.stringify(block.input))) events.push({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: piece } });
    } else events.push({ type: "content_block_start", index, content_block: block });
    events.push({ type: "content_block_stop", index });
  });
  const u = msg.usage;
  events.push({
    type: "message_delta",
    delta: { stop_reason: msg.stop_reason, stop_sequence: null, stop_details: msg.stop_details, container: null },
    usage: { output_tokens: u.output_tokens, input_tokens: u.input_tokens, cache_creation_input_tokens: u.cache_creation_input_tokens, cache_read_input_tokens: u.cache_read_input_tokens, output_tokens_details: u.output_tokens_details, server_tool_use: null },
  });
  events.push({ type: "message_stop" });
  return events;
}

function split(text: string): string[] {
  if (text.length < 4) return [text];
  const mid = Math.floor(text.length / 2);
  return [text.slice(0, mid), text.slice(mid)];
}

/** SSE frames as Anthropic writes them: `event: <type>` then the data; a ping after the start. */
export function sseFrames(events: (RawMessageStreamEvent | { type: "ping" } | { type: "error"; error: { type: string; message: string } })[]): { event: string; data: unknown }[] {
  const frames = events.map((e) => ({ event: e.type, data: e }));
  frames.splice(1, 0, { event: "ping", data: { type: "ping" } });
  return frames;
}

/** A message as Anthropic streams it. */
export function streamReply(msg: Message): Reply {
  return { kind: "sse", frames: sseFrames(streamEvents(msg)) };
}

/** A reply for a message: streamed when the request asked for a stream. */
export function messageReply(msg: Message, req?: RecordedRequest): Reply {
  return req?.body?.stream ? { kind: "sse", frames: sseFrames(streamEvents(msg)) } : { kind: "json", body: msg };
}

/** An Anthropic error answer. */
export function anthropicError(status: number, type: string, text: string, headers: Record<string, string> = {}): Reply {
  return { kind: "json", status, body: { type: "error", error: { type, message: text }, request_id: "req_011" }, headers };
}

/** A mock answering /messages with `msg` (by default "Hello from Claude"), /messages/count_tokens and /models. */
export async function startAnthropicMock(): Promise<MockUpstream> {
  const mock = await startMockUpstream();
  mock.setDefault("/messages", (req) => messageReply(message([textBlock("Hello from Claude")]), req));
  mock.setDefault("/messages/count_tokens", { kind: "json", body: { input_tokens: 42 } });
  mock.setDefault("/models", { kind: "json", body: { data: [{ id: "claude-upstream", type: "model", display_name: "Claude", created_at: "2026-01-01T00:00:00Z" }], has_more: false, first_id: "claude-upstream", last_id: "claude-upstream" } });
  return mock;
}

const TOP_LEVEL = new Set<string>([
  "model", "max_tokens", "messages", "cache_control", "container", "diagnostics", "inference_geo", "metadata", "output_config", "service_tier", "speed", "stop_sequences", "stream", "system", "thinking", "tool_choice", "tools",
  // Older API versions only:
  "temperature", "top_p", "top_k",
] satisfies (keyof MessageCreateParamsBase | "temperature" | "top_p" | "top_k")[]);
const BLOCKS = new Set(["text", "image", "document", "thinking", "redacted_thinking", "tool_use", "tool_result"]);

/** Checks a request body the router sent against the Messages API's request shape. */
export function assertMessagesRequest(body: any, opts: { version?: string } = {}): void {
  expect(body && typeof body).toBe("object");
  for (const key of Object.keys(body)) expect(TOP_LEVEL.has(key), `unknown top-level field '${key}'`).toBe(true);
  expect(typeof body.model).toBe("string");
  expect(Number.isInteger(body.max_tokens) && body.max_tokens > 0, "max_tokens is a positive integer").toBe(true);
  if ((opts.version ?? "2026-10-21") >= "2026-10-21") for (const k of ["temperature", "top_p", "top_k"]) expect(body[k], `${k} is not sent on this version`).toBeUndefined();
  if (body.system !== undefined) for (const b of body.system) expect(b.type).toBe("text");
  expect(Array.isArray(body.messages) && body.messages.length > 0).toBe(true);
  let lastRole = "";
  let pendingToolUses: string[] = [];
  for (const [i, m] of body.messages.entries()) {
    expect(["user", "assistant", "system"]).toContain(m.role);
    if (m.role !== "system") {
      expect(m.role, `messages[${i}] alternates roles`).not.toBe(lastRole);
      lastRole = m.role;
    }
    const blocks = typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content;
    expect(Array.isArray(blocks) && blocks.length > 0, `messages[${i}] has content`).toBe(true);
    for (const b of blocks) {
      expect(BLOCKS.has(b.type), `block type ${b.type}`).toBe(true);
      if (b.type === "text") expect(typeof b.text === "string" && b.text.length > 0, "text blocks are non-empty").toBe(true);
      if (b.type === "tool_use") expect(m.role).toBe("assistant");
      // Anthropic's pattern for tool ids (a 400 "String should match pattern" otherwise).
      if (b.type === "tool_use") expect(b.id, "tool_use.id").toMatch(/^[a-zA-Z0-9_-]+$/);
      if (b.type === "tool_result") expect(b.tool_use_id, "tool_result.tool_use_id").toMatch(/^[a-zA-Z0-9_-]+$/);
      if (b.type === "tool_result") expect(m.role).toBe("user");
      if (b.type === "thinking") expect(typeof b.signature).toBe("string");
    }
    if (m.role === "user" && pendingToolUses.length) {
      const results = blocks.filter((b: any) => b.type === "tool_result").map((b: any) => b.tool_use_id);
      expect(results, `messages[${i}] answers every tool_use of the turn before`).toEqual(pendingToolUses);
      const firstOther = blocks.findIndex((b: any) => b.type !== "tool_result");
      if (firstOther >= 0) expect(blocks.slice(firstOther).some((b: any) => b.type === "tool_result"), "tool results come first").toBe(false);
    }
    pendingToolUses = m.role === "assistant" ? blocks.filter((b: any) => b.type === "tool_use").map((b: any) => b.id) : m.role === "user" ? [] : pendingToolUses;
  }
  for (const t of body.tools ?? []) {
    expect(typeof t.name).toBe("string");
    expect(t.input_schema?.type).toBe("object");
  }
  if (body.tool_choice) expect(["auto", "any", "tool", "none"]).toContain(body.tool_choice.type);
  if (body.thinking) expect(body.thinking.budget_tokens).toBeLessThan(body.max_tokens);
  expect(JSON.stringify(body).split('"cache_control"').length - 1, "at most four cache breakpoints").toBeLessThanOrEqual(4);
}

/** The requests a mock received on /messages, each checked against the Messages request shape. */
export function sentMessages(mock: MockUpstream, version?: string): any[] {
  const sent = mock.requests.filter((r) => r.path === "/messages").map((r) => r.body);
  for (const body of sent) assertMessagesRequest(body, { version });
  return sent;
}
