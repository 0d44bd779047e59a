import { createHash } from "node:crypto";
import { canonicalJson, keyedFields } from "../../wire/canonical-json.js";
import type { CreateResponseRequest, Item } from "../../wire/types.js";

/**
 * Request fields left out of the response-cache key: the ONLY ones. Everything else is
 * keyed, so a field the API gains later is keyed by default. A field belongs here only
 * if it cannot change the answer and a hit takes it from its own request
 * (ResponsesService.serveCached):
 * - `stream`, `stream_options`: how the answer is delivered, not what it says;
 * - `store`, `background`, `metadata`: the router's bookkeeping, echoed from the request;
 * - `router`: the router's own extension (already removed by buildPlan);
 * - `input`, `previous_response_id`, `conversation`: replaced by the rehydrated conversation (`input` below).
 * Echoed fields (`user`, `safety_identifier`, `prompt_cache_key`, `service_tier`) stay
 * keyed: a hit would otherwise echo another request's values.
 */
export const RESPONSE_CACHE_UNKEYED: ReadonlySet<string> = new Set(["stream", "stream_options", "store", "background", "metadata", "router", "input", "previous_response_id", "conversation"]);

/**
 * The response-cache key: a hash over the canonical request AFTER history
 * rehydration - the whole conversation the model would see, never the last
 * message alone. Item ids and statuses are left out (ids are random per turn) and
 * object keys are sorted, so JSON key order does not change the key.
 * Null (not cached) when an input file is given by `file_url`: what the model sees is the
 * file's content at the time of the call, which the URL does not name.
 */
export function cacheKey(req: CreateResponseRequest, model: string, items: Item[]): string | null {
  if (items.some(hasFileUrl)) return null;
  const keyed = keyedFields(req, RESPONSE_CACHE_UNKEYED);
  keyed.model = model;
  keyed.input = items.map(stripId);
  return createHash("sha256").update(canonicalJson(keyed)).digest("hex");
}

function stripId(item: Item): unknown {
  const { id: _id, status: _status, ...rest } = item;
  return rest;
}

function hasFileUrl(item: Item): boolean {
  const parts = Array.isArray(item.content) ? item.content : Array.isArray(item.output) ? item.output : null;
  return parts !== null && (parts as Item[]).some((p) => p?.type === "input_file" && typeof p.file_url === "string");
}

/**
 * Output items whose content came from a tool run outside the model (by the router's tool
 * loop, or by OpenAI for a hosted tool passed through): a listing, a call's result, search
 * results. A response holding one is never put in the response cache: the same request
 * later must run the tool again, not be served the old result.
 */
const TOOL_RUN_ITEMS: ReadonlySet<string> = new Set(["mcp_call", "mcp_list_tools", "web_search_call", "file_search_call", "code_interpreter_call", "image_generation_call"]);

/** Whether a completed response may be kept in the response cache (no tool ran for it). */
export function cacheableAnswer(response: { output: readonly { type?: string }[] }): boolean {
  return !response.output.some((item) => TOOL_RUN_ITEMS.has(item.type as string));
}
