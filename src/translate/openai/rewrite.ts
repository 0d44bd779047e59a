/**
 * What src/translate/openai/ holds:
 * `kind: openai`: the native request body (`store: false`, history replayed), id and field
 * rewriting of objects (`rewrite.ts`), the native event stream state machine (`stream.ts`) and
 * which frames of a read it passes on as their bytes (`passable.ts`)
 */
import { isAnthropicThinking } from "../anthropic/types.js";
import { hostedItemsForModel } from "../hosted-calls.js";
import { ENCRYPTED_REASONING, isBareReasoning } from "../../wire/protocol.js";
import type { Clock } from "../../wire/clock.js";
import type { CreateResponseRequest, Item, JsonObject, ResponseObject } from "../../wire/types.js";

/** What the router owns in a native Response: its id and the fields it handles itself. */
export interface RouterFields {
  id: string;
  previousResponseId: string | null;
  store: boolean;
  background: boolean;
  /** The conversation the response belongs to (the router keeps it; upstream never sees it). */
  conversation?: { id: string };
  /** Replaces upstream's `model` when the client used an alias; undefined keeps upstream's value. */
  model?: string;
  /** The router asked for encrypted reasoning the client did not: hide it from the client. */
  hideEncryptedReasoning: boolean;
  /**
   * The router's skeleton of this response: fields an upstream snapshot lacks are filled
   * from it, so the router's own snapshots (background `queued`, cancelled) and the
   * upstream's carry the same fields.
   */
  defaults?: ResponseObject;
  /** Stamps `completed_at` on a completed response whose upstream left it out (an older OpenAI-compatible server). */
  clock: Clock;
}

/**
 * Builds the body sent to an OpenAI-hosted endpoint: the client's body with
 * unknown fields intact, except what the router owns: `store: false` always,
 * no `previous_response_id` (the history is replayed as input), no `background`
 * (the router runs background jobs itself), the upstream model name, and
 * encrypted reasoning requested when the history must be replayable.
 */
export function nativeRequestBody(
  req: CreateResponseRequest,
  opts: { upstreamModel: string; history: Item[]; stream: boolean; wantEncryptedReasoning: boolean; resolved?: Item[] },
): JsonObject {
  // Left out by a rest pattern, not deleted after: an object with a member deleted is a dictionary
  // for V8, and JSON.stringify takes its slow path over it.
  const { previous_response_id: _previous, conversation: _conversation, background: _background, router: _router, ...client } = req as JsonObject;
  const body: JsonObject = { ...client, model: opts.upstreamModel, store: false, stream: opts.stream };
  // One look over the input for what needs more than passing it on (most inputs have none).
  const special = Array.isArray(req.input) && req.input.some((i) => i.type === "item_reference" || i.type === "file_search_call" || isBareReasoning(i));
  const references = special && (req.input as Item[]).some((i) => i.type === "item_reference" || isBareReasoning(i));
  const searched = special && (req.input as Item[]).some(isFileSearchCall);
  if (opts.history.length > 0 || references || searched) {
    let current = typeof req.input === "string" ? [{ type: "message", role: "user", content: req.input }] : (req.input ?? []);
    if (references) current = withReferencedItems(current, opts.resolved ?? []);
    if (searched) current = replayableItems(fileSearchesAsCalls(current));
    body.input = [...replayableItems(fileSearchesAsCalls(opts.history)), ...current];
  }
  if (opts.wantEncryptedReasoning) {
    const include = Array.isArray(req.include) ? req.include : [];
    if (!include.includes(ENCRYPTED_REASONING)) body.include = [...include, ENCRYPTED_REASONING];
  }
  if (!opts.stream && body.stream_options !== undefined) body.stream_options = undefined; // left out of the JSON
  return body;
}

const FILE_SEARCH_CALLS: ReadonlySet<string> = new Set(["file_search_call"]);

function isFileSearchCall(item: Item): boolean {
  return item.type === "file_search_call";
}

/**
 * `file_search_call` items as the `file_search` function call and output they were: the router
 * ran them over its own vector stores, which OpenAI cannot see (it would search its own, or refuse).
 */
