/**
 * Every Prometheus metric the router exports, named in this one file.
 *
 * One Registry per router instance (never prom-client's global default registry):
 * tests build several routers in one process and each must see only its own numbers.
 *
 * Conventions: prefix `responses_router_`, base units (seconds), counters end in
 * `_total`. The configured endpoint is the label `upstream` (not `endpoint`, which the
 * Prometheus Operator sets on every target and would shadow it). Label values come from small fixed sets (route templates, configured
 * model and endpoint names, enumerations below) - never request ids, users or text.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";

export const METRIC_PREFIX = "responses_router_";

export const ENDPOINT_STATES = ["healthy", "cooldown", "half_open"] as const;
export type EndpointState = (typeof ENDPOINT_STATES)[number];

/** Terminal background-job statuses (counted once each) and live ones (gauged). */
export const BACKGROUND_TERMINAL = ["completed", "failed", "cancelled", "incomplete"] as const;
export const BACKGROUND_ACTIVE = ["queued", "in_progress"] as const;

export const STREAM_CHUNK_KINDS = ["translated", "native"] as const;
export const CONFIG_RELOAD_RESULTS = ["ok", "error"] as const;
/** How a compaction was asked for: POST /v1/responses/compact, a `compaction_trigger` input item, `context_management` crossing its threshold. */
export const COMPACTION_TRIGGERS = ["compact", "trigger", "threshold"] as const;
export type CompactionTrigger = (typeof COMPACTION_TRIGGERS)[number];

/** Why a /v1/responses WebSocket closed: the client closed it (or went away), its time limit, shutdown, no pong, a message over the size limit, a binary frame, its key removed by a reload, a socket error. */
export const WEBSOCKET_CLOSE_REASONS = ["client", "connection_limit", "shutdown", "ping_timeout", "message_too_big", "binary_frame", "unauthorized", "error"] as const;
export type WebSocketCloseReason = (typeof WEBSOCKET_CLOSE_REASONS)[number];

