import type { ModelTarget, RouterConfig } from "../../config/load.js";
import type { TraceCarrier, Tracing } from "../../tracing/index.js";
import { invalidRequest, notFound, responseNotFound } from "../../ops/errors.js";
import type { IdGenerator, IdPrefix } from "../../wire/ids.js";
import type { ApiKey } from "../../keys/policy.js";
import { targetsFor, type ModelConfig } from "../../runtime/models.js";
import { idInChain } from "../../store/chain.js";
import type { ConversationStore, HistoryBasis, ResponseStore, StoredConversation, StoredResponse } from "../../store/types.js";
import { normalizeInput, type FetchedFile } from "../../translate/index.js";
import type { CreateResponseRequest, Item } from "../../wire/types.js";
import { callStore, traced } from "./store-access.js";
import { resolveReferences, storedItemLookup, type LocalItems } from "./references.js";

/** Everything decided about a create request before any upstream is called. */
export interface Plan {
  req: CreateResponseRequest;
  cfg: RouterConfig;
  model: string;
  modelCfg: ModelConfig;
  targets: ModelTarget[];
  /** This turn's input items, each with an id. */
  input: Item[];
  /** Stored history this turn builds on (previous input + output), oldest first. */
  history: Item[];
  /** Where `history` is stored, so the stored response links to it instead of copying it; absent when it is not stored (a `store: false` parent). */
  basis?: HistoryBasis;
  owner: string | null;
  id: string;
  createdAt: number;
  previousResponseId: string | null;
  /** The conversation this turn reads its history from and is appended to. */
  conversationId: string | null;
  /** The endpoint that served the previous turn (routing affinity prefers it); null for none or when affinity is off. */
  preferEndpoint: string | null;
  store: boolean;
  background: boolean;
  stream: boolean;
  /** Serve from / fill the response cache. */
  useCache: boolean;
  /**
   * A compaction item the router made for this request (`context_management` crossed its
   * threshold, auto-compact.ts): the chat backend sees it after the input (so what it
   * summarises is left out) and it is the response's first output item.
   */
  compacted?: Item;
  /** Contents of the input's `file_url`s, by URL, fetched for a chat backend (responses/files/). */
  files?: Readonly<Record<string, FetchedFile>>;
  /** Contents of the input's `file_id`s, by id, read from the router's Files for every kind (responses/files/stored-files.ts). */
  storedFiles?: Readonly<Record<string, FetchedFile>>;
  /** Client headers a `kind: openai` upstream receives (the allow-listed ones, e.g. OpenAI-Beta). */
  upstreamHeaders?: Readonly<Record<string, string>>;
}

/**
 * Responses held outside the store, looked up before it for `previous_response_id` (and
 * their items for `item_reference`): a WebSocket connection's recent turns (so a
 * `store: false` turn chains on its socket).
 */
export interface HistorySource extends LocalItems {
  get(id: string): StoredResponse | undefined;
}

/** Resolves model, history and ids for a validated request. */
export async function buildPlan(
  body: CreateResponseRequest,
  deps: {
    cfg: RouterConfig;
    responses: ResponseStore;
    conversations: ConversationStore;
    ids: IdGenerator;
    now(): number;
    local?: HistorySource;
    tracing?: Tracing;
    upstreamHeaders?: Readonly<Record<string, string>>;
  },
  owner: string | null,
  key: ApiKey | null = null,
): Promise<Plan> {
  const { cfg } = deps;
  const { router: ext, ...req } = body as CreateResponseRequest & { router?: { cache?: boolean } };
  const { modelCfg, targets } = targetsFor(cfg, req.model, key);

  let history: Item[] = [];
  let basis: HistoryBasis | undefined;
  let lastEndpoint: string | null = null;
  const previousResponseId = req.previous_response_id ?? null;
  const conversationId = req.conversation == null ? null : typeof req.conversation === "string" ? req.conversation : (req.conversation as { id: string }).id;
  if (previousResponseId) {
    const prev = deps.local?.get(previousResponseId) ?? (await traced(deps.tracing, "history.load", () => loadOwned(deps.responses, previousResponseId, owner, "previous_response_id")));
    if (prev.response.status === "queued" || prev.response.status === "in_progress") {
      throw invalidRequest(`Previous response '${previousResponseId}' is still ${prev.response.status}; wait for it to finish.`, "previous_response_id", "previous_response_not_ready");
    }
    history = [...prev.input, ...prev.response.output];
    // A WebSocket's `store: false` turn is in no store: its child keeps the history whole.
    if (prev.response.store !== false) basis = { response: previousResponseId, items: history.length };
    lastEndpoint = prev.endpoint ?? null;
  } else if (conversationId) {
    // Both reads at once: the items wait on no answer of the first (another key's are read, then dropped by its 404).
    const [conv, items] = await Promise.all([
      traced(deps.tracing, "conversation.load", () => loadConversation(deps.conversations, conversationId, owner, "conversation")),
      traced(deps.tracing, "history.load", () => callStore(() => deps.conversations.history(conversationId))),
    ]);
    history = items?.items ?? [];
    if (items) basis = { conversation: conversationId, at: items.at, items: history.length };
    lastEndpoint = conv.endpoint;
    req.conversation = { id: conversationId }; // echoed in the Response as OpenAI does
  }
  const input = await resolveReferences(withIds(normalizeInput(req.input), deps.ids), history, storedItemLookup(deps, owner));
  if (input.length === 0 && history.length === 0 && !req.instructions && req.prompt == null) {
    throw invalidRequest("The request has no input for the model: send 'input' (or 'instructions').", "input", "missing_required_parameter");
  }

  const cacheByModel = modelCfg.cache?.enabled === true;
  return {
    req: req as CreateResponseRequest,
    cfg,
    model: req.model,
    modelCfg,
    targets,
    input,
    history,
    ...(basis ? { basis } : {}),
    owner,
    // In the chain of what it builds on: its whole history is found from its id alone (store/chain.ts).
    id: idInChain(deps.ids, previousResponseId ?? conversationId),
    createdAt: Math.floor(deps.now() / 1000),
    previousResponseId,
    conversationId,
    preferEndpoint: cfg.routing.affinity ? lastEndpoint : null,
    store: req.store !== false,
    background: req.background === true,
    stream: req.stream === true,
    useCache: ext?.cache ?? cacheByModel,
    upstreamHeaders: deps.upstreamHeaders,
  };
}

