/**
 * GET /v1/responses/{id}/input_items: the stored input as OpenAI lists it. Items are
 * stored as the client sent them (the model must see exactly that); the listing fills in
 * what OpenAI's own items always carry: `status` on messages, calls and call outputs, and
 * `annotations` / `logprobs` on `output_text` parts (typed clients read them).
 */
import type { ResponseItemList } from "openai/resources/responses/input-items";
import { invalidRequest } from "../../ops/errors.js";
import type { Item, JsonObject } from "../../wire/types.js";

const WITH_STATUS = new Set(["message", "function_call", "function_call_output", "custom_tool_call", "custom_tool_call_output"]);

/** One stored input item as OpenAI lists it (a copy when something is filled in). */
export function inputItemView(item: Item): Item {
  if (!WITH_STATUS.has(item.type ?? "")) return item;
  const out: Item = item.status === undefined ? { ...item, status: "completed" } : { ...item };
  if (item.type === "message") out.content = contentView(item.role === "assistant", item.content);
  return out;
}

function contentView(assistant: boolean, content: unknown): unknown {
  if (typeof content === "string") content = [{ type: assistant ? "output_text" : "input_text", text: content }];
  if (!Array.isArray(content)) return content;
  return (content as JsonObject[]).map((part) =>
    part.type === "output_text" && (part.annotations === undefined || part.logprobs === undefined)
      ? { ...part, annotations: part.annotations ?? [], logprobs: part.logprobs ?? [] }
      : part,
  );
}

export interface ListQuery {
  after?: string;
  limit?: string;
  order?: string;
}

/** One page of input items, as GET /v1/responses/{id}/input_items (and a conversation's item list) returns it. */
export function listPage(items: Item[], query: ListQuery, unknownAfter = (id: string) => `No input item with id '${id}' in this response.`): ResponseItemList {
  const bounds = pageBounds(items.map((i) => i.id as string | undefined), query, unknownAfter);
  return pageOf(bounds.at.map((k) => items[k]!), bounds.hasMore);
}

/**
 * The page a query names, from the items' ids alone (oldest first): the positions of its
 * items in the order listed, and whether more follow. A store that keeps a history in parts
 * loads only the parts these positions fall in (ItemsIndex).
 */
export function pageBounds(ids: readonly (string | undefined)[], query: ListQuery, unknownAfter = (id: string) => `No input item with id '${id}' in this response.`): { at: number[]; hasMore: boolean } {
  const order = query.order ?? "desc";
  if (order !== "asc" && order !== "desc") throw invalidRequest(`Invalid value: '${order}'. Supported values are: 'asc' and 'desc'.`, "order", "invalid_value");
  const limit = query.limit === undefined ? 20 : Number(query.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
    throw invalidRequest(`Invalid 'limit': expected an integer between 1 and 100, but got '${query.limit}'.`, "limit", "invalid_value");
  }
  const n = ids.length;
  const position = (k: number) => (order === "asc" ? k : n - 1 - k); // k-th in the listed order
  let start = 0;
  if (query.after) {
    // Ids are unique, except in a history built from a backend that repeats its item ids: the
    // last match then ends the walk (a first match would hand the SDK the same page forever).
    let at = -1;
    for (let k = n - 1; k >= 0; k--) {
      if (ids[position(k)] === query.after) {
        at = k;
        break;
      }
    }
    if (at === -1) throw invalidRequest(unknownAfter(query.after), "after", "invalid_value");
    start = at + 1;
  }
  const at: number[] = [];
  for (let k = start; k < Math.min(n, start + limit); k++) at.push(position(k));
  return { at, hasMore: start + limit < n };
}

/** A page of stored items, listed as OpenAI lists them. */
export function pageOf(items: Item[], hasMore: boolean): ResponseItemList {
  const data = items.map(inputItemView) as unknown as ResponseItemList["data"];
  return {
    object: "list",
    data,
    // Every stored item has an id (plan.ts gives one); an empty page has none to name.
    first_id: data[0]?.id ?? (null as unknown as string),
    last_id: data[data.length - 1]?.id ?? (null as unknown as string),
    has_more: hasMore,
  };
}
