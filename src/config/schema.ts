import { z } from "zod";
import { parseDuration } from "./duration.js";

/**
 * router.yaml's schema. Every key carries a `.describe()` text: it is the key's documentation,
 * shown by editors through config/router.schema.json and rendered, with the key's default, into
 * docs/configuration.md (`npm run docs`; a test fails when either file is stale).
 */

/** A duration as written in router.yaml ("30s", "1h", 250ms", or seconds), normalised to milliseconds. */
export const duration = z.union([z.string(), z.number()]).transform((v, ctx) => {
  const ms = parseDuration(v);
  if (ms === null) {
    ctx.addIssue({ code: "custom", message: `invalid duration ${JSON.stringify(v)} (use e.g. "250ms", "30s", "5m", "1h")` });
    return z.NEVER;
  }
  return ms;
});

const name = z.string().min(1).regex(/^[A-Za-z0-9._:@/-]+$/, "may contain only letters, digits and . _ : @ / -");

const hostPort = z.union([z.string(), z.object({ host: z.string().min(1), port: z.number().int().min(1).max(65535) }).strict()]).transform((v, ctx) => {
  if (typeof v !== "string") return v;
  const m = /^\[?([^\]]+?)\]?:(\d{1,5})$/.exec(v);
  if (!m) {
    ctx.addIssue({ code: "custom", message: `expected "host:port", got ${JSON.stringify(v)}` });
    return z.NEVER;
  }
  return { host: m[1]!, port: Number(m[2]) };
});

const redisTargetSchema = z
  .object({
    sentinels: z.array(hostPort).min(1).optional().describe('Redis Sentinel addresses ("host:port" or {host, port}); the router asks them for the current primary and follows failovers. Needs `name`.'),
    cluster: z
      .array(hostPort)
      .min(1)
      .optional()
      .describe(
        "A Redis Cluster's startup nodes (\"host:port\"); the router learns the other nodes and which serves each slot from them, and follows failovers. Keys that go together share a hash tag (docs/redis-cluster.md). Instead of redis_url and sentinels; username, password and tls apply to every node.",
      ),
    name: z.string().min(1).optional().describe("The monitored group's name (`sentinel monitor <name> ...`)."),
    username: z.string().optional().describe("Redis ACL user, kept out of the URL."),
    password: z.string().optional().describe("The Redis servers' password (requirepass), kept out of the URL; never logged."),
    sentinel_password: z.string().optional().describe("The sentinels' own password (requirepass in sentinel.conf), if any."),
    tls: z
      .object({
        ca_file: z.string().min(1).optional().describe("A private CA's certificate (PEM file)."),
        servername: z.string().min(1).optional().describe("The TLS server name to verify, when it differs from the host."),
        sentinels: z.boolean().default(false).describe("TLS to the sentinels too."),
      })
      .strict()
      .optional()
      .describe("TLS to the Redis servers (implied by a rediss:// URL)."),
  })
  .strict();

const timeoutsSchema = z
  .object({
    connect: duration.default(5_000).describe("Time to open the connection to the endpoint."),
    first_byte: duration.default(300_000).describe("Time to the first byte of the answer; long by default, as a local backend may spend a while on prefill."),
    idle: duration.default(120_000).describe("Longest silence between two chunks of a streamed answer."),
  })
  .strict();

const websocketSchema = z
  .object({
    max_connection_duration: duration.default(3_600_000).describe("A socket is ended after this long (OpenAI's limit: 60 minutes) with `websocket_connection_limit_reached`; clients reconnect."),
    ping_interval: duration.default(30_000).describe("Ping an idle socket this often; one that has not answered the previous ping by the next is dropped."),
    max_message_bytes: z.number().int().positive().default(20 * 1024 * 1024).describe("Largest message a client may send; a larger one closes the socket with 1009."),
    max_lanes: z.number().int().positive().default(16).describe("Responses in flight at once on one socket (`stream_id` lanes); a create beyond it is an `error` event `too_many_streams`."),
  })
  .strict()
  .prefault({});

/** An Anthropic API version: a date, as the `anthropic-version` header takes it. */
const anthropicVersion = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, "an API version date such as 2023-06-01");

