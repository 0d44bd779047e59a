import type { FileStore } from "./files.js";
import { isFinished, TERMINAL_EVENTS } from "../wire/protocol.js";
import type { Item, ResponseObject, StreamEvent } from "../wire/types.js";
import type { RateLimiter } from "./limiter.js";
import type { KeyStore } from "./keys.js";
import type { UsageStore } from "./usage.js";

/**
 * What the router keeps per stored response. `input` is the full context the
 * response was generated from (the chained history plus this turn's input, every
 * item with an id), so chaining is `prev.input + prev.response.output + new input`
 * and GET /input_items lists exactly what the model saw.
 *
 * A store keeps each item once (chain.ts): it writes only what follows `basis.items` in
 * `input` (this turn's own input) and the output, with a link to where the history lives.
 */
export interface StoredResponse {
  response: ResponseObject;
  input: Item[];
  /** Name of the API key that created it; null when the router runs without keys. */
  owner: string | null;
  /** The endpoint that served it, so a follow-up turn can prefer it (routing affinity). */
  endpoint?: string;
  /** Where the first `basis.items` items of `input` come from; absent: every item is this turn's own. */
  basis?: HistoryBasis;
}

/**
 * The history a response builds on: a stored parent's whole context (its input, then its
 * output), or a conversation's items up to position `at` (its raw list length when read,
 * deleted items included, see ConversationStore.history).
 */
export type HistoryBasis = { response: string; items: number } | { conversation: string; at: number; items: number };

/**
 * Responses and their input items. Adapters: memory (bounded LRU + TTL) and Redis.
 * Every method rejects with a StoreUnavailableError when the backing store cannot
 * be reached, so callers can answer 503 instead of losing data silently.
 */
