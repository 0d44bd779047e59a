/**
 * A checker for the Responses stream grammar, as strict as openai-node's ResponseStream
 * (docs/protocol.md, "What strict clients throw on"), plus a driver that feeds events through
 * the real openai SDK client (`responses.stream()`) over an in-memory SSE body.
 */
import { isDeepStrictEqual } from "node:util";
import OpenAI from "openai";
import type { Item, StreamEvent } from "../../src/wire/types.js";

const LIFECYCLE = new Set(["response.created", "response.queued", "response.in_progress"]);
const TERMINAL = new Set(["response.completed", "response.incomplete", "response.failed"]);
const ITEM_EVENTS = new Set([
  "response.output_item.added",
  "response.output_item.done",
  "response.content_part.added",
  "response.content_part.done",
  "response.output_text.delta",
  "response.output_text.done",
  "response.refusal.delta",
  "response.refusal.done",
  "response.function_call_arguments.delta",
  "response.function_call_arguments.done",
  "response.reasoning_text.delta",
  "response.reasoning_text.done",
  "response.reasoning_summary_part.added",
  "response.reasoning_summary_part.done",
  "response.reasoning_summary_text.delta",
  "response.reasoning_summary_text.done",
  "response.compaction.compacting",
  "response.custom_tool_call_input.delta",
  "response.custom_tool_call_input.done",
  "response.mcp_list_tools.in_progress",
  "response.mcp_list_tools.completed",
  "response.mcp_list_tools.failed",
  "response.mcp_call.in_progress",
  "response.mcp_call.completed",
  "response.mcp_call.failed",
  "response.mcp_call_arguments.delta",
  "response.mcp_call_arguments.done",
  "response.web_search_call.in_progress",
  "response.web_search_call.searching",
  "response.web_search_call.completed",
  "response.file_search_call.in_progress",
  "response.file_search_call.searching",
  "response.file_search_call.completed",
  "response.output_text.annotation.added",
]);

/** Item-scoped events of the hosted tools and the item type each belongs to. */
const HOSTED_EVENT_ITEM: Record<string, string> = {
  "response.mcp_list_tools.in_progress": "mcp_list_tools",
  "response.mcp_list_tools.completed": "mcp_list_tools",
  "response.mcp_list_tools.failed": "mcp_list_tools",
  "response.mcp_call.in_progress": "mcp_call",
  "response.mcp_call.completed": "mcp_call",
  "response.mcp_call.failed": "mcp_call",
  "response.web_search_call.in_progress": "web_search_call",
  "response.web_search_call.searching": "web_search_call",
  "response.web_search_call.completed": "web_search_call",
  "response.file_search_call.in_progress": "file_search_call",
  "response.file_search_call.searching": "file_search_call",
  "response.file_search_call.completed": "file_search_call",
};

interface Tracked {
  item: Item & { id: string };
  parts: { type: string; text: string; open: boolean }[];
  summary: { text: string; open: boolean }[];
  args: string;
  done: Item | null;
}

export interface GrammarSummary {
  terminal: StreamEvent | null;
  /** Items as the done events delivered them, by output_index. */
  items: Item[];
}

function fail(event: StreamEvent | undefined, message: string): never {
  throw new Error(`grammar: ${message}${event ? ` (at seq ${event.sequence_number}, ${event.type})` : ""}`);
}