const thinkingBudgetSchema = z
  .object({
    minimal: z.number().int().min(0).default(1024).describe("Budget at effort `minimal`."),
    low: z.number().int().min(0).default(2048).describe("Budget at effort `low`."),
    medium: z.number().int().min(0).default(8192).describe("Budget at effort `medium`."),
    high: z.number().int().min(0).default(16384).describe("Budget at effort `high`."),
    xhigh: z.number().int().min(0).default(32768).describe("Budget at effort `xhigh`."),
  })
  .strict()
  .refine((b) => Object.values(b).every((n) => n === 0 || n >= 1024), "a thinking budget is 0 (off) or at least 1024 tokens (Anthropic's minimum)");

const endpointSchema = z
  .object({
    name: name.describe("The endpoint's name: models list it in their pool; logs, metrics (`upstream` label) and errors name the endpoint by it, never by its URL."),
    url: z.url({ protocol: /^https?$/ }).describe("The API's base URL, with `/v1` (Ollama: http://127.0.0.1:11434/v1; vLLM: http://HOST:8000/v1; llama.cpp: :8080/v1; OpenAI: https://api.openai.com/v1; Anthropic: https://api.anthropic.com/v1)."),
    kind: z.enum(["openai", "chat", "anthropic"]).describe("`openai`: native /responses pass-through; `chat`: translated to /chat/completions (Ollama, vLLM, llama.cpp); `anthropic`: translated to the Messages API (/v1/messages)."),
    api_key: z.string().optional().describe("The endpoint's own key (use ${ENV}); sent as a Bearer token (`x-api-key` on kind: anthropic). Never the client's key, never logged or echoed."),
    headers: z.record(z.string(), z.string()).default({}).describe("Extra headers sent with every request to this endpoint."),
    max_concurrency: z.number().int().positive().default(16).describe("Requests in flight at once on this endpoint (its slots); more wait up to `routing.queue_timeout`."),
    weight: z.number().positive().default(1).describe("Tie-break between equally loaded endpoints of a pool."),
    timeouts: timeoutsSchema.prefault({}).describe("Connection, first-byte and between-chunk timeouts; each expiry is an endpoint failure."),
    developer_role: z.enum(["system", "developer"]).default("system").describe("How `developer` messages reach a chat backend whose template may not know the role."),
    anthropic_version: anthropicVersion.optional().describe("`kind: anthropic`: the `anthropic-version` header (unset: the version the installed @anthropic-ai/sdk sends, 2026-10-21); the request is translated for it."),
    anthropic_beta: z.array(z.string().min(1)).optional().describe("`kind: anthropic`: `anthropic-beta` features sent with every request to this endpoint."),
  })
  .strict();

const modelEndpointRef = z.union([
  name,
  z
    .object({
      name: name.describe("An endpoint of `endpoints`."),
      upstream_model: z.string().min(1).optional().describe("The model name this endpoint knows the model by."),
      weight: z.number().positive().optional().describe("The endpoint's weight in this pool."),
    })
    .strict(),
]);

