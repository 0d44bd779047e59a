/**
 * The output items of the router's hosted tool runs (MCP, web search, file search) and the
 * stream events that carry them, typed by the openai package (`emitted` checks each event at
 * compile time). A search streams as OpenAI's does: `output_item.added`, `.in_progress`,
 * `.searching`, `.completed`, `output_item.done`.
 */
import type { ResponseOutputItem } from "openai/resources/responses/responses";
import type { CallResult, ListedTool } from "../../tools/mcp/index.js";
import { emitted } from "../../wire/emitted.js";
import type { Item, StreamEvent } from "../../wire/types.js";
import type { McpFunction } from "./toolbox.js";

type McpCallItem = ResponseOutputItem.McpCall;
type McpListItem = ResponseOutputItem.McpListTools;
type McpListedTool = ResponseOutputItem.McpListTools.Tool;
type ApprovalItem = ResponseOutputItem.McpApprovalRequest;

/** A listing; a tool's `description` and `annotations` are left out when it has none (strict clients such as the AI SDK refuse null there). */
export function listToolsItem(id: string, label: string, tools: ListedTool[], error?: string): Item {
  const listed = tools.map((t) => {
    const tool: McpListedTool = { name: t.name, input_schema: t.input_schema };
    if (typeof t.description === "string") tool.description = t.description;
    if (t.annotations != null) tool.annotations = t.annotations;
    return tool;
  });
  const item: McpListItem = { id, type: "mcp_list_tools", server_label: label, tools: listed };
  if (error !== undefined) item.error = error;
  return item as unknown as Item;
}

/** An `mcp_call` before it ran (what `output_item.added` carries). */
export function openCall(id: string, fn: McpFunction, args: string, approvalRequestId: string | null = null): Item {
  const item: McpCallItem = { id, type: "mcp_call", approval_request_id: approvalRequestId, arguments: args, error: null, name: fn.tool.name, output: null, server_label: fn.server.label, status: "in_progress" };
  return item as unknown as Item;
}

export function finishedCall(open: Item, result: CallResult): Item {
  return result.ok ? { ...open, output: result.output, status: "completed" } : { ...open, error: result.error, status: "failed" };
}

/** A call that will not run (the round bound or max_tool_calls was reached, or the response stopped). */
export function skippedCall(open: Item, why: string): Item {
  return { ...open, status: "incomplete", error: { type: "mcp_tool_execution_error", content: [{ type: "text", text: why }] } };
}

export function approvalRequest(id: string, fn: McpFunction, args: string): Item {
  const item: ApprovalItem = { id, type: "mcp_approval_request", arguments: args, name: fn.tool.name, server_label: fn.server.label };
  return item as unknown as Item;
}

/**
 * A web search as the stream opens it, before its query is known: OpenAI's own added
 * `web_search_call` carries no `action` yet (the openai type asks for one; the done item has it).
 */
export function openSearch(id: string): Item {
  return { id, type: "web_search_call", status: "in_progress" };
}

/** A file search as the stream opens it: no query yet (OpenAI's added item carries `queries: []`). */
export function openFileSearch(id: string): Item {
  return { id, type: "file_search_call", status: "in_progress", queries: [], results: null };
}

/** The first events of an item the stream opens (the model asked for a hosted tool). */
export function openedEvents(item: Item, outputIndex: number, seq: () => number): StreamEvent[] {
  const events = [emitted({ type: "response.output_item.added", output_index: outputIndex, item: item as unknown as ResponseOutputItem, sequence_number: seq() })];
  if (item.type === "mcp_call") events.push(emitted({ type: "response.mcp_call.in_progress", item_id: item.id as string, output_index: outputIndex, sequence_number: seq() }));
  if (item.type === "web_search_call") events.push(emitted({ type: "response.web_search_call.in_progress", item_id: item.id as string, output_index: outputIndex, sequence_number: seq() }));
  if (item.type === "file_search_call") events.push(emitted({ type: "response.file_search_call.in_progress", item_id: item.id as string, output_index: outputIndex, sequence_number: seq() }));
  return events;
}