/** Whole requests and upstream calls: LLM calls run from milliseconds to many minutes. */
const LATENCY_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600];
const TTFT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120];
/** Router's own cost per request: 50µs .. 100ms. */
const OVERHEAD_BUCKETS = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1];
const QUEUE_WAIT_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export interface Metrics {
  readonly registry: Registry;
  /** route: fixed template ("/v1/responses"); status: HTTP status as string; upstream: the configured endpoint last tried, "" when none was. */
  /** key: the api key's configured name ("" without keys). */
  readonly requests: Counter<"route" | "model" | "upstream" | "status" | "key">;
  readonly requestDuration: Histogram<"route" | "model" | "upstream">;
  readonly timeToFirstToken: Histogram<"model" | "upstream">;
  /** outcome: ok | error */
  readonly upstreamDuration: Histogram<"upstream" | "outcome">;
  /** Total request time minus time spent waiting on the upstream. */
  readonly overhead: Histogram<"route">;
  /** type: input | output | cached | reasoning */
  readonly tokens: Counter<"model" | "upstream" | "type" | "key">;
  readonly inFlight: Gauge<"upstream">;
  readonly maxConcurrency: Gauge<"upstream">;
  /** 1 when healthy or half-open, 0 in cooldown. Prefer setEndpointState() to keep it in step with endpointState. */
  readonly endpointUp: Gauge<"upstream">;
  /** One series per state; 1 for the current state, 0 for the others. */
  readonly endpointState: Gauge<"upstream" | "state">;
  readonly queueWait: Histogram<"model">;
  readonly poolRejections: Counter<"model">;
  /** reason: connect | timeout | status_5xx | status_429 | other */
  readonly retries: Counter<"model" | "upstream" | "reason">;
  readonly failovers: Counter<"model">;
  /** model: the model asked for; fallback: the configured fallback model that was tried next. */
  readonly fallbacks: Counter<"model" | "fallback">;
  /** Requests sent to an ejected endpoint because every untried endpoint of the pool was ejected. */
  readonly panicRouted: Counter<"model" | "upstream" | "outcome">;
  /** Follow-up turns that preferred the endpoint of their previous turn; result: hit (served there) | miss (full or unhealthy). */
  readonly affinity: Counter<"upstream" | "result">;
  /** result: hit | miss | error */
  readonly cache: Counter<"model" | "result">;
  /**
   * status: a terminal status (completed | failed | cancelled | incomplete). Named
   * background_jobs_finished_total so its family does not clash with the gauge background_jobs.
   */
  readonly backgroundJobs: Counter<"status">;
  /** status: queued | in_progress */
  readonly backgroundActive: Gauge<"status">;
  /** result: ok | error */
  readonly configReloads: Counter<"result">;
  readonly configLastReload: Gauge;
  /** store: responses | cache | jobs | events ...; op: get | put | delete ... */
  readonly storeErrors: Counter<"store" | "op">;
  readonly redisUp: Gauge;
  readonly droppedTools: Counter<"model" | "tool_type">;
  /** Hosted tool runs by the router. type: mcp_list_tools | mcp_call | web_search_call; server: an operator MCP server's label, a client MCP server's host, or the search provider; outcome: ok | error | timeout. */
  readonly toolCalls: Counter<"type" | "server" | "outcome">;
  readonly toolCallDuration: Histogram<"type" | "server">;
  /** kind: translated | native */
  readonly streamChunks: Counter<"kind">;
  /** Compactions done, by endpoint kind (chat: the router summarised; openai: passed through) and trigger (COMPACTION_TRIGGERS). */
  readonly compactions: Counter<"model" | "kind" | "trigger">;
  /** stage: before (the input the summary was written from, as the backend counted it) | after (kept user messages + summary, estimated; chat only). */
  readonly compactionTokens: Counter<"kind" | "trigger" | "stage">;
  /** transport: http (POST /v1/responses) | websocket (a response.create); status: the HTTP status, or the one an `error` event carries. */
  readonly responses: Counter<"transport" | "model" | "status">;
  /** Files uploaded (POST /v1/files) and their bytes, by purpose. */
  readonly filesUploaded: Counter<"purpose">;
  readonly fileBytesUploaded: Counter<"purpose">;
  /** Files removed and vector stores emptied because their `expires_after` passed (on a read or by the sweep), by object (file | vector_store). */
  readonly filesExpired: Counter<"object">;
  /** Vector store files indexed, by outcome (completed | failed | cancelled), and the chunks indexed. */
  readonly filesIndexed: Counter<"outcome">;
  readonly chunksIndexed: Counter;
  /** Indexing failures by cause (last_error.code: server_error | unsupported_file | invalid_file). */
  readonly indexingFailures: Counter<"code">;
  /** One vector store search (all its queries and stores), by ranker (hybrid | vector). */
  readonly fileSearchDuration: Histogram<"ranker">;
  /** Tokens the embedding model was sent, by use (index | query). */
  readonly embeddingTokens: Counter<"use">;
  readonly websocketConnections: Gauge;
  /** reason: one of WEBSOCKET_CLOSE_REASONS */
  readonly websocketCloses: Counter<"reason">;
  // The file_search tool the router runs in its tool loop (searches over the router's vector stores, by the responses path).
  /** file_search runs by outcome (ok: results found | empty: none | error). */
  readonly fileSearches: Counter<"outcome">;
  /** Tokens the file_search queries' embeddings cost, by api key name. */
  readonly fileSearchEmbeddingTokens: Counter<"key">;
}

export interface CreateMetricsOptions {
  /**
   * Node process metrics (CPU, memory, event loop, GC) under prom-client's standard names
   * (process_*, nodejs_*), unprefixed so stock Node.js dashboards match. Default true.
   */
  collectDefault?: boolean;
}