const modelSchema = z
  .object({
    endpoints: z.array(modelEndpointRef).min(1).describe("The model's pool: endpoint names, or `{name, upstream_model, weight}`. A request goes to the endpoint with the fewest requests in flight under its `max_concurrency`, and fails over to another before the first byte."),
    upstream_model: z.string().min(1).optional().describe("The model name sent upstream (unset: the model's own name here)."),
    cache: z
      .object({
        ttl: duration.default(3_600_000).describe("How long an answer is served from the cache."),
        enabled: z.boolean().default(true).describe("Set false to keep the block but turn the cache off."),
      })
      .strict()
      .optional()
      .describe("Serve identical requests from the response cache (see api.md, \"Response cache\")."),
    hosted_tools: z
      .enum(["run", "drop", "reject"])
      .optional()
      .describe(
        "Hosted tools (mcp, web_search, file_search, ...). Unset: on chat and anthropic endpoints the router runs the ones it can (MCP; web search with a provider) and drops the rest; on openai endpoints they pass through. `run`: the router runs what it can on every kind (the rest is dropped on chat). `drop` / `reject`: on chat and anthropic, every hosted tool is dropped / a 400. Operator-defined MCP servers (`tools.mcp.servers`) are run by the router whatever this says.",
      ),
    encrypted_reasoning: z
      .boolean()
      .optional()
      .describe("On openai endpoints, ask for `reasoning.encrypted_content` so reasoning can be replayed next turn (upstream keeps nothing: store is false). Unset: on when the request sets `reasoning` or the model name looks like a reasoning model."),
    context_window: z
      .number()
      .int()
      .positive()
      .optional()
      .describe("The model's context window in tokens (told to clients in GET /v1/models and to Codex): `truncation: \"auto\"` drops the oldest turns to fit it, `disabled` (default) answers 400 `context_length_exceeded` past it (chat backends; the estimate is 4 characters a token)."),
    inline_text_files: z.boolean().default(false).describe("On chat backends without file support: send text files (`input_file`) as text parts instead of chat `file` parts."),
    fallbacks: z.array(z.string().min(1)).default([]).describe("Models that serve the request, in order (each followed by its own fallbacks), when every endpoint of this model's pool failed before the first byte, had no slot or no endpoint."),
    max_output_tokens: z
      .number()
      .int()
      .positive()
      .optional()
      .describe("The most tokens the model writes in one answer (told to clients in /v1/models and Codex's catalog); on `kind: anthropic`, which requires `max_tokens`, the one sent when the request sets no `max_output_tokens` (8192 when unset)."),
    input_modalities: z.array(z.enum(["text", "image", "audio", "file"])).min(1).optional().describe("What the model reads besides text (told to clients in /v1/models and Codex's catalog)."),
    reasoning: z.boolean().optional().describe("The model reasons (told to clients in /v1/models; Codex offers reasoning efforts and summaries)."),
    thinking_budget: thinkingBudgetSchema.prefault({}).describe("`kind: anthropic`: the `thinking.budget_tokens` for each `reasoning.effort` (0: no thinking at that effort; else at least 1024)."),
    prompt_caching: z.boolean().default(true).describe("`kind: anthropic`: `cache_control` breakpoints on the stable prefix (tools, system, earlier turns)."),
    structured_output: z
      .enum(["tool", "native"])
      .default("tool")
      .describe("`kind: anthropic`: how `text.format: json_schema` is asked for: `tool` (a forced tool whose input is the object; every model) or `native` (`output_config.format`, where the model supports it)."),
    anthropic_beta: z.array(z.string().min(1)).optional().describe("`kind: anthropic`: `anthropic-beta` features sent for this model, besides its endpoint's."),
  })
  .strict();

const positiveInt = z.number().int().positive();

/** Where the router's hosted `web_search` tool searches (src/tools/search/). */
const webSearchSchema = z
  .object({
    provider: z.enum(["searxng", "brave", "tavily"]).describe("The search API."),
    url: z.url({ protocol: /^https?$/ }).optional().describe("The provider's base URL; required for searxng (self-hosted), the public API when unset for brave and tavily."),
    api_key: z.string().min(1).optional().describe("The provider's key (use ${ENV}); required for brave and tavily, sent as a Bearer token to searxng when set."),
    timeout: duration.default(15_000).describe("How long one search (headers and body) may take before it fails."),
  })
  .strict()
  .superRefine((ws, ctx) => {
    if (ws.provider === "searxng" && !ws.url) ctx.addIssue({ code: "custom", path: ["url"], message: "provider searxng needs the url of a SearXNG instance" });
    if (ws.provider !== "searxng" && !ws.api_key) ctx.addIssue({ code: "custom", path: ["api_key"], message: `provider ${ws.provider} needs an api_key` });
  });

export type WebSearchConfig = z.output<typeof webSearchSchema>;

