/**
 * Fitting a request into a model's context window (`models.<name>.context_window`), as
 * OpenAI's `truncation` does:
 * - `"auto"`: the oldest turns are dropped until the estimated input fits. A turn runs from
 *   one user message to the next, so a tool call and its output (always inside one turn)
 *   are never split. System and developer messages are kept, and so is the newest turn
 *   (from the last user message on). What still does not fit is a 400, as below.
 * - `"disabled"` (the default): an input over the window is OpenAI's 400
 *   `context_length_exceeded`, not whatever error the backend would have given.
 * The estimate is the router's documented one (ESTIMATE_CHARS_PER_TOKEN characters a token,
 * plus MESSAGE_OVERHEAD per item); instructions and tools count too. Pure: items in, items out.
 */
import type { CreateResponseRequest, Item, JsonObject } from "../wire/types.js";
import { untranslatable } from "./errors.js";

export const ESTIMATE_CHARS_PER_TOKEN = 4;
export const MESSAGE_OVERHEAD = 3;

export interface FitOptions {
  contextWindow: number;
  truncation: unknown;
  instructions?: unknown;
  tools?: unknown;
  /** How many leading items are replayed history (kept in step with what is dropped). */
  historyItems: number;
}

export interface Fitted {
  items: Item[];
  historyItems: number;
  /** How many items were left out. */
  dropped: number;
}

export const contextLengthExceeded = () =>
  untranslatable("Your input exceeds the context window of this model. Please adjust your input and try again.", "input", "context_length_exceeded");

/** The estimated input tokens of one item. */
export function itemTokens(item: Item): number {
  return Math.ceil(itemChars(item) / ESTIMATE_CHARS_PER_TOKEN) + MESSAGE_OVERHEAD;
}

function itemChars(item: Item): number {
  const content = item.content;
  if ((item.type === "message" || item.type === undefined) && typeof content === "string") return content.length;
  if ((item.type === "message" || item.type === undefined) && Array.isArray(content)) {
    let n = 0;
    for (const part of content as JsonObject[]) {
      if (typeof part?.text === "string") n += part.text.length;
      else if (typeof part?.refusal === "string") n += part.refusal.length;
      else n += JSON.stringify(part).length;
    }
    return n;
  }
  return JSON.stringify(item).length;
}

const isPinned = (item: Item) => (item.type === "message" || item.type === undefined) && (item.role === "system" || item.role === "developer");
const isUserMessage = (item: Item) => (item.type === "message" || item.type === undefined) && item.role === "user";

/** The items to send: all of them when they fit, else per `truncation` (see above). */
export function fitContext(items: Item[], opts: FitOptions): Fitted {
  const fixed = Math.ceil(((typeof opts.instructions === "string" ? opts.instructions.length : 0) + (opts.tools ? JSON.stringify(opts.tools).length : 0)) / ESTIMATE_CHARS_PER_TOKEN);
  const costs = items.map(itemTokens);
  let total = fixed;
  for (const c of costs) total += c;
  if (total <= opts.contextWindow) return { items, historyItems: opts.historyItems, dropped: 0 };
  if (opts.truncation !== "auto") throw contextLengthExceeded();

  let newest = -1;
  for (let i = items.length - 1; i >= 0; i--) {
    if (isUserMessage(items[i]!)) {
      newest = i;
      break;
    }
  }
  const drop = new Array<boolean>(items.length).fill(false);
  // Turns before the newest, oldest first: [start, end) from one user message to the next.
  let start = 0;
  while (start < newest && total > opts.contextWindow) {
    let end = start + 1;
    while (end < newest && !isUserMessage(items[end]!)) end++;
    for (let i = start; i < end; i++) {
      if (isPinned(items[i]!)) continue;
      drop[i] = true;
      total -= costs[i]!;
    }
    start = end;
  }
  if (total > opts.contextWindow) throw contextLengthExceeded();
  const kept: Item[] = [];
  let historyItems = 0;
  items.forEach((item, i) => {
    if (drop[i]) return;
    kept.push(item);
    if (i < opts.historyItems) historyItems++;
  });
  return { items: kept, historyItems, dropped: items.length - kept.length };
}

/** A request's items fitted to the model's context window when one is configured (as is otherwise). */
export function fitRequest(req: CreateResponseRequest, items: Item[], historyItems: number, contextWindow: number | undefined): { items: Item[]; historyItems: number } {
  if (contextWindow === undefined) return { items, historyItems };
  return fitContext(items, { contextWindow, truncation: req.truncation, instructions: req.instructions, tools: req.tools, historyItems });
}