export function createMetrics(opts: CreateMetricsOptions = {}): Metrics {
  const registry = new Registry();
  const registers = [registry];
  const p = METRIC_PREFIX;

  const counter = <L extends string>(name: string, help: string, labelNames: readonly L[]) =>
    cachedCells(new Counter<L>({ name: p + name, help, labelNames, registers }));
  const gauge = <L extends string>(name: string, help: string, labelNames: readonly L[]) =>
    cachedCells(new Gauge<L>({ name: p + name, help, labelNames, registers }));
  const histogram = <L extends string>(name: string, help: string, labelNames: readonly L[], buckets: number[]) =>
    cachedCells(new Histogram<L>({ name: p + name, help, labelNames, buckets, registers }));

  const m: Metrics = {
    registry,
    requests: counter("requests_total", "HTTP requests answered, by route template, model, upstream (the endpoint last tried), status code and api key name.", [
      "route",
      "model",
      "upstream",
      "status",
      "key",
    ]),
    requestDuration: histogram(
      "request_duration_seconds",
      "Time from request received to response finished (last byte of a stream).",
      ["route", "model", "upstream"],
      LATENCY_BUCKETS,
    ),
    timeToFirstToken: histogram(
      "time_to_first_token_seconds",
      "Time from request received to the first output token sent to the client.",
      ["model", "upstream"],
      TTFT_BUCKETS,
    ),
    upstreamDuration: histogram(
      "upstream_duration_seconds",
      "Duration of one upstream call attempt, by outcome (ok|error).",
      ["upstream", "outcome"],
      LATENCY_BUCKETS,
    ),
    overhead: histogram("overhead_seconds", "Router time per request: total minus time waiting on upstreams.", ["route"], OVERHEAD_BUCKETS),
    tokens: counter("tokens_total", "Tokens reported by upstream usage, by type (input|output|cached|cache_write|reasoning) and api key name. cached/input is the prompt-cache hit ratio.", ["model", "upstream", "type", "key"]),
    inFlight: gauge("endpoint_in_flight", "Requests currently holding a slot on the endpoint.", ["upstream"]),
    maxConcurrency: gauge("endpoint_max_concurrency", "Configured max_concurrency of the endpoint.", ["upstream"]),
    endpointUp: gauge("endpoint_up", "1 when the endpoint takes traffic (healthy or half-open), 0 in cooldown.", ["upstream"]),
    endpointState: gauge("endpoint_state", "Endpoint health state: 1 for the current state, 0 for the others.", ["upstream", "state"]),
    queueWait: histogram("queue_wait_seconds", "Time a request waited for a free endpoint slot.", ["model"], QUEUE_WAIT_BUCKETS),
    poolRejections: counter("pool_rejections_total", "Requests rejected (429) because no endpoint slot freed up in time.", ["model"]),
    retries: counter("upstream_retries_total", "Upstream call attempts retried, by reason.", ["model", "upstream", "reason"]),
    failovers: counter("failovers_total", "Requests that moved to another endpoint after a failure.", ["model"]),
    fallbacks: counter("fallbacks_total", "Requests that moved to a fallback model because every endpoint of a pool failed before the first byte.", ["model", "fallback"]),
    panicRouted: counter(
      "panic_routed_total",
      "Upstream attempts sent to an ejected (cooling down) endpoint because every untried endpoint of the model's pool was ejected (panic routing), by outcome (ok: it answered 2xx | error).",
      ["model", "upstream", "outcome"],
    ),
    affinity: counter(
      "affinity_total",
      "Follow-up turns (previous_response_id or conversation) that preferred the endpoint that served the previous turn: hit when served there, miss when it was full or unhealthy.",
      ["upstream", "result"],
    ),
    cache: counter("cache_requests_total", "Response cache lookups, by result (hit|miss|error).", ["model", "result"]),
    backgroundJobs: counter("background_jobs_finished_total", "Background jobs that reached a terminal status.", ["status"]),
    backgroundActive: gauge(
      "background_jobs",
      "Background jobs waiting (status=queued: the shared queue's count in Redis mode, the same on every instance) or running on this instance (status=in_progress).",
      ["status"],
    ),
    configReloads: counter("config_reloads_total", "Config reload attempts, by result (ok|error).", ["result"]),
    configLastReload: gauge("config_last_reload_timestamp_seconds", "Unix time of the last successful config load (at start, then on each reload).", []),
    storeErrors: counter("store_errors_total", "Errors from a storage backend, by store and operation.", ["store", "op"]),
    redisUp: gauge("redis_up", "1 when the Redis connection is ready, 0 otherwise (absent without Redis).", []),
    droppedTools: counter("dropped_tools_total", "Hosted tools dropped because the chat backend cannot run them.", ["model", "tool_type"]),
    toolCalls: counter("tool_calls_total", "Hosted tool runs by the router between model rounds, by type (mcp_list_tools|mcp_call|web_search_call|file_search_call), server (an operator MCP server's label, a client MCP server's host, the search provider, or files for the file search) and outcome (ok|error|timeout).", ["type", "server", "outcome"]),
    toolCallDuration: histogram("tool_call_duration_seconds", "Duration of one hosted tool run by the router (an MCP listing or call, a web search, a file search).", ["type", "server"], LATENCY_BUCKETS),
    streamChunks: counter("stream_chunks_total", "Streaming events sent to clients, by kind (translated|native).", ["kind"]),
    compactions: counter(
      "compactions_total",
      "Context compactions that completed, by model, endpoint kind (chat, anthropic: summarised by the router | openai: passed through) and trigger (compact|trigger|threshold).",
      ["model", "kind", "trigger"],
    ),
    compactionTokens: counter(
      "compaction_tokens_total",
      "Context tokens of compactions: stage=before is the input the summary was written from (the backend's usage), stage=after the compacted context (kept user messages + summary, estimated at 4 characters a token; chat and anthropic only, the openai kind's is opaque). after/before is the compression ratio.",
      ["kind", "trigger", "stage"],
    ),
    responses: counter(
      "responses_total",
      "Responses asked for, by transport (http: POST /v1/responses | websocket: a response.create message), model and status (HTTP status; over a WebSocket, 200 or the status of the error event that answered).",
      ["transport", "model", "status"],
    ),
    filesUploaded: counter("files_uploaded_total", "Files uploaded to POST /v1/files, by purpose.", ["purpose"]),
    fileBytesUploaded: counter("file_bytes_uploaded_total", "Bytes of the files uploaded to POST /v1/files, by purpose.", ["purpose"]),
    filesExpired: counter("files_expired_total", "Files removed, and vector stores whose chunks were dropped, because their expires_after passed (on a read or by the expiry sweep), by object (file|vector_store).", ["object"]),
    filesIndexed: counter("vector_store_files_indexed_total", "Vector store files whose indexing ended, by outcome (completed|failed|cancelled).", ["outcome"]),
    chunksIndexed: counter("vector_store_chunks_indexed_total", "Chunks embedded and written to the vector index.", []),
    indexingFailures: counter("vector_store_indexing_failures_total", "Vector store files that ended failed, by last_error.code (server_error|unsupported_file|invalid_file).", ["code"]),
    fileSearchDuration: histogram("file_search_duration_seconds", "Duration of one vector store search (query embedding, vector and full-text search, fusion), by ranker (hybrid|vector).", ["ranker"], LATENCY_BUCKETS),
    embeddingTokens: counter("embedding_tokens_total", "Tokens sent to the file_search embedding model, by use (index|query).", ["use"]),
    websocketConnections: gauge("websocket_connections", "WebSocket connections open on /v1/responses.", []),
    websocketCloses: counter("websocket_closes_total", "WebSocket connections on /v1/responses closed, by reason.", ["reason"]),
    // The file_search tool the router runs in its tool loop.
    fileSearches: counter("file_search_calls_total", "file_search tool runs by the router between model rounds, by outcome (ok: results found | empty: none found | error: the search failed or named no query). Their duration is tool_call_duration_seconds{type=\"file_search_call\"}.", ["outcome"]),
    fileSearchEmbeddingTokens: counter("file_search_embedding_tokens_total", "Tokens the file_search tool's query embeddings cost (the library's report), by api key name; also in the key's usage under the embedding model.", ["key"]),
  };

  // Series with a fixed label set start at zero so rate()/increase() and alerts see them before the first event.
  for (const result of CONFIG_RELOAD_RESULTS) m.configReloads.inc({ result }, 0);
  for (const status of BACKGROUND_TERMINAL) m.backgroundJobs.inc({ status }, 0);
  for (const status of BACKGROUND_ACTIVE) m.backgroundActive.set({ status }, 0);
  for (const kind of STREAM_CHUNK_KINDS) m.streamChunks.inc({ kind }, 0);
  for (const reason of WEBSOCKET_CLOSE_REASONS) m.websocketCloses.inc({ reason }, 0);
  for (const outcome of ["ok", "empty", "error"]) m.fileSearches.inc({ outcome }, 0);

  if (opts.collectDefault !== false) {
    collectDefaultMetrics({ register: registry });
    // prom-client's nodejs_active_{handles,requests,resources}_total are gauges named like counters
    // (promtool check metrics flags them); they are only sums of the per-type nodejs_active_* gauges.
    for (const kind of ["handles", "requests", "resources"]) registry.removeSingleMetric(`nodejs_active_${kind}_total`);
  }
  return m;
}