export function assertResponsesGrammar(events: StreamEvent[], opts: { startSequence?: number } = {}): GrammarSummary {
  if (events.length === 0) fail(undefined, "stream has no events");
  const first = events[0]!;
  if (first.type !== "response.created") fail(first, "first event must be response.created");
  const start = opts.startSequence ?? 0;
  const tracked: Tracked[] = [];
  const ids = new Set<string>();
  const callIds = new Set<string>();
  let terminal: StreamEvent | null = null;
  let responseId: string | null = null;

  events.forEach((e, n) => {
    const keys = Object.keys(e);
    if (keys[0] !== "type") fail(e, "payload key order: type must come first");
    if (keys[keys.length - 1] !== "sequence_number") fail(e, "payload key order: sequence_number must come last");
    if (e.sequence_number !== start + n) fail(e, `sequence_number ${e.sequence_number}, expected ${start + n}`);
    if (e.type === "error" || "error" in e) fail(e, "error events / top-level error keys are forbidden");
    if (terminal) fail(e, "event after the terminal event");

    if (LIFECYCLE.has(e.type) || TERMINAL.has(e.type)) {
      const r = e.response as { id?: string; output?: Item[]; status?: string };
      if (!r || typeof r.id !== "string") fail(e, "lifecycle event without response.id");
      if (responseId !== null && r.id !== responseId) fail(e, "response id changed");
      responseId = r.id!;
      if (LIFECYCLE.has(e.type)) {
        if (tracked.length && (r.output ?? []).length === 0) fail(e, "lifecycle event with empty output after items were added");
        if (r.status !== "in_progress" && r.status !== "queued") fail(e, `status ${r.status} in ${e.type}`);
      } else {
        terminal = e;
        checkTerminal(e, tracked);
      }
      return;
    }
    if (!ITEM_EVENTS.has(e.type)) fail(e, `unknown event type ${e.type}`);
    const oi = e.output_index as number;

    if (e.type === "response.output_item.added") {
      if (oi !== tracked.length) fail(e, `output_index ${oi}, expected ${tracked.length}`);
      const item = e.item as Item;
      if (typeof item?.id !== "string" || !item.id) fail(e, "item without id");
      if (ids.has(item.id)) fail(e, `duplicate item id ${item.id}`);
      ids.add(item.id);
      if (item.type === "function_call" || item.type === "custom_tool_call") {
        if (typeof item.call_id !== "string" || !item.call_id) fail(e, `${item.type} without call_id`);
        if (callIds.has(item.call_id)) fail(e, `duplicate call_id ${item.call_id}`);
        callIds.add(item.call_id);
        if (item.type === "function_call" && item.arguments !== "") fail(e, "function_call must be added with empty arguments");
        if (item.type === "custom_tool_call" && item.input !== "") fail(e, "custom_tool_call must be added with empty input");
      }
      if (item.type === "message" && (item.content as unknown[]).length !== 0) fail(e, "message must be added with empty content");
      if (item.type === "mcp_call" && item.arguments !== "") fail(e, "mcp_call must be added with empty arguments");
      tracked.push({ item: item as Tracked["item"], parts: [], summary: [], args: "", done: null });
      return;
    }

    const t = tracked[oi];
    if (!t) fail(e, `missing output at index ${oi}`);
    if (t.done) fail(e, "event for an item that is already done");
    if (e.type !== "response.output_item.done" && e.item_id !== t.item.id) fail(e, `item_id ${String(e.item_id)} != ${t.item.id}`);
    if (e.type === "response.output_text.annotation.added") {
      if (t.item.type !== "message" || !t.parts[e.content_index as number]) fail(e, "annotation for a missing text part");
      return;
    }
    const hostedType = HOSTED_EVENT_ITEM[e.type];
    if (hostedType) {
      if (t.item.type !== hostedType) fail(e, `${e.type} for a ${t.item.type} item`);
      return;
    }
    const ci = e.content_index as number;
    const part = t.parts[ci];
    switch (e.type) {
      case "response.content_part.added": {
        if (ci !== t.parts.length) fail(e, `content_index ${ci}, expected ${t.parts.length}`);
        const p = e.part as Item;
        const kind = p.type as string;
        const allowed = t.item.type === "reasoning" ? kind === "reasoning_text" : kind === "output_text" || kind === "refusal";
        if (!allowed) fail(e, `part ${kind} in a ${t.item.type} item`);
        t.parts.push({ type: kind, text: "", open: true });
        return;
      }
      case "response.output_text.delta":
      case "response.refusal.delta":
      case "response.reasoning_text.delta": {
        const want = { "response.output_text.delta": "output_text", "response.refusal.delta": "refusal", "response.reasoning_text.delta": "reasoning_text" }[e.type];
        if (!part || !part.open) fail(e, `missing content at index ${ci}`);
        if (part.type !== want) fail(e, `delta into a ${part.type} part`);
        if (e.type === "response.output_text.delta" && !Array.isArray(e.logprobs)) fail(e, "output_text.delta without logprobs array");
        part.text += e.delta as string;
        return;
      }
      case "response.output_text.done":
      case "response.refusal.done":
      case "response.reasoning_text.done": {
        if (!part || !part.open) fail(e, `missing content at index ${ci}`);
        const got = (e.type === "response.refusal.done" ? e.refusal : e.text) as string;
        if (got !== part.text) fail(e, `done text ${JSON.stringify(got)} != deltas ${JSON.stringify(part.text)}`);
        return;
      }
      case "response.content_part.done": {
        if (!part || !part.open) fail(e, `missing content at index ${ci}`);
        const p = e.part as Item;
        const text = p.type === "refusal" ? p.refusal : p.text;
        if (text !== part.text) fail(e, "content_part.done text differs from deltas");
        part.open = false;
        return;
      }
      case "response.reasoning_summary_part.added":
        if (e.summary_index !== t.summary.length) fail(e, "summary_index out of order");
        t.summary.push({ text: "", open: true });
        return;
      case "response.reasoning_summary_text.delta":
        t.summary[e.summary_index as number]!.text += e.delta as string;
        return;
      case "response.reasoning_summary_text.done":
      case "response.reasoning_summary_part.done":
        if (!t.summary[e.summary_index as number]) fail(e, "missing summary part");
        if (e.type.endsWith("text.done") && e.text !== t.summary[e.summary_index as number]!.text) fail(e, "summary text.done differs from deltas");
        if (e.type.endsWith("part.done")) {
          if ((e.part as Item)?.text !== t.summary[e.summary_index as number]!.text) fail(e, "summary part.done differs from deltas");
          t.summary[e.summary_index as number]!.open = false;
        }
        return;
      case "response.compaction.compacting":
        if (t.item.type !== "compaction") fail(e, "compaction.compacting for a non-compaction item");
        return;
      case "response.mcp_call_arguments.delta":
        if (t.item.type !== "mcp_call") fail(e, "mcp arguments delta for a non-mcp_call item");
        t.args += e.delta as string;
        return;
      case "response.mcp_call_arguments.done":
        if (t.item.type !== "mcp_call") fail(e, "mcp arguments done for a non-mcp_call item");
        if (e.arguments !== t.args) fail(e, "mcp_call_arguments.done differs from deltas");
        return;
      case "response.function_call_arguments.delta":
        if (t.item.type !== "function_call") fail(e, "arguments delta for a non-function_call item");
        t.args += e.delta as string;
        return;
      case "response.custom_tool_call_input.delta":
        if (t.item.type !== "custom_tool_call") fail(e, "custom input delta for a non-custom_tool_call item");
        t.args += e.delta as string;
        return;
      case "response.custom_tool_call_input.done":
        if (t.item.type !== "custom_tool_call") fail(e, "custom input done for a non-custom_tool_call item");
        if (e.input !== t.args) fail(e, "custom_tool_call_input.done differs from deltas");
        return;
      case "response.function_call_arguments.done":
        if (e.arguments !== t.args) fail(e, "arguments.done differs from deltas");
        if (e.name !== t.item.name) fail(e, "arguments.done name differs from the item");
        return;
      case "response.output_item.done": {
        const item = e.item as Item;
        if (item.id !== t.item.id) fail(e, "output_item.done id differs");
        if (item.type === "function_call" && (item.call_id !== t.item.call_id || item.arguments !== t.args)) fail(e, "function_call done differs");
        if (item.type === "custom_tool_call" && (item.call_id !== t.item.call_id || item.input !== t.args)) fail(e, "custom_tool_call done differs");
        if (item.type === "mcp_call" && item.arguments !== t.args) fail(e, "mcp_call done arguments differ from the deltas");
        if (item.type !== t.item.type) fail(e, "output_item.done type differs from the added item");
        if (item.type === "compaction" && (typeof item.encrypted_content !== "string" || !item.encrypted_content)) fail(e, "compaction item done without encrypted_content");
        if (t.parts.some((p) => p.open) || t.summary.some((p) => p.open)) fail(e, "item done with open parts");
        const content = (item.content ?? []) as Item[];
        if (item.type === "message" || item.type === "reasoning") {
          if (content.length !== t.parts.length) fail(e, "done item content count differs from parts");
          content.forEach((p, j) => {
            if ((p.type === "refusal" ? p.refusal : p.text) !== t.parts[j]!.text) fail(e, `done item part ${j} differs`);
          });
        }
        if (item.type === "reasoning") {
          const summary = (item.summary ?? []) as Item[];
          if (summary.length !== t.summary.length || summary.some((p, j) => p.text !== t.summary[j]!.text)) fail(e, "done reasoning summary differs from its parts");
        }
        t.done = item;
        return;
      }
    }
  });
  return { terminal, items: tracked.map((t) => t.done ?? t.item) };
}