export const apiKeySchema = z
  .object({
    name: name.describe("The key's identity: owner of its responses and conversations, its limits, usage rows and the `key` label of metrics (never the secret)."),
    key: z.string().min(1).describe("The secret clients send as `Authorization: Bearer KEY` (use ${ENV})."),
    models: z.array(z.string().min(1)).optional().describe("Models this key may call: names or globs (`*`, `?`). Unset: every model."),
    limits: z
      .object({
        requests_per_minute: positiveInt.optional().describe("Requests per minute (a bucket that refills continuously)."),
        tokens_per_minute: positiveInt.optional().describe("Tokens (input + output) per minute."),
        max_concurrent: positiveInt.optional().describe("Requests in flight at once (a stream until it ends, a background job while it runs)."),
      })
      .strict()
      .optional()
      .describe("Per-key rate limits, enforced on every inference route (shared by all instances in Redis mode)."),
    budget: z
      .object({
        tokens_per_day: positiveInt.optional().describe("Tokens per UTC day."),
        tokens_per_month: positiveInt.optional().describe("Tokens per calendar month (UTC)."),
      })
      .strict()
      .optional()
      .describe("Token budgets; once reached, 429 `insufficient_quota` until the period resets."),
    role: z.enum(["admin", "user"]).default("user").describe("`admin` keys may also read GET /v1/usage and GET /health/backends, use the admin API (/v1/admin/...) and sign in to the console (/ui/)."),
    tools: z.array(z.string().min(1)).optional().describe("Hosted tools this key may use: tool types (`mcp`, `web_search`, ...) and MCP server labels. Unset: all; []: none."),
  })
  .strict();

const toolFilterSchema = z
  .object({
    tool_names: z.array(z.string().min(1)).optional().describe("Tool names."),
    read_only: z.boolean().optional().describe("Tools by their `readOnlyHint`."),
  })
  .strict();

/** `require_approval` as the Responses API has it: always, never, or which tools need it. */
const approvalSchema = z.union([z.enum(["always", "never"]), z.object({ always: toolFilterSchema.optional(), never: toolFilterSchema.optional() }).strict()]);

const mcpServerSchema = z
  .object({
    label: z
      .string()
      .min(1)
      .regex(/^[A-Za-z0-9_-]+$/, "may contain only letters, digits, _ and -")
      .describe("The `server_label` clients name the server by, alone."),
    url: z.url({ protocol: /^https?$/ }).describe("The server's Streamable HTTP (or legacy SSE) URL."),
    headers: z.record(z.string(), z.string()).default({}).describe("Sent on every request to the server (a token: use ${ENV}); never logged or echoed."),
    allowed_tools: z.union([z.array(z.string().min(1)), toolFilterSchema]).optional().describe("Tools of the server clients may use (names, or a filter); unset: all."),
    require_approval: approvalSchema.default("never").describe("Used when the client's tool sets none."),
    description: z.string().optional().describe("What the server is for."),
  })
  .strict();

const toolsSchema = z
  .object({
    max_rounds: z.number().int().min(1).max(100).default(10).describe("Upstream rounds one response may take (model -> tools -> model ...); past it the response ends `incomplete`."),
    mcp: z
      .object({
        allowed_urls: z
          .array(z.string().min(1))
          .default([])
          .describe(
            "`server_url` patterns clients may name (`*` matches any run of characters). None by default: clients can then use only the servers below. Loopback, link-local and private addresses are refused unless a pattern names the host literally (no `*` in its host).",
          ),
        call_timeout: duration.default(60_000).describe("One MCP request (connect, list, call) may take this long; then the call is an `mcp_call` with an error."),
        max_result_bytes: z.number().int().positive().default(1_000_000).describe("A tool result larger than this is not given to the model; the call is an `mcp_call` with an error."),
        servers: z.array(mcpServerSchema).default([]).describe("Operator-defined MCP servers: clients name them by `server_label` alone, the router runs them on every kind."),
      })
      .strict()
      .prefault({})
      .describe("MCP servers the router calls for `mcp` tools."),
    web_search: webSearchSchema.optional().describe("The search provider hosted `web_search` tools run on; unset: web search keeps the model's `hosted_tools` behaviour."),
    file_search: z
      .object({
        embedding_model: z
          .string()
          .min(1)
          .optional()
          .describe("The model (a name under `models:`) whose /v1/embeddings embeds files and queries, through its pool (slots, failover). Unset: vector stores cannot index files (they end `failed`)."),
        embedding_batch: z.number().int().min(1).max(2048).default(64).describe("Texts sent in one /v1/embeddings call while indexing."),
        embedding_attempts: z.number().int().min(1).max(10).default(3).describe("Attempts of an embedding call while indexing (a backend that stays down makes the file `failed`)."),
        indexing_concurrency: z.number().int().min(1).max(64).default(2).describe("Files this instance indexes at once (the others wait in the queue, shared by instances in Redis mode). Read at start."),
        vector_index_min_chunks: z
          .number()
          .int()
          .min(0)
          .default(0)
          .describe("Chunks from which a vector store gets an approximate (HNSW) vector index, built in the background once the store is idle: vector searches of a large store in milliseconds instead of a scan, traded for recall (on the bench's corpus 0.96 of the exact top 10 at 10k chunks, far less at 100k) and a build of about two minutes of CPU and a few GB of memory at 100k chunks. 0 (the default): never, every vector search is exact. Read at start."),
      })
      .strict()
      .prefault({})
      .describe("Vector stores and the hosted `file_search` tool the router runs over them."),
  })
  .strict()
  .prefault({});