/** Sets endpoint_up and the endpoint_state series of one endpoint together. */
export function setEndpointState(m: Metrics, endpoint: string, state: EndpointState): void {
  m.endpointUp.set({ upstream: endpoint }, state === "cooldown" ? 0 : 1);
  for (const s of ENDPOINT_STATES) m.endpointState.set({ upstream: endpoint, state: s }, s === state ? 1 : 0);
}

/** Drops the per-endpoint gauge series of an endpoint removed by a config reload. */
export function forgetEndpoint(m: Metrics, endpoint: string): void {
  m.inFlight.remove({ upstream: endpoint });
  m.maxConcurrency.remove({ upstream: endpoint });
  m.endpointUp.remove({ upstream: endpoint });
  for (const state of ENDPOINT_STATES) m.endpointState.remove({ upstream: endpoint, state });
}

/**
 * Every name that can appear in a PromQL selector against this registry:
 * counters and gauges by their name, histograms as `_bucket`, `_sum`, `_count`,
 * summaries as the name plus `_sum`, `_count`. Sorted. For tests that check
 * dashboards and alert rules only reference metrics that exist.
 */
export function metricNames(metrics: Metrics): string[] {
  const names = new Set<string>();
  for (const metric of metrics.registry.getMetricsAsArray()) {
    // The typings declare an enum, the runtime value is a lowercase string.
    const type = String(metric.type as unknown);
    if (type === "histogram") {
      for (const suffix of ["_bucket", "_sum", "_count"]) names.add(metric.name + suffix);
    } else if (type === "summary") {
      for (const suffix of ["", "_sum", "_count"]) names.add(metric.name + suffix);
    } else {
      names.add(metric.name);
    }
  }
  return [...names].sort();
}