function fileSearchesAsCalls(items: Item[]): Item[] {
  return items.some(isFileSearchCall) ? hostedItemsForModel(items, { types: FILE_SEARCH_CALLS }) : items;
}

/**
 * The input with each `item_reference` (and each reasoning item sent back without its
 * encrypted_content) replaced by the item it names (found in `resolved`, the input the router
 * resolved), as history is replayed: upstream stores nothing, so it could not resolve the id itself.
 */
function withReferencedItems(input: Item[], resolved: Item[]): Item[] {
  const out: Item[] = [];
  for (const item of input) {
    if (isBareReasoning(item)) {
      const found = resolved.find((r) => r.id === item.id && r.type === "reasoning" && r.encrypted_content);
      if (found) out.push(...replayableItems([found]));
      else out.push(item);
    } else if (item.type !== "item_reference") out.push(item);
    else {
      const found = resolved.find((r) => r.id === item.id && r.type !== "item_reference");
      if (found) out.push(...replayableItems([found]));
    }
  }
  return out;
}

/**
 * Items whose id the Responses input schema requires (the openai package's `ResponseInputItem`):
 * the hosted tools' records carry their whole content, so OpenAI takes them back by value.
 */
const ID_REQUIRED: ReadonlySet<string> = new Set(["mcp_list_tools", "mcp_call", "mcp_approval_request", "web_search_call", "file_search_call", "code_interpreter_call", "image_generation_call", "computer_call", "local_shell_call"]);

/**
 * History items as OpenAI accepts them with `store: false`: it cannot look up
 * ids it never stored, so ids are dropped, except on reasoning items that carry
 * their encrypted content (which OpenAI decrypts) and on the items whose id the
 * input schema requires (ID_REQUIRED); reasoning without it (from a
 * chat backend, or an old turn) is dropped, and so is an Anthropic thinking block
 * (a turn served by `kind: anthropic`: OpenAI cannot read it). Output-only fields are removed.
 */
export function replayableItems(items: Item[]): Item[] {
  const out: Item[] = [];
  for (const item of items) {
    if (item.type === "reasoning") {
      if (typeof item.encrypted_content === "string" && item.encrypted_content && !isAnthropicThinking(item.encrypted_content)) {
        out.push({ type: "reasoning", id: item.id, summary: item.summary ?? [], encrypted_content: item.encrypted_content });
      }
      continue;
    }
    if (ID_REQUIRED.has(item.type as string)) {
      out.push(item);
      continue;
    }
    const { id: _id, ...rest } = item;
    if (item.type === "message" && Array.isArray(item.content)) {
      rest.content = (item.content as JsonObject[]).map((part) => {
        if (part.type !== "output_text") return part;
        const { logprobs: _l, ...p } = part;
        return p;
      });
    }
    out.push(rest as Item);
  }
  return out;
}

/**
 * Members V8 lets a parsed object take by computed key before it makes the object a dictionary
 * (its fast-properties soft limit): a sparse upstream response past it is rebuilt on the skeleton.
 */
const FILLED_IN_PLACE = 12;

/**
 * Puts the router's fields into a Response object from upstream and returns it: the same object,
 * changed, or for a sparse one (an OpenAI-compatible server that leaves most members out) a new
 * one with the skeleton's members and the upstream's values.
 */
export function applyRouterFields(upstream: JsonObject, f: RouterFields): ResponseObject {
  const obj = f.defaults ? withSkeleton(upstream, f.defaults) : upstream;
  obj.id = f.id;
  obj.previous_response_id = f.previousResponseId;
  obj.store = f.store;
  obj.background = f.background;
  if (f.conversation) obj.conversation = f.conversation;
  if (f.model !== undefined) obj.model = f.model;
  // OpenAI sends `user: null` when unset; the openai types (`user?: string`) and the router's other kinds leave it out.
  // Undefined rather than deleted: JSON leaves it out alike, and deleting a member that is not the
  // last would turn the object into a dictionary for V8, which every later read and JSON.stringify pays.
  if (obj.user === null) obj.user = undefined;
  // The upstream's own completed_at is kept; one that sent none completed when the router read it.
  if (obj.status === "completed" && typeof obj.completed_at !== "number") obj.completed_at = f.clock();
  return obj as ResponseObject;
}