export interface ResponseStore {
  /**
   * Creates or replaces the record for response.id. `responseJson`, when given, is
   * `JSON.stringify(record.response)` already made by the caller (the client's answer):
   * the record is built around it instead of serialising the response again.
   */
  save(record: StoredResponse, responseJson?: string): Promise<void>;
  /**
   * Replaces the record only while its response is still open (its stored status is not
   * finished, see isFinished), in one atomic step, indexing items and refreshing the TTL as
   * save does. A response deleted meanwhile (on any instance) stays deleted: "missing". The
   * first final status stored wins: a late writer (a job whose lease lapsed and was failed on
   * another instance, a run that read its record just before a cancel) learns "finished" and
   * nothing is written.
   */
  saveIfOpen(record: StoredResponse): Promise<SaveIfOpenResult>;
  get(id: string): Promise<StoredResponse | null>;
  /** A live response's input by item id, for GET /input_items: a page loads the parts of the history it shows, not all of it. */
  inputIndex(id: string): Promise<InputIndex | null>;
  /**
   * An item of a stored response (its input or output) by the item's id, with the response's
   * owner (the caller decides who may read it); null when no live response holds it. Saves
   * index their items by id (the latest save naming an id wins); a deleted or expired
   * response's items are gone with it.
   */
  findItem(itemId: string): Promise<FoundItem | null>;
  /** True when something was deleted. */
  delete(id: string): Promise<boolean>;
  /** Cheap reachability check for /readyz. */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

/** A stored response's input items by position (see ResponseStore.inputIndex). */
export interface InputIndex {
  owner: string | null;
  /** Every input item's id, oldest first. */
  ids: (string | undefined)[];
  /** The items at these positions of `ids`, in that order (one store round trip). */
  load(at: number[]): Promise<Item[]>;
}

/** What saveIfOpen did: wrote the record, found it gone, or found it already finished. */
export type SaveIfOpenResult = "saved" | "missing" | "finished";

/** An item found by its id alone (`item_reference`), with the owner of the record holding it. */
export interface FoundItem {
  item: Item;
  owner: string | null;
}

/** The ids of a stored response's items (input, then output), as the item index keeps them. */
export function recordItemIds(record: StoredResponse): string[] {
  const ids: string[] = [];
  for (const item of record.input) if (typeof item.id === "string" && item.id) ids.push(item.id);
  for (const item of record.response.output as { id?: unknown }[]) if (typeof item.id === "string" && item.id) ids.push(item.id);
  return ids;
}

/** The item with that id in a stored response (its output first: the newest copy), with the record's owner. */
export function itemOfRecord(record: StoredResponse, itemId: string): FoundItem | null {
  const item = (record.response.output as StoredResponse["input"]).find((i) => i.id === itemId) ?? record.input.find((i) => i.id === itemId);
  return item ? { item, owner: record.owner } : null;
}

/** A conversation's own fields, as GET /v1/conversations/{id} returns them. */
export interface ConversationRecord {
  id: string;
  object: "conversation";
  created_at: number;
  metadata: Record<string, string>;
}

export interface StoredConversation {
  conversation: ConversationRecord;
  /** Name of the API key that created it; null when the router runs without keys. */
  owner: string | null;
  /** The endpoint that served its latest turn (routing affinity); null before the first. */
  endpoint: string | null;
}

/**
 * Conversations (the Conversations API) and their items, oldest first. Adapters: memory
 * and Redis; every write is atomic per conversation, so two instances appending turns to
 * one conversation never lose or interleave a turn. Records live `storage.ttl` after
 * their last write. Unreachable store: StoreUnavailableError, as for ResponseStore.
 */
export interface ConversationStore {
  create(record: StoredConversation, items: Item[]): Promise<void>;
  get(id: string): Promise<StoredConversation | null>;
  /** Replaces the metadata; null when the conversation does not exist. */
  update(id: string, metadata: Record<string, string>): Promise<StoredConversation | null>;
  /** True when something was deleted. */
  delete(id: string): Promise<boolean>;
  /** Appends items in one step; `endpoint`, when given, is recorded as the one that served them. False when the conversation does not exist. */
  append(id: string, items: Item[], endpoint?: string): Promise<boolean>;
  /** Every item, oldest first; null when the conversation does not exist. */
  items(id: string): Promise<Item[] | null>;
  /** The items (as items()) and the position after the last one, which a response's HistoryBasis names; null when the conversation does not exist. */
  history(id: string): Promise<ConversationHistory | null>;
  /** True when the item was there and is gone. */
  deleteItem(id: string, itemId: string): Promise<boolean>;
  /** An item of any live conversation by its id, with the conversation's owner; null when none holds it (see ResponseStore.findItem). */
  findItem(itemId: string): Promise<FoundItem | null>;
}

export interface ConversationHistory {
  items: Item[];
  /** Positions never move: a deleted item leaves its place empty, so `at` names the same items later. */
  at: number;
}

/** Response cache: canonical-request hash -> a completed response. Errors are misses. */
export interface ResponseCache {
  get(key: string): Promise<CachedResponse | null>;
  /** `responseJson`: `JSON.stringify(value.response)` already made by the caller (as for `ResponseStore.save`). */
  set(key: string, value: CachedResponse, ttlMs: number, responseJson?: string): Promise<void>;
  close(): Promise<void>;
}

export interface CachedResponse {
  response: ResponseObject;
}

export class StoreUnavailableError extends Error {
  constructor(detail: string) {
    super(detail);
    this.name = "StoreUnavailableError";
  }
}

// ---------------------------------------------------------------------------
// Background mode: event log and job queue (adapters: memory and Redis).
// ---------------------------------------------------------------------------

/**
 * The recorded stream events of background responses, so that
 * `GET /v1/responses/{id}?stream=true&starting_after=N` can resume from any instance.
 * Events are appended in strictly increasing `sequence_number` order.
 */
export interface EventLog {
  /** Records one event. Rejects with EventOrderError when sequence_number does not exceed the last one recorded. */
  append(responseId: string, event: StreamEvent): Promise<void>;
  /**
   * Records one event only if the response's log still exists, in one atomic step (Redis:
   * one script): a log deleted meanwhile (on any instance) stays deleted. False when it was
   * gone. Rejects with EventOrderError like append.
   */
  appendIfExists(responseId: string, event: StreamEvent): Promise<boolean>;
  /** Recorded events with sequence_number > afterSeq (use -1 for all), oldest first. */
  read(responseId: string, afterSeq: number): Promise<StreamEvent[]>;
  /**
   * Recorded events after afterSeq, then live ones as they are appended (on any instance),
   * ending after a terminal event (see isTerminalEvent) or when the signal aborts
   * (then it simply returns). Rejects with StoreUnavailableError if the store goes away.
   */
  follow(responseId: string, afterSeq: number, signal: AbortSignal): AsyncIterable<StreamEvent>;
  /** Drops a response's events (e.g. when the response is deleted). */
  delete(responseId: string): Promise<void>;
  close(): Promise<void>;
}

/** Events after which a response stream ends. OpenAI has no `response.cancelled` event: a
 * cancelled response ends with a lifecycle event whose `response.status` is "cancelled". */

export function isTerminalEvent(event: StreamEvent): boolean {
  if (TERMINAL_EVENTS.has(event.type) || event.type === "error") return true;
  if (!event.type.startsWith("response.")) return false;
  const response = event.response as { status?: unknown } | undefined;
  return typeof response === "object" && response !== null && isFinished(String(response.status)) && event.type !== "response.created";
}

export class EventOrderError extends Error {
  constructor(responseId: string, seq: number) {
    super(`event ${seq} for ${responseId} is not after the last recorded event`);
    this.name = "EventOrderError";
  }
}

export interface BackgroundJob {
  responseId: string;
  payload: unknown;
}

/** What a job handler learns about the run it is given. */
export interface JobContext extends BackgroundJob {
  /** 1 on the first run; higher when the job was re-delivered. */
  attempt: number;
  /** True when an earlier run of this job started and did not finish (its instance died
   * or was shut down and handed the job back). The service decides what to do: e.g.
   * "already streamed events -> mark failed with a clear error, else run again". */
  redelivered: boolean;
  /** How many times the job was found stalled (its worker stopped renewing the lock). */
  stalls: number;
}

export type JobHandler = (job: JobContext, signal: AbortSignal) => Promise<void>;

export interface JobHooks {
  /** Called before the handler for a re-delivered job; "skip" completes the job without running it. */
  onRedelivered?(job: JobContext): Promise<"run" | "skip">;
  /** The queue gave up on a job without running it to the end (stalled too often, or dropped
   * while queued because a memory-mode instance shut down). Called once, on one instance; the
   * service should mark the response failed so it is not left queued or in_progress. */
  onAbandoned?(responseId: string, reason: string): Promise<void> | void;
}

/** Why a job's signal aborted: read it from `signal.reason` (a JobAbortedError). */
export type JobAbortKind =
  /** cancel(responseId) was called (on any instance): mark the response cancelled. */
  | "cancelled"
  /** The instance is shutting down and the job will NOT run again (memory mode): mark it failed. */
  | "shutdown"
  /** The instance is shutting down and the job goes back to the queue for another instance
   * (Redis mode): stop without writing a terminal state. */
  | "handed_back";

export class JobAbortedError extends Error {
  readonly kind: JobAbortKind;
  constructor(kind: JobAbortKind) {
    super(`background job aborted: ${kind}`);
    this.name = "JobAbortedError";
    this.kind = kind;
  }
}

/** The JobAbortKind behind an aborted signal, or null. */
export function jobAbortKind(signal: AbortSignal): JobAbortKind | null {
  if (!signal.aborted) return null;
  return signal.reason instanceof JobAbortedError ? signal.reason.kind : "cancelled";
}

export interface JobQueue {
  /** Queues a job (keyed by responseId: enqueueing an id that is already queued or running is a no-op). */
  enqueue(job: BackgroundJob): Promise<void>;
  /** Starts taking jobs on this instance, at most `concurrency` at a time. Call once. */
  start(handler: JobHandler, concurrency: number, hooks?: JobHooks): void;
  /** Aborts the job's signal wherever it runs; a job not started yet will never run. */
  cancel(responseId: string): Promise<void>;
  /** Jobs waiting to start (memory: on this instance; Redis: in the shared queue, the same on every instance). */
  waitingCount(): Promise<number>;
  /** Stops taking jobs and waits up to deadlineMs for running ones; then memory mode aborts them
   * ("shutdown") and Redis mode hands them back to the queue ("handed_back"). */
  close(deadlineMs?: number): Promise<void>;
}

/** Connectivity of the backing store (always connected in memory mode). */
export interface StoreStatus {
  readonly connected: boolean;
  /** Returns an unsubscribe function. */
  onStatusChange(cb: (connected: boolean) => void): () => void;
}

/** What a Redis Cluster says of itself (CLUSTER INFO and CLUSTER NODES of the first node that answers). */
export interface ClusterState {
  /** `cluster_state` as the answering node sees it; `unreachable` when no node answered. */
  state: "ok" | "fail" | "unreachable";
  /** The nodes the cluster knows; `reachable`: connected to the others and not flagged failing. */
  nodes: { total: number; reachable: number; primaries: number; failing: string[] };
}

export interface Stores {
  kind: "memory" | "redis";
  responses: ResponseStore;
  conversations: ConversationStore;
  cache: ResponseCache;
  jobs: JobQueue;
  events: EventLog;
  /** Per-key rate limits and budgets (see limiter.ts). */
  limiter: RateLimiter;
  /** Token and request counts per key, model and UTC day (see usage.ts). */
  usage: UsageStore;
  /** The Files and Vector Stores records (see files.ts). */
  files: FileStore;
  /** The indexing jobs of vector store files (a queue of its own: `jobs` runs background responses). */
  fileJobs: JobQueue;
  /** API keys made by the admin API, kept hashed (see keys.ts). */
  keys: KeyStore;
  status: StoreStatus;
  /** On a Redis Cluster: the cluster's own view of itself (for /readyz and /health/backends). */
  cluster?: { read(): Promise<ClusterState> };
  close(): Promise<void>;
}