export const routerConfigSchema = z
  .object({
    server: z
      .object({
        host: z.string().default("127.0.0.1").describe("The address to listen on (0.0.0.0: every interface)."),
        port: z.number().int().min(0).max(65535).default(8080).describe("The port (`--port` and `PORT` win)."),
        api_keys: z.array(apiKeySchema).default([]).describe("The router's keys. Empty: every route is open."),
        public_health: z.boolean().default(true).describe("/healthz and /readyz answer without a key."),
        public_metrics: z.boolean().default(true).describe("/metrics answers without a key."),
        max_body_bytes: z.number().int().positive().default(20 * 1024 * 1024).describe("Largest JSON body; larger ones get 413."),
        shutdown_timeout: duration.default(30_000).describe("On SIGTERM, how long requests and streams in flight may finish."),
        sse_keepalive: duration.default(15_000).describe("An SSE stream silent this long gets a `: keepalive` comment line (0: never), so proxies in between do not cut it."),
        websocket: websocketSchema.describe("GET /v1/responses with `Upgrade: websocket`: Responses over one persistent socket."),
        admin_ui: z.boolean().default(true).describe("The web console at /ui/ (sign in with an admin key); false: /ui/ answers 404, the admin API (/v1/admin/...) stays."),
      })
      .strict()
      .prefault({})
      .describe("The HTTP server and its keys."),
    endpoints: z.array(endpointSchema).min(1).describe("The backends: one entry per server the router calls."),
    models: z.record(z.string().min(1), modelSchema).describe("The models clients ask for, by name, each with its pool of endpoints."),
    files: z
      .object({
        storage: z
          .string()
          .min(1)
          .default("./data")
          .describe("Where uploaded files and the vector index (LanceDB) live: a directory (several instances may share one) or an object-storage URI (`s3://bucket/path`) LanceDB writes to."),
        max_bytes: z.number().int().positive().default(512 * 1024 * 1024).describe("The largest upload of POST /v1/files (413 past it); streamed to disk, never held whole."),
        fetch: z
          .object({
            allow: z
              .array(z.string().min(1))
              .default([])
              .describe("URL patterns the router may fetch (`*` matches any run of characters): none by default. Loopback, private and link-local addresses are refused unless a pattern names that host literally."),
            max_bytes: z.number().int().positive().default(20 * 1024 * 1024).describe("Largest file fetched."),
            timeout: duration.default(10_000).describe("How long one fetch may take."),
          })
          .strict()
          .prefault({})
          .describe("`input_file` parts given by `file_url`, fetched by the router for chat and anthropic backends (it sends them file contents only)."),
      })
      .strict()
      .prefault({})
      .describe("Files clients upload (the Files API, vector stores) and send (`input_file`)."),
    routing: z
      .object({
        queue_timeout: duration.default(10_000).describe("How long a request may wait for a free slot before 429 + Retry-After."),
        affinity: z.boolean().default(true).describe("A follow-up turn (previous_response_id or conversation) prefers the endpoint that served the previous one while it is healthy and has a free slot."),
        retry: z
          .object({
            attempts: z.number().int().min(1).max(10).default(3).describe("Upstream calls per client request, failover included."),
            max_time: duration.default(30_000).describe("Time budget for those calls (a `Retry-After` is waited out only if it fits)."),
          })
          .strict()
          .prefault({})
          .describe("Failover before the first byte."),
        health: z
          .object({
            failure_threshold: z.number().int().min(1).default(3).describe("Consecutive endpoint failures that eject an endpoint."),
            cooldown: duration.default(5_000).describe("First ejection; doubles on each failed half-open trial."),
            max_cooldown: duration.default(300_000).describe("Cap of the doubling."),
            probe_interval: duration.optional().describe("Active `GET {url}/models` to every endpoint on that interval (unset: off)."),
          })
          .strict()
          .prefault({})
          .describe("Passive health: when an endpoint is ejected and tried again."),
      })
      .strict()
      .prefault({})
      .describe("How a request picks an endpoint, waits, retries and fails over."),
    storage: z
      .object({
        redis_url: z.string().default("").describe("One Redis server: redis://[user:pass@]host:port[/db], or rediss:// for TLS. Empty: the embedded in-memory store."),
        redis: redisTargetSchema.optional().describe("Redis Sentinel, credentials kept out of the URL, TLS options."),
        durability: z
          .enum(["primary", "replica"])
          .default("primary")
          .describe(
            "`primary`: a write counts once the primary has it (replication is asynchronous, so a failover can lose the last writes). `replica`: the writes a client depends on (stored responses, conversation turns, background job records) also wait for one replica (WAIT 1 durability_timeout), on connections of their own; unconfirmed in time, the request fails with 503 store_unavailable instead of acknowledging a write a failover could lose.",
          ),
        durability_timeout: duration.default(1_000).describe("`durability: replica`: how long a write waits for a replica."),
        prefix: z.string().default("rr:").describe("Prefix of every Redis key (instances sharing a store share it)."),
        ttl: duration.default(30 * 86_400_000).describe("How long stored responses and conversations are kept after their last change."),
        events_ttl: duration.default(86_400_000).describe("How long a background response's recorded stream events stay resumable (capped at ttl)."),
        history_cache_bytes: z
          .number()
          .int()
          .min(0)
          .default(64 * 1024 * 1024)
          .describe(
            "Redis mode: bytes of chain history (JSON) each instance holds in memory for the chains it served last, so a chain's next turn on the same instance reads only what changed; Redis still checks every record of it in the same one round trip. 0 holds none.",
          ),
        memory: z
          .object({
            max_entries: z.number().int().positive().default(10_000).describe("Most entries kept."),
            max_bytes: z.number().int().positive().default(256 * 1024 * 1024).describe("Most bytes kept."),
          })
          .strict()
          .prefault({})
          .describe("Bounds of the embedded store (least recently used entries go first)."),
      })
      .strict()
      .prefault({})
      .describe("Where state lives: stored responses, conversations, cache, background jobs, limits, usage."),
    background: z
      .object({
        concurrency: z.number().int().min(1).default(4).describe("Background jobs one instance runs at a time."),
        lease: z
          .object({
            lock_duration: duration.default(30_000).describe("How long a job's lease lasts without renewal."),
            stalled_interval: duration.default(15_000).describe("How often expired leases are looked for."),
            max_stalled_count: z.number().int().min(0).default(1).describe("How often a stalled job may be taken again."),
          })
          .strict()
          .prefault({})
          .describe(
            "Redis mode: a running job holds a lease its instance renews; when the instance dies the lease expires and another instance resolves the job (fails it if it had streamed, else runs it). Shorter leases notice a dead instance sooner at the cost of more Redis traffic.",
          ),
        drain_timeout: duration
          .default(120_000)
          .describe(
            "On shutdown, how long the instance lets the background jobs it runs finish (it takes no new ones meanwhile) before handing them back to the queue (Redis mode) or failing them (memory mode). Longer than server.shutdown_timeout: jobs outlive the HTTP connections.",
          ),
        cancel_wait: duration.default(3_000).describe("How long POST /cancel waits for the instance running the job to record the cancellation (with partial output) before recording it itself."),
      })
      .strict()
      .prefault({})
      .describe("Background jobs (`background: true`)."),
    compaction: z
      .object({
        key: z
          .string()
          .refine((v) => v === "" || v.length >= 16, "must be at least 16 characters (empty: a random key per process)")
          .optional()
          .describe(
            "The secret the router's compaction items are sealed with (AES-256-GCM, key derived by HKDF), e.g. `${ROUTER_COMPACTION_KEY}`, 16+ characters. Every instance sharing a store needs the same one. Without it a random per-process key is used (logged at start): items then open only on the instance that sealed them, and not after a restart.",
          ),
        previous_keys: z.array(z.string().min(16, "must be at least 16 characters")).default([]).describe("Earlier keys, for rotation: items sealed with them still open; new items are sealed with `key`."),
        prompt: z.string().min(1).optional().describe("The instruction the chat backend gets to write the summary (default: SUMMARY_PROMPT in src/translate/chat/compaction.ts)."),
        user_message_max_tokens: positiveInt.default(20_000).describe("Newest user messages a compaction keeps, in tokens (4 characters a token), as the Codex CLI does."),
        summary_max_tokens: positiveInt.optional().describe("max_tokens of the summarisation call on chat backends (unset: the backend's default)."),
      })
      .strict()
      .prefault({})
      .describe("Compaction on chat and anthropic backends."),
    tools: toolsSchema.describe("The hosted tools the router runs itself between model rounds (src/tools/, src/responses/tool-loop/)."),
    logging: z
      .object({
        level: z.enum(["trace", "debug", "info", "warn", "error", "fatal", "silent"]).default("info").describe("The least severe level logged; a change takes effect on reload."),
      })
      .strict()
      .prefault({})
      .describe("Logs."),
    tracing: z
      .object({
        enabled: z.boolean().optional().describe("Unset: on when an endpoint is set here or in the OTEL_* variables."),
        endpoint: z
          .url({ protocol: /^https?$/ })
          .optional()
          .describe("The collector's OTLP/HTTP traces URL (e.g. http://otel-collector:4318/v1/traces). Unset: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces, else http://localhost:4318/v1/traces."),
        headers: z.record(z.string(), z.string()).default({}).describe("Headers sent to the collector (a token: use ${ENV}). Unset: OTEL_EXPORTER_OTLP_(TRACES_)HEADERS."),
        service_name: z.string().min(1).optional().describe("`service.name` of the spans. Unset: OTEL_SERVICE_NAME, else responses-router."),
        sample_ratio: z.number().min(0).max(1).optional().describe("Share of new traces recorded (parent-based: a client's sampled flag wins). Unset: OTEL_TRACES_SAMPLER(_ARG), else every trace."),
        capture_content: z.boolean().default(false).describe("Put prompt and completion text on request spans (gen_ai.input.messages / gen_ai.output.messages). Off: spans carry no text."),
      })
      .strict()
      .prefault({})
      .describe(
        "OpenTelemetry traces (OTLP/HTTP). Off unless configured: `enabled: true`, or `enabled` unset and an endpoint here or in OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT. Read at start: a change needs a restart.",
      ),
  })
  .strict()
  .superRefine((cfg, ctx) => {
    const redis = cfg.storage.redis;
    if (redis?.sentinels && !redis.name) ctx.addIssue({ code: "custom", path: ["storage", "redis", "name"], message: "storage.redis.sentinels needs the monitored group's name" });
    if (redis?.sentinels && cfg.storage.redis_url) ctx.addIssue({ code: "custom", path: ["storage", "redis_url"], message: "set either storage.redis_url or storage.redis.sentinels, not both" });
    if (redis?.cluster && cfg.storage.redis_url) ctx.addIssue({ code: "custom", path: ["storage", "redis_url"], message: "set either storage.redis_url or storage.redis.cluster, not both" });
    if (redis?.cluster && redis.sentinels) ctx.addIssue({ code: "custom", path: ["storage", "redis", "cluster"], message: "set either storage.redis.sentinels or storage.redis.cluster, not both" });
    if (redis && !redis.sentinels && !redis.cluster && !cfg.storage.redis_url) ctx.addIssue({ code: "custom", path: ["storage", "redis"], message: "storage.redis needs sentinels, cluster, or a storage.redis_url it applies to" });
    const names = new Set<string>();
    cfg.endpoints.forEach((ep, i) => {
      if (names.has(ep.name)) ctx.addIssue({ code: "custom", path: ["endpoints", i, "name"], message: `duplicate endpoint name "${ep.name}"` });
      names.add(ep.name);
      if (ep.kind !== "anthropic") {
        for (const field of ["anthropic_version", "anthropic_beta"] as const) {
          if (ep[field] !== undefined) ctx.addIssue({ code: "custom", path: ["endpoints", i, field], message: `${field} applies to kind: anthropic endpoints only` });
        }
      }
    });
    for (const [model, m] of Object.entries(cfg.models)) {
      m.endpoints.forEach((ref, i) => {
        const refName = typeof ref === "string" ? ref : ref.name;
        if (!names.has(refName)) {
          ctx.addIssue({ code: "custom", path: ["models", model, "endpoints", i], message: `unknown endpoint "${refName}"` });
        }
      });
    }
    const keys = new Set<string>();
    const keyNames = new Set<string>();
    cfg.server.api_keys.forEach((k, i) => {
      if (keys.has(k.key)) ctx.addIssue({ code: "custom", path: ["server", "api_keys", i, "key"], message: "duplicate api key value" });
      keys.add(k.key);
      // The name is the key's identity for ownership, limits, usage and metrics.
      if (keyNames.has(k.name)) ctx.addIssue({ code: "custom", path: ["server", "api_keys", i, "name"], message: `duplicate api key name "${k.name}"` });
      keyNames.add(k.name);
      k.models?.forEach((pattern, j) => {
        if (!/[*?]/.test(pattern) && !Object.hasOwn(cfg.models, pattern)) {
          ctx.addIssue({ code: "custom", path: ["server", "api_keys", i, "models", j], message: `unknown model "${pattern}"` });
        }
      });
    });

    const labels = new Set<string>();
    cfg.tools.mcp.servers.forEach((srv, i) => {
      if (labels.has(srv.label)) ctx.addIssue({ code: "custom", path: ["tools", "mcp", "servers", i, "label"], message: `duplicate MCP server label "${srv.label}"` });
      labels.add(srv.label);
    });

    const embedding = cfg.tools.file_search.embedding_model;
    if (embedding !== undefined && !Object.hasOwn(cfg.models, embedding)) ctx.addIssue({ code: "custom", path: ["tools", "file_search", "embedding_model"], message: `unknown model "${embedding}" (name one under models:)` });

    for (const issue of fallbackIssues(cfg.models)) ctx.addIssue({ code: "custom", ...issue });
  });