/** `obj` with the members it lacks taken from the skeleton: in place, or past FILLED_IN_PLACE on a new object. */
function withSkeleton(obj: JsonObject, defaults: ResponseObject): JsonObject {
  let filled = 0;
  for (const key in defaults) {
    if (obj[key] !== undefined) continue;
    // The members filled so far hold the skeleton's values: the new object is the same response.
    if (++filled > FILLED_IN_PLACE) return { ...defaults, ...obj };
    obj[key] = defaults[key];
  }
  return obj;
}

/**
 * The search parts a client sees only when its request includes them (the stored copy keeps them,
 * so a later GET with `include` shows them, as OpenAI does), as bits: a web search's sources
 * (`web_search_call.action.sources`; `true` stands for this one) and a file search's results
 * (`file_search_call.results`: shown as null, as OpenAI shows them).
 */
export const HIDE_WEB_SOURCES = 1;
export const HIDE_FILE_RESULTS = 2;

type Replacer = (this: unknown, key: string, value: unknown) => unknown;

/** One replacer per combination, made once. */
const REPLACERS: (Replacer | undefined)[] = [];

/**
 * JSON.stringify replacer hiding encrypted reasoning the client did not ask for (only a reasoning
 * item's: a compaction item's encrypted_content is its content) and the search parts in `search`.
 */
function makeReplacer(hideEncrypted: boolean, search: number): Replacer {
  return function (this: unknown, key: string, value: unknown): unknown {
    const type = (this as { type?: unknown } | null)?.type;
    if (hideEncrypted && key === "encrypted_content" && type === "reasoning") return undefined;
    if (search & HIDE_WEB_SOURCES && key === "sources" && type === "search") return undefined;
    if (search & HIDE_FILE_RESULTS && key === "results" && type === "file_search_call") return null;
    return value;
  };
}

const searchBits = (hideSources: boolean | number): number => (hideSources === true ? HIDE_WEB_SOURCES : hideSources || 0);

/** The replacer that serialises a response's parts as the client should see them (undefined: all of it). */
function clientReplacer(hideEncrypted: boolean, hideSources: boolean | number = false): Replacer | undefined {
  const search = searchBits(hideSources);
  const k = (hideEncrypted ? 4 : 0) | search;
  if (k === 0) return undefined;
  return (REPLACERS[k] ??= makeReplacer(hideEncrypted, search));
}

/**
 * A response or event serialised as the client should see it (the object itself, which the
 * store keeps, is not touched). A replacer takes JSON.stringify
 * off its fast path (a JS call per key: most of an Anthropic stream's serialisation), so it is
 * used only when something is there to hide; otherwise the bytes are the same without it, and
 * `json`, the value's JSON when the caller made it already (for the store), is the answer.
 */
export function clientText(value: unknown, hide: boolean, hideSources: boolean | number = false, json?: string): string {
  const replacer = clientReplacer(hide, hideSources);
  if (replacer && hasHiddenParts(value, hide, hideSources)) return JSON.stringify(value, replacer);
  return json ?? JSON.stringify(value);
}

/**
 * Whether `clientReplacer(hide, hideSources)` would leave anything out of `value`: a reasoning
 * item's encrypted_content, a search action's sources, a file search's results, at any depth (as
 * the replacer looks).
 */
export function hasHiddenParts(value: unknown, hide: boolean, hideSources: boolean | number): boolean {
  if (typeof value !== "object" || value === null) return false;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (hasHiddenParts(value[i], hide, hideSources)) return true;
    return false;
  }
  const obj = value as Record<string, unknown>;
  const search = searchBits(hideSources);
  if (hide && obj.type === "reasoning" && obj.encrypted_content !== undefined) return true;
  if (search & HIDE_WEB_SOURCES && obj.type === "search" && obj.sources !== undefined) return true;
  if (search & HIDE_FILE_RESULTS && obj.type === "file_search_call" && obj.results != null) return true;
  for (const key in obj) {
    const v = obj[key];
    if (typeof v === "object" && v !== null && hasHiddenParts(v, hide, hideSources)) return true;
  }
  return false;
}