function checkTerminal(e: StreamEvent, tracked: Tracked[]): void {
  const r = e.response as { output: Item[]; status: string; usage: Record<string, unknown> | null; error: unknown };
  const expectStatus = e.type.slice("response.".length);
  if (r.status !== expectStatus) fail(e, `terminal status ${r.status} in ${e.type}`);
  if (tracked.some((t) => !t.done)) fail(e, "terminal event with items still open");
  const built = tracked.map((t) => t.done);
  if (!isDeepStrictEqual(r.output, built)) fail(e, "terminal response.output differs from the items of the done events");
  if (expectStatus === "failed" && !(r.error && typeof r.error === "object")) fail(e, "response.failed without response.error");
  if (expectStatus !== "failed") {
    const u = r.usage as { input_tokens: unknown; output_tokens: unknown; total_tokens: unknown } | null;
    if (!u || ![u.input_tokens, u.output_tokens, u.total_tokens].every(Number.isInteger)) fail(e, "terminal usage must be integers");
  }
}

/** Serves `events` as an SSE body to a real openai client and returns what its ResponseStream built. */
export async function runThroughOpenAISdk(events: StreamEvent[]) {
  const body = events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join("");
  const client = new OpenAI({
    apiKey: "test",
    baseURL: "http://127.0.0.1:9/v1",
    maxRetries: 0,
    fetch: async () => new Response(body, { status: 200, headers: { "content-type": "text/event-stream" } }),
  });
  const stream = client.responses.stream({ model: "m", input: "hi" });
  const seen: string[] = [];
  stream.on("event", (ev) => seen.push(ev.type));
  const final = await stream.finalResponse();
  return { final, seen };
}