/** What a job carries; the rest (input, owner, ids) is in the stored record. */
export interface BackgroundPayload {
  /** The validated request, without the router's own extension. */
  req: CreateResponseRequest;
  /** How many of the record's input items are history; the rest is this turn's input. */
  historyItems: number;
  /** The endpoint routing affinity prefers (the one that served the previous turn). */
  preferEndpoint?: string | null;
  /** The id of the request that created the job, so the job's log lines carry it too. */
  requestId?: string;
  /** The trace context of the request that created the job (tracing on), so the job's span links to it. */
  trace?: TraceCarrier;
  /** The client headers a native upstream receives (Plan.upstreamHeaders). */
  upstreamHeaders?: Readonly<Record<string, string>>;
}

/** Rebuilds the run's plan from the stored record and the current config (the job may run on another instance). */
export function planFromRecord(cfg: RouterConfig, rec: StoredResponse, payload: BackgroundPayload): Plan {
  const { req, historyItems } = payload;
  const { modelCfg, targets } = targetsFor(cfg, req.model);
  return {
    req,
    cfg,
    model: req.model,
    modelCfg,
    targets,
    history: rec.input.slice(0, historyItems),
    input: rec.input.slice(historyItems),
    ...(rec.basis ? { basis: rec.basis } : {}),
    owner: rec.owner,
    id: rec.response.id,
    createdAt: rec.response.created_at,
    previousResponseId: typeof rec.response.previous_response_id === "string" ? rec.response.previous_response_id : null,
    conversationId: (rec.response.conversation as { id?: string } | undefined)?.id ?? null,
    preferEndpoint: payload.preferEndpoint ?? null,
    upstreamHeaders: payload.upstreamHeaders,
    store: true,
    background: true,
    stream: true,
    useCache: false,
  };
}

export const conversationNotFound = (id: string, param: string | null = null) => notFound(`Conversation with id '${id}' not found.`, param, null);

/** A conversation, or 404 when it is unknown or belongs to another API key (exactly like a missing one). */
export async function loadConversation(store: ConversationStore, id: string, owner: string | null, param: string | null = null): Promise<StoredConversation> {
  const rec = await callStore(() => store.get(id));
  if (!rec || (rec.owner !== null && rec.owner !== owner)) throw conversationNotFound(id, param);
  return rec;
}

/** A stored response, or 404 when it is unknown or belongs to another API key. */
export async function loadOwned(store: ResponseStore, id: string, owner: string | null, param: string | null = null): Promise<StoredResponse> {
  const rec = await callStore(() => store.get(id));
  // Another key's response is indistinguishable from a missing one.
  if (!rec || (rec.owner !== null && rec.owner !== owner)) throw responseNotFound(id, param);
  return rec;
}

const PREFIX: Record<string, IdPrefix> = { message: "msg", function_call: "fc", function_call_output: "fco", reasoning: "rs", custom_tool_call: "ctc" };

/** Gives every item an id (input_items lists them by id), copying only the items that need one. */
export function withIds(items: Item[], ids: IdGenerator): Item[] {
  return items.map((it) => {
    if (typeof it.id === "string" && it.id) return it;
    const { id: _missing, ...rest } = it;
    return { id: ids(PREFIX[it.type ?? "message"] ?? "item"), ...rest };
  });
}

/**
 * Item ids must be unique in a conversation: `after` cursors and the item routes find items
 * by id. A backend that repeats its output ids turn after turn, or a client re-sending items
 * with their ids, would otherwise make paging loop; such an item gets a fresh id. `taken`
 * holds the ids already used and gains the returned ones.
 */
export function uniqueIds<T extends Item>(items: T[], taken: Set<string | undefined>, ids: IdGenerator): T[] {
  return items.map((item) => {
    if (!taken.has(item.id)) {
      taken.add(item.id);
      return item;
    }
    const { id: _repeated, ...rest } = item;
    const fresh = withIds([rest], ids)[0] as T;
    taken.add(fresh.id);
    return fresh;
  });
}