/** A web or file search about to run. */
export function searchingEvent(item: Item, outputIndex: number, seq: () => number): StreamEvent {
  if (item.type === "file_search_call") return emitted({ type: "response.file_search_call.searching", item_id: item.id as string, output_index: outputIndex, sequence_number: seq() });
  return emitted({ type: "response.web_search_call.searching", item_id: item.id as string, output_index: outputIndex, sequence_number: seq() });
}

/** The closing events of a hosted item: the call's outcome, then `output_item.done`. */
export function closedEvents(item: Item, outputIndex: number, seq: () => number): StreamEvent[] {
  const id = item.id as string;
  const events: StreamEvent[] = [];
  if (item.type === "mcp_call" && item.status === "completed") events.push(emitted({ type: "response.mcp_call.completed", item_id: id, output_index: outputIndex, sequence_number: seq() }));
  if (item.type === "mcp_call" && item.status === "failed") events.push(emitted({ type: "response.mcp_call.failed", item_id: id, output_index: outputIndex, sequence_number: seq() }));
  if (item.type === "web_search_call" && item.status === "completed") events.push(emitted({ type: "response.web_search_call.completed", item_id: id, output_index: outputIndex, sequence_number: seq() }));
  if (item.type === "file_search_call" && item.status === "completed") events.push(emitted({ type: "response.file_search_call.completed", item_id: id, output_index: outputIndex, sequence_number: seq() }));
  events.push(emitted({ type: "response.output_item.done", output_index: outputIndex, item: item as unknown as ResponseOutputItem, sequence_number: seq() }));
  return events;
}

/** A finished call streamed whole (an approved call run before the model): added, in progress, arguments, outcome, done. */
export function wholeCallEvents(item: Item, outputIndex: number, seq: () => number): StreamEvent[] {
  const id = item.id as string;
  const open = { ...item, arguments: "", output: null, error: null, status: "in_progress" };
  return [
    ...openedEvents(open, outputIndex, seq),
    emitted({ type: "response.mcp_call_arguments.delta", item_id: id, output_index: outputIndex, delta: item.arguments as string, sequence_number: seq() }),
    emitted({ type: "response.mcp_call_arguments.done", item_id: id, output_index: outputIndex, arguments: item.arguments as string, sequence_number: seq() }),
    ...closedEvents(item, outputIndex, seq),
  ];
}

/** A tool listing streamed whole: added, in progress, completed or failed, done. */
export function listingEvents(item: Item, outputIndex: number, seq: () => number): StreamEvent[] {
  const id = item.id as string;
  const failed = typeof item.error === "string";
  return [
    emitted({ type: "response.output_item.added", output_index: outputIndex, item: { ...item, tools: [] } as unknown as ResponseOutputItem, sequence_number: seq() }),
    emitted({ type: "response.mcp_list_tools.in_progress", item_id: id, output_index: outputIndex, sequence_number: seq() }),
    failed
      ? emitted({ type: "response.mcp_list_tools.failed", item_id: id, output_index: outputIndex, sequence_number: seq() })
      : emitted({ type: "response.mcp_list_tools.completed", item_id: id, output_index: outputIndex, sequence_number: seq() }),
    emitted({ type: "response.output_item.done", output_index: outputIndex, item: item as unknown as ResponseOutputItem, sequence_number: seq() }),
  ];
}

/** Any other item streamed whole (an approval request): added, done. */
export function wholeItemEvents(item: Item, outputIndex: number, seq: () => number): StreamEvent[] {
  return [
    emitted({ type: "response.output_item.added", output_index: outputIndex, item: item as unknown as ResponseOutputItem, sequence_number: seq() }),
    emitted({ type: "response.output_item.done", output_index: outputIndex, item: item as unknown as ResponseOutputItem, sequence_number: seq() }),
  ];
}