/** Fallbacks must name configured models, not the model itself, and never loop back. */
function fallbackIssues(models: Record<string, { fallbacks: string[] }>): { path: (string | number)[]; message: string }[] {
  const issues: { path: (string | number)[]; message: string }[] = [];
  for (const [model, m] of Object.entries(models)) {
    m.fallbacks.forEach((fb, i) => {
      if (fb === model) issues.push({ path: ["models", model, "fallbacks", i], message: `model "${model}" cannot fall back to itself` });
      else if (!Object.hasOwn(models, fb)) issues.push({ path: ["models", model, "fallbacks", i], message: `unknown model "${fb}"` });
    });
  }
  // A cycle (a -> b -> a) would bounce a failing request between pools forever.
  const state = new Map<string, "visiting" | "done">();
  const visit = (model: string, trail: string[]): void => {
    if (state.get(model) === "done") return;
    if (state.get(model) === "visiting") {
      const cycle = [...trail.slice(trail.indexOf(model)), model];
      issues.push({ path: ["models", model, "fallbacks"], message: `fallback cycle: ${cycle.join(" -> ")}` });
      return;
    }
    state.set(model, "visiting");
    for (const fb of models[model]?.fallbacks ?? []) if (fb !== model && Object.hasOwn(models, fb)) visit(fb, [...trail, model]);
    state.set(model, "done");
  };
  for (const model of Object.keys(models)) visit(model, []);
  return issues;
}

export type RawRouterConfig = z.input<typeof routerConfigSchema>;
export type ParsedRouterConfig = z.output<typeof routerConfigSchema>;