/** prom-client 15's record of one label set in a counter's or histogram's `hashMap`. */
interface SeriesRecord {
  labels: Record<string, unknown>;
  value: number;
  sum: number;
  count: number;
  bucketValues: Record<string, number>;
}
interface MetricInternals {
  hashMap: Record<string, SeriesRecord>;
  labelNames: string[];
  upperBounds?: number[];
  inc?: (labels: unknown, value?: number) => unknown;
  set?: (labels: unknown, value?: number) => void;
  observe?: (labels: unknown, value?: number) => void;
  reset(): void;
  remove(...args: unknown[]): void;
}
type Cells = Map<string, Cells | SeriesRecord>;

/** No label beyond the metric's (prom-client refuses one): counted without allocating. */
function sameCount(labels: Record<string, unknown>, n: number): boolean {
  let k = 0;
  for (const _ in labels) k++;
  return k === n;
}

/**
 * The hot path's counters, histograms and gauges without prom-client's per-call work: its
 * inc/observe/set rebuild the label set's hash string, re-check the label names and (histograms)
 * allocate a closure on every call, a dozen times per request. Here each label set's record
 * (prom-client's own entry in `hashMap`, so scrapes and `get()` read the same numbers) is kept
 * in a tree of Maps keyed by the label values in `labelNames` order and updated in place,
 * exactly as prom-client would. The first call for a label set, any call without every label
 * as a string or with a value prom-client would refuse, goes through prom-client unchanged;
 * `reset`/`remove` drop the tree. test/unit/metrics-cells.test.ts holds it to prom-client's
 * own numbers.
 */
