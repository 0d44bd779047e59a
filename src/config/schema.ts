import { z } from "zod";
import { parseDuration } from "./duration.js";

/** A duration as written in router.yaml ("30s", "1h", 250ms", or seconds), normalised to milliseconds. */
const duration = z.union([z.string(), z.number()]).transform((v, ctx) => {
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

/**
 * Where Redis is, beyond a plain URL: Sentinel (the router asks the sentinels for the current
 * primary and follows failovers), credentials kept out of the URL, and TLS with a private CA.
 */
const redisTargetSchema = z
  .object({
    /** Sentinel addresses ("host:port" or {host, port}); with them, `name` is the monitored group. */
    sentinels: z.array(hostPort).min(1).optional(),
    name: z.string().min(1).optional(),
    username: z.string().optional(),
    password: z.string().optional(),
    /** The sentinels' own password (requirepass in sentinel.conf), if any. */
    sentinel_password: z.string().optional(),
    /** TLS to the Redis servers (implied by a rediss:// URL); `sentinels: true` also to the sentinels. */
    tls: z
      .object({
        ca_file: z.string().min(1).optional(),
        servername: z.string().min(1).optional(),
        sentinels: z.boolean().default(false),
      })
      .strict()
      .optional(),
  })
  .strict();

const timeoutsSchema = z
  .object({
    connect: duration.default(5_000),
    // Long by default: a local backend may spend a while on prefill before its first token.
    first_byte: duration.default(300_000),
    idle: duration.default(120_000),
  })
  .strict();

const websocketSchema = z
  .object({
    /** A socket is ended after this long (OpenAI's limit: 60 minutes) with `websocket_connection_limit_reached`; clients reconnect. */
    max_connection_duration: duration.default(3_600_000),
    /** Ping an idle socket this often; one that has not answered the previous ping by the next is dropped. */
    ping_interval: duration.default(30_000),
    /** Largest message a client may send; a larger one closes the socket with 1009. */
    max_message_bytes: z.number().int().positive().default(20 * 1024 * 1024),
    /** Responses in flight at once on one socket (`stream_id` lanes); a create beyond it is an `error` event. */
    max_lanes: z.number().int().positive().default(16),
  })
  .strict()
  .prefault({});

/** An Anthropic API version: a date, as the `anthropic-version` header takes it. */
const anthropicVersion = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, "an API version date such as 2023-06-01");

/** Thinking budget in tokens per `reasoning.effort` (0: no thinking at that effort), for `kind: anthropic`. */
const thinkingBudgetSchema = z
  .object({
    minimal: z.number().int().min(0).default(1024),
    low: z.number().int().min(0).default(2048),
    medium: z.number().int().min(0).default(8192),
    high: z.number().int().min(0).default(16384),
    xhigh: z.number().int().min(0).default(32768),
  })
  .strict()
  .refine((b) => Object.values(b).every((n) => n === 0 || n >= 1024), "a thinking budget is 0 (off) or at least 1024 tokens (Anthropic's minimum)");

const endpointSchema = z
  .object({
    name,
    url: z.url({ protocol: /^https?$/ }),
    kind: z.enum(["openai", "chat", "anthropic"]),
    api_key: z.string().optional(),
    headers: z.record(z.string(), z.string()).default({}),
    max_concurrency: z.number().int().positive().default(16),
    weight: z.number().positive().default(1),
    timeouts: timeoutsSchema.prefault({}),
    /** How `developer` messages reach a chat backend whose template may not know the role. */
    developer_role: z.enum(["system", "developer"]).default("system"),
    /** `kind: anthropic`: the `anthropic-version` header (unset: the version the installed @anthropic-ai/sdk sends); the request is translated for it. */
    anthropic_version: anthropicVersion.optional(),
    /** `kind: anthropic`: `anthropic-beta` features sent with every request to this endpoint. */
    anthropic_beta: z.array(z.string().min(1)).optional(),
  })
  .strict();

const modelEndpointRef = z.union([
  name,
  z.object({ name, upstream_model: z.string().min(1).optional(), weight: z.number().positive().optional() }).strict(),
]);

const modelSchema = z
  .object({
    endpoints: z.array(modelEndpointRef).min(1),
    upstream_model: z.string().min(1).optional(),
    cache: z.object({ ttl: duration.default(3_600_000), enabled: z.boolean().default(true) }).strict().optional(),
    /**
     * Hosted tools (mcp, web_search, file_search, ...). Unset: on chat endpoints the router runs
     * the ones it can (MCP; web search with a provider) and drops the rest; on openai endpoints
     * they pass through. `run`: the router runs what it can on every kind (the rest is dropped on
     * chat). `drop` / `reject`: on chat, every hosted tool is dropped / a 400. Operator-defined MCP
     * servers (`tools.mcp.servers`) are run by the router whatever this says.
     */
    hosted_tools: z.enum(["run", "drop", "reject"]).optional(),
    /**
     * On openai endpoints, ask for `reasoning.encrypted_content` so reasoning can be
     * replayed next turn (upstream keeps nothing: store is false). Unset: on when the
     * request sets `reasoning` or the model name looks like a reasoning model.
     */
    encrypted_reasoning: z.boolean().optional(),
    /** The model's context window in tokens: `truncation: "auto"` drops the oldest turns to fit it, `disabled` answers 400 `context_length_exceeded` past it. */
    context_window: z.number().int().positive().optional(),
    /** On chat backends without file support: send text files (`input_file`) as text parts instead of chat `file` parts. */
    inline_text_files: z.boolean().default(false),
    /** Models that serve the request, in order, when every endpoint of this model's pool failed before the first byte. */
    fallbacks: z.array(z.string().min(1)).default([]),
    /** The most tokens the model writes in one answer (told to clients in /v1/models); on `kind: anthropic`, which requires `max_tokens`, the one sent when the request sets no `max_output_tokens` (8192 when unset). */
    max_output_tokens: z.number().int().positive().optional(),
    /** What the model reads besides text (told to clients in /v1/models and Codex's catalog). */
    input_modalities: z.array(z.enum(["text", "image", "audio", "file"])).min(1).optional(),
    /** The model reasons (told to clients in /v1/models; Codex offers reasoning efforts and summaries). */
    reasoning: z.boolean().optional(),
    /** `kind: anthropic`: the `thinking.budget_tokens` for each `reasoning.effort`. */
    thinking_budget: thinkingBudgetSchema.prefault({}),
    /** `kind: anthropic`: `cache_control` breakpoints on the stable prefix (tools, system, earlier turns). */
    prompt_caching: z.boolean().default(true),
    /**
     * `kind: anthropic`: how `text.format: json_schema` is asked for: `tool` (a forced tool whose
     * input is the object; every model) or `native` (`output_config.format`, where the model supports it).
     */
    structured_output: z.enum(["tool", "native"]).default("tool"),
    /** `kind: anthropic`: `anthropic-beta` features sent for this model, besides its endpoint's. */
    anthropic_beta: z.array(z.string().min(1)).optional(),
  })
  .strict();

const positiveInt = z.number().int().positive();

/** Where the router's hosted `web_search` tool searches (src/tools/search/). */
const webSearchSchema = z
  .object({
    provider: z.enum(["searxng", "brave", "tavily"]),
    /** The provider's base URL; required for searxng (self-hosted), the public API when unset for brave and tavily. */
    url: z.url({ protocol: /^https?$/ }).optional(),
    /** The provider's key (use ${ENV}); required for brave and tavily, sent as a Bearer token to searxng when set. */
    api_key: z.string().min(1).optional(),
    /** How long one search may take before it fails. */
    timeout: duration.default(15_000),
  })
  .strict()
  .superRefine((ws, ctx) => {
    if (ws.provider === "searxng" && !ws.url) ctx.addIssue({ code: "custom", path: ["url"], message: "provider searxng needs the url of a SearXNG instance" });
    if (ws.provider !== "searxng" && !ws.api_key) ctx.addIssue({ code: "custom", path: ["api_key"], message: `provider ${ws.provider} needs an api_key` });
  });

export type WebSearchConfig = z.output<typeof webSearchSchema>;

export const apiKeySchema = z
  .object({
    name,
    key: z.string().min(1),
    /** Models this key may call: names or globs (`*`, `?`). Unset: every model. */
    models: z.array(z.string().min(1)).optional(),
    /** Per-key rate limits, enforced on every inference route (shared by all instances in Redis mode). */
    limits: z
      .object({ requests_per_minute: positiveInt.optional(), tokens_per_minute: positiveInt.optional(), max_concurrent: positiveInt.optional() })
      .strict()
      .optional(),
    /** Token budgets per UTC day and per calendar month (UTC). */
    budget: z.object({ tokens_per_day: positiveInt.optional(), tokens_per_month: positiveInt.optional() }).strict().optional(),
    /** `admin` keys may also read GET /v1/usage and GET /health/backends, use the admin API (/v1/admin/...) and sign in to the console (/ui/). */
    role: z.enum(["admin", "user"]).default("user"),
    /** Hosted tools this key may use: tool types (`mcp`, `web_search`, ...) and MCP server labels. Unset: all; []: none. */
    tools: z.array(z.string().min(1)).optional(),
  })
  .strict();

const toolFilterSchema = z.object({ tool_names: z.array(z.string().min(1)).optional(), read_only: z.boolean().optional() }).strict();

/** `require_approval` as the Responses API has it: always, never, or which tools need it. */
const approvalSchema = z.union([z.enum(["always", "never"]), z.object({ always: toolFilterSchema.optional(), never: toolFilterSchema.optional() }).strict()]);

/** An MCP server the operator defines: clients name it by `server_label` alone, the router runs it on every kind. */
const mcpServerSchema = z
  .object({
    label: z.string().min(1).regex(/^[A-Za-z0-9_-]+$/, "may contain only letters, digits, _ and -"),
    url: z.url({ protocol: /^https?$/ }),
    /** Sent on every request to the server (a token: use ${ENV}); never logged or echoed. */
    headers: z.record(z.string(), z.string()).default({}),
    /** Tools of the server clients may use (names, or a filter); unset: all. */
    allowed_tools: z.union([z.array(z.string().min(1)), toolFilterSchema]).optional(),
    /** Used when the client's tool sets none. */
    require_approval: approvalSchema.default("never"),
    description: z.string().optional(),
  })
  .strict();

/** The tools the router runs itself between model rounds (src/tools/, src/responses/tool-loop/). */
const toolsSchema = z
  .object({
    /** Upstream rounds one response may take (model -> tools -> model ...); past it the response ends `incomplete`. */
    max_rounds: z.number().int().min(1).max(100).default(10),
    mcp: z
      .object({
        /**
         * `server_url` patterns clients may name (`*` matches any run of characters). None by default:
         * clients can then use only the servers below. Loopback, link-local and private addresses
         * are refused unless a pattern names the host literally (no `*` in its host).
         */
        allowed_urls: z.array(z.string().min(1)).default([]),
        /** One MCP request (connect, list, call) may take this long; then the call is an `mcp_call` with an error. */
        call_timeout: duration.default(60_000),
        /** A tool result larger than this is not given to the model; the call is an `mcp_call` with an error. */
        max_result_bytes: z.number().int().positive().default(1_000_000),
        servers: z.array(mcpServerSchema).default([]),
      })
      .strict()
      .prefault({}),
    /** The search provider hosted `web_search` tools run on (src/tools/search/); unset: web search keeps the model's `hosted_tools` behaviour. */
    web_search: webSearchSchema.optional(),
  })
  .strict()
  .prefault({});

export const routerConfigSchema = z
  .object({
    server: z
      .object({
        host: z.string().default("127.0.0.1"),
        port: z.number().int().min(0).max(65535).default(8080),
        api_keys: z.array(apiKeySchema).default([]),
        /** Health and metrics routes answer without a key when true. */
        public_health: z.boolean().default(true),
        public_metrics: z.boolean().default(true),
        max_body_bytes: z.number().int().positive().default(20 * 1024 * 1024),
        shutdown_timeout: duration.default(30_000),
        /** An SSE stream silent this long gets a `: keepalive` comment line (0: never), so proxies in between do not cut it. */
        sse_keepalive: duration.default(15_000),
        /** GET /v1/responses with `Upgrade: websocket`: Responses over one persistent socket. */
        websocket: websocketSchema,
        /** The web console at /ui/ (sign in with an admin key); false: /ui/ answers 404, the admin API stays. */
        admin_ui: z.boolean().default(true).describe("The web console at /ui/ (sign in with an admin key); false: /ui/ answers 404, the admin API (/v1/admin/...) stays."),
      })
      .strict()
      .prefault({}),
    endpoints: z.array(endpointSchema).min(1),
    models: z.record(z.string().min(1), modelSchema),
    /** `input_file` parts given by `file_url`, fetched by the router for chat and anthropic backends (it sends them file contents only). */
    files: z
      .object({
        fetch: z
          .object({
            /**
             * URL patterns the router may fetch (`*` matches any run of characters): none by default.
             * Loopback, private and link-local addresses are refused unless a pattern names that host literally.
             */
            allow: z.array(z.string().min(1)).default([]),
            max_bytes: z.number().int().positive().default(20 * 1024 * 1024),
            timeout: duration.default(10_000),
          })
          .strict()
          .prefault({}),
      })
      .strict()
      .prefault({}),
    routing: z
      .object({
        /** How long a request may wait for a free slot before 429. */
        queue_timeout: duration.default(10_000),
        /** A follow-up turn (previous_response_id or conversation) prefers the endpoint that served the previous one while it is healthy and has a free slot. */
        affinity: z.boolean().default(true),
        retry: z
          .object({ attempts: z.number().int().min(1).max(10).default(3), max_time: duration.default(30_000) })
          .strict()
          .prefault({}),
        health: z
          .object({
            failure_threshold: z.number().int().min(1).default(3),
            cooldown: duration.default(5_000),
            max_cooldown: duration.default(300_000),
            probe_interval: duration.optional(),
          })
          .strict()
          .prefault({}),
      })
      .strict()
      .prefault({}),
    storage: z
      .object({
        /** One Redis server: redis://[user:pass@]host:port[/db], or rediss:// for TLS. */
        redis_url: z.string().default(""),
        /** Redis Sentinel, a password kept out of the URL, TLS options (see redisTargetSchema). */
        redis: redisTargetSchema.optional(),
        /**
         * `primary`: a write counts once the primary has it (replication is asynchronous, so a
         * failover can lose the last writes). `replica`: the writes a client depends on (stored
         * responses, conversation turns, background job records) also wait for one replica
         * (WAIT 1 durability_timeout); unconfirmed in time, the request fails with 503
         * store_unavailable instead of acknowledging a write a failover could lose.
         */
        durability: z.enum(["primary", "replica"]).default("primary"),
        durability_timeout: duration.default(1_000),
        prefix: z.string().default("rr:"),
        ttl: duration.default(30 * 86_400_000),
        /** How long a background response's recorded stream events stay resumable (capped at ttl). */
        events_ttl: duration.default(86_400_000),
        memory: z
          .object({
            max_entries: z.number().int().positive().default(10_000),
            max_bytes: z.number().int().positive().default(256 * 1024 * 1024),
          })
          .strict()
          .prefault({}),
      })
      .strict()
      .prefault({}),
    background: z
      .object({
        /** Background jobs one instance runs at a time. */
        concurrency: z.number().int().min(1).default(4),
        /**
         * Redis mode: a running job holds a lease its instance renews; when the instance dies the
         * lease expires and another instance resolves the job (fails it if it had streamed, else
         * runs it). Shorter leases notice a dead instance sooner at the cost of more Redis traffic.
         */
        lease: z
          .object({
            lock_duration: duration.default(30_000),
            stalled_interval: duration.default(15_000),
            max_stalled_count: z.number().int().min(0).default(1),
          })
          .strict()
          .prefault({}),
        /**
         * On shutdown, how long the instance lets the background jobs it runs finish (it takes no
         * new ones meanwhile) before handing them back to the queue (Redis mode) or failing them
         * (memory mode). Longer than server.shutdown_timeout: jobs outlive the HTTP connections.
         */
        drain_timeout: duration.default(120_000),
        /** How long POST /cancel waits for the instance running the job to record the cancellation (with partial output) before recording it itself. */
        cancel_wait: duration.default(3_000),
      })
      .strict()
      .prefault({}),
    compaction: z
      .object({
        /**
         * The secret the router's compaction items are sealed with (AES-256-GCM, key derived by
         * HKDF), e.g. `${ROUTER_COMPACTION_KEY}`. Every instance sharing a store needs the same one.
         * Without it a random per-process key is used (logged at start): items then open only on
         * the instance that sealed them, and not after a restart.
         */
        key: z
          .string()
          .refine((v) => v === "" || v.length >= 16, "must be at least 16 characters (empty: a random key per process)")
          .optional(),
        /** Earlier keys, for rotation: items sealed with them still open; new items are sealed with `key`. */
        previous_keys: z.array(z.string().min(16, "must be at least 16 characters")).default([]),
        /** The instruction the chat backend gets to write the summary (default: translate/chat/compaction.ts). */
        prompt: z.string().min(1).optional(),
        /** Newest user messages a compaction keeps, in tokens (4 characters a token), as the Codex CLI does. */
        user_message_max_tokens: positiveInt.default(20_000),
        /** max_tokens of the summarisation call on chat backends (unset: the backend's default). */
        summary_max_tokens: positiveInt.optional(),
      })
      .strict()
      .prefault({}),
    tools: toolsSchema,
    logging: z
      .object({
        level: z.enum(["trace", "debug", "info", "warn", "error", "fatal", "silent"]).default("info"),
      })
      .strict()
      .prefault({}),
    /**
     * OpenTelemetry traces (OTLP/HTTP). Off unless configured: `enabled: true`, or `enabled` unset and
     * an endpoint here or in OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT. Read at start: a change needs a restart.
     */
    tracing: z
      .object({
        enabled: z.boolean().optional(),
        /** The collector's OTLP/HTTP traces URL (e.g. http://otel-collector:4318/v1/traces). Unset: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces, else http://localhost:4318/v1/traces. */
        endpoint: z.url({ protocol: /^https?$/ }).optional(),
        /** Headers sent to the collector (a token: use ${ENV}). Unset: OTEL_EXPORTER_OTLP_(TRACES_)HEADERS. */
        headers: z.record(z.string(), z.string()).default({}),
        /** `service.name` of the spans. Unset: OTEL_SERVICE_NAME, else responses-router. */
        service_name: z.string().min(1).optional(),
        /** Share of new traces recorded (parent-based: a client's sampled flag wins). Unset: OTEL_TRACES_SAMPLER(_ARG), else every trace. */
        sample_ratio: z.number().min(0).max(1).optional(),
        /** Put prompt and completion text on request spans (gen_ai.input.messages / gen_ai.output.messages). Off: spans carry no text. */
        capture_content: z.boolean().default(false),
      })
      .strict()
      .prefault({}),
  })
  .strict()
  .superRefine((cfg, ctx) => {
    const redis = cfg.storage.redis;
    if (redis?.sentinels && !redis.name) ctx.addIssue({ code: "custom", path: ["storage", "redis", "name"], message: "storage.redis.sentinels needs the monitored group's name" });
    if (redis?.sentinels && cfg.storage.redis_url) ctx.addIssue({ code: "custom", path: ["storage", "redis_url"], message: "set either storage.redis_url or storage.redis.sentinels, not both" });
    if (redis && !redis.sentinels && !cfg.storage.redis_url) ctx.addIssue({ code: "custom", path: ["storage", "redis"], message: "storage.redis needs sentinels, or a storage.redis_url it applies to" });
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
