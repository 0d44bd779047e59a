/**
 * What src/responses/items/ holds:
 * `GET .../input_items` listing, `include` on retrieval (`include.ts`: what OpenAI returns only on
 * request, left out unless named) and `POST /v1/responses/input_tokens`
 */
/**
 * `include` on retrieval (GET /v1/responses/{id}, .../input_items, a conversation's items):
 * the router keeps every part of an item (a native reasoning item's `encrypted_content` is
 * needed to replay it), and shows the parts OpenAI returns only on request only when the
 * request names them. Items are copied only where something is left out.
 */
import type { ResponseIncludable } from "openai/resources/responses/responses";
import { invalidRequest } from "../../ops/errors.js";
import type { Item, JsonObject, ResponseObject } from "../../wire/types.js";

/** What `include` may name on the Responses routes (the openai package's `ResponseIncludable`). */
export const RESPONSE_INCLUDABLE: ReadonlySet<string> = new Set<ResponseIncludable>([
  "file_search_call.results",
  "web_search_call.results",
  "web_search_call.action.sources",
  "message.input_image.image_url",
  "computer_call_output.output.image_url",
  "code_interpreter_call.outputs",
  "reasoning.encrypted_content",
  "message.output_text.logprobs",
]);

/** 400 for a value that is not in `allowed`, as OpenAI answers it. */
export function checkInclude(include: readonly string[], allowed: ReadonlySet<string> = RESPONSE_INCLUDABLE): void {
  for (const v of include) {
    if (!allowed.has(v)) {
      throw invalidRequest(`Invalid value: '${v.slice(0, 64)}'. Supported values are: ${[...allowed].map((x) => `'${x}'`).join(", ")}.`, "include", "invalid_value");
    }
  }
}

/** One item as a client that asked for `include` sees it (the item itself when nothing is left out). */
export function includedView<T extends Item>(item: T, include: readonly string[]): T {
  switch (item.type) {
    case "reasoning":
      return "encrypted_content" in item && !include.includes("reasoning.encrypted_content") ? without(item, "encrypted_content") : item;
    case "message":
      return messageView(item, include);
    case "web_search_call":
      return webSearchView(item, include);
    case "file_search_call":
      return item.results != null && !include.includes("file_search_call.results") ? { ...item, results: null } : item;
    case "code_interpreter_call":
      return item.outputs != null && !include.includes("code_interpreter_call.outputs") ? { ...item, outputs: null } : item;
    case "computer_call_output": {
      const output = item.output as JsonObject | undefined;
      if (!output || typeof output !== "object" || !("image_url" in output) || include.includes("computer_call_output.output.image_url")) return item;
      return { ...item, output: without(output, "image_url") };
    }
    default:
      return item;
  }
}

/** A stored response as GET /v1/responses/{id} returns it for `include`. */
export function includedResponse(response: ResponseObject, include: readonly string[]): ResponseObject {
  const output = response.output as Item[];
  let changed = false;
  const shown = output.map((item) => {
    const v = includedView(item, include);
    if (v !== item) changed = true;
    return v;
  });
  return changed ? { ...response, output: shown } : response;
}

function messageView<T extends Item>(item: T, include: readonly string[]): T {
  if (!Array.isArray(item.content)) return item;
  const logprobs = include.includes("message.output_text.logprobs");
  const images = include.includes("message.input_image.image_url");
  let changed = false;
  const content = (item.content as JsonObject[]).map((part) => {
    if (!logprobs && part.type === "output_text" && Array.isArray(part.logprobs) && part.logprobs.length > 0) {
      changed = true;
      return { ...part, logprobs: [] };
    }
    if (!images && part.type === "input_image" && part.image_url != null) {
      changed = true;
      return without(part, "image_url");
    }
    return part;
  });
  return changed ? { ...item, content } : item;
}

function webSearchView<T extends Item>(item: T, include: readonly string[]): T {
  let out = item;
  const action = item.action as JsonObject | undefined;
  if (action && typeof action === "object" && "sources" in action && !include.includes("web_search_call.action.sources")) out = { ...out, action: without(action, "sources") };
  if ("results" in item && !include.includes("web_search_call.results")) out = without(out, "results");
  return out;
}

function without<T extends object>(obj: T, key: string): T {
  const { [key]: _left, ...rest } = obj as Record<string, unknown>;
  return rest as T;
}