function cachedCells<M extends Counter<string> | Histogram<string> | Gauge<string>>(metric: M): M {
  const m = metric as unknown as MetricInternals;
  const names = m.labelNames;
  if (names.length === 0) return metric;
  let cells: Cells = new Map();
  let map = m.hashMap;
  const find = (labels: Record<string, unknown>): SeriesRecord | undefined => {
    if (m.hashMap !== map) {
      cells = new Map();
      map = m.hashMap;
    }
    let node = cells;
    for (let i = 0; i < names.length; i++) {
      const v = labels[names[i]!];
      if (typeof v !== "string") return undefined;
      const next = node.get(v);
      if (next === undefined) return undefined;
      if (i === names.length - 1) return sameCount(labels, names.length) ? (next as SeriesRecord) : undefined;
      node = next as Cells;
    }
    return undefined;
  };
  // After prom-client made (or found) the record: remember it under the label values.
  const remember = (labels: Record<string, unknown>) => {
    if (m.hashMap !== map) {
      cells = new Map();
      map = m.hashMap;
    }
    const n = Object.keys(labels).length;
    if (n !== names.length || names.some((k) => typeof labels[k] !== "string")) return;
    const rec = Object.values(m.hashMap).find((r) => Object.keys(r.labels).length === n && names.every((k) => r.labels[k] === labels[k]));
    if (!rec) return;
    let node = cells;
    for (let i = 0; i < names.length - 1; i++) {
      const v = labels[names[i]!] as string;
      let next = node.get(v) as Cells | undefined;
      if (next === undefined) node.set(v, (next = new Map()));
      node = next;
    }
    node.set(labels[names[names.length - 1]!] as string, rec);
  };
  const drop = () => {
    cells = new Map();
    map = m.hashMap;
  };
  const reset = m.reset.bind(m);
  const remove = m.remove.bind(m);
  m.reset = () => {
    reset();
    drop();
  };
  m.remove = (...args: unknown[]) => {
    remove(...args);
    drop();
  };
  /**
   * `original` (prom-client's) for a call it must judge, else `update` on the label set's record
   * once prom-client has made it (the first call for a label set goes through prom-client).
   */
  const inPlace =
    (original: (labels: unknown, value?: number) => unknown, accepts: (value: number | undefined) => boolean, update: (rec: SeriesRecord, value: number) => void) =>
    (labels: unknown, value?: number): unknown => {
      if (typeof labels !== "object" || labels === null || !accepts(value)) return original(labels, value);
      const rec = find(labels as Record<string, unknown>);
      if (rec) return update(rec, value!);
      const out = original(labels, value);
      remember(labels as Record<string, unknown>);
      return out;
    };
  if (m.set) {
    // A gauge: prom-client's `set` replaces the record each time; here the value is set in place.
    // Its inc/dec change the record in place already and stay prom-client's.
    m.set = inPlace(m.set.bind(m), (v) => typeof v === "number", (rec, v) => {
      rec.value = v;
    });
  } else if (m.inc) {
    m.inc = inPlace(m.inc.bind(m), (v) => v === undefined || (v >= 0 && v < Infinity), (rec, v) => {
      rec.value += v ?? 1;
    });
  } else if (m.observe) {
    const bounds = m.upperBounds!;
    // The bucket records' keys as prom-client made them: a fractional number is turned into its key string on every use.
    const keys = bounds.map(String);
    m.observe = inPlace(m.observe.bind(m), (v) => typeof v === "number" && Number.isFinite(v), (rec, v) => {
      rec.sum += v;
      rec.count += 1;
      for (let i = 0; i < bounds.length; i++) {
        if (v <= bounds[i]!) {
          rec.bucketValues[keys[i]!]! += 1;
          break;
        }
      }
    });
  }
  return metric;
}
