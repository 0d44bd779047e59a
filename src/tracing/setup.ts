/**
 * Builds the OpenTelemetry SDK from `tracing:` in router.yaml and the standard OTEL_*
 * variables (the file wins where both say something). Off unless configured: `enabled:
 * true`, or `enabled` unset and an OTLP endpoint in the environment. OTEL_SDK_DISABLED=true
 * turns it off whatever the file says. Read once at start: changing it needs a restart.
 */
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { parseKeyPairsIntoRecord, W3CTraceContextPropagator } from "@opentelemetry/core";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { AlwaysOffSampler, AlwaysOnSampler, BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler, TracerProvider, type Sampler, type SpanExporter } from "@opentelemetry/sdk-trace";
import { Tracing, TRACING_OFF } from "./index.js";
import { tracingEnabled, type Env, type TracingConfig } from "./enabled.js";

export type { TracingConfig } from "./enabled.js";

/** What the config and the environment resolve to; null when tracing stays off. */
export interface TracingSettings {
  /** The OTLP/HTTP traces URL. */
  url: string;
  headers?: Record<string, string>;
  serviceName: string;
  resource: Record<string, string>;
  sampler: Sampler;
  /** Human-readable sampler name, for the start-up log line. */
  samplerName: string;
  captureContent: boolean;
  /** The batch processor's OTEL_BSP_* settings that were set (the SDK's defaults otherwise). */
  batch: { scheduledDelayMillis?: number; maxQueueSize?: number; maxExportBatchSize?: number; exportTimeoutMillis?: number };
}

/** Pure: the settings for a config and an environment (unit-tested), or null when tracing is off. */
export function tracingSettings(cfg: TracingConfig, env: Env): TracingSettings | null {
  if (!tracingEnabled(cfg, env)) return null;
  const envEndpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT;
  const resource = parseKeyPairsIntoRecord(env.OTEL_RESOURCE_ATTRIBUTES);
  const serviceName = cfg.service_name ?? (env.OTEL_SERVICE_NAME || resource["service.name"] || "responses-router");
  const { sampler, name } = cfg.sample_ratio !== undefined ? ratioSampler(cfg.sample_ratio) : envSampler(env);
  return {
    url: cfg.endpoint ?? exportUrl(env),
    headers: Object.keys(cfg.headers).length > 0 ? cfg.headers : envHeaders(env),
    serviceName,
    resource: { ...resource, "service.name": serviceName },
    sampler,
    samplerName: name,
    captureContent: cfg.capture_content,
    batch: {
      scheduledDelayMillis: positive(env.OTEL_BSP_SCHEDULE_DELAY),
      maxQueueSize: positive(env.OTEL_BSP_MAX_QUEUE_SIZE),
      maxExportBatchSize: positive(env.OTEL_BSP_MAX_EXPORT_BATCH_SIZE),
      exportTimeoutMillis: positive(env.OTEL_BSP_EXPORT_TIMEOUT),
    },
  };
}

function positive(raw: string | undefined): number | undefined {
  const n = Number(raw);
  return raw && Number.isFinite(n) && n > 0 ? n : undefined;
}

/** Where spans go without `tracing.endpoint`: the OTLP variables as the specification reads them (a signal-specific URL as is, the general one + /v1/traces). */
function exportUrl(env: Env): string {
  if (env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  if (env.OTEL_EXPORTER_OTLP_ENDPOINT) return `${env.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, "")}/v1/traces`;
  return "http://localhost:4318/v1/traces";
}

/** OTEL_EXPORTER_OTLP_HEADERS, then OTEL_EXPORTER_OTLP_TRACES_HEADERS over it (`k=v,k2=v2`, URL-encoded values). */
function envHeaders(env: Env): Record<string, string> | undefined {
  const headers = { ...parseKeyPairsIntoRecord(env.OTEL_EXPORTER_OTLP_HEADERS), ...parseKeyPairsIntoRecord(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS) };
  return Object.keys(headers).length > 0 ? headers : undefined;
}

function ratioSampler(ratio: number): { sampler: Sampler; name: string } {
  return { sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) }), name: `parentbased_traceidratio ${ratio}` };
}

/** OTEL_TRACES_SAMPLER / OTEL_TRACES_SAMPLER_ARG as the specification names them; default parentbased_always_on. */
function envSampler(env: Env): { sampler: Sampler; name: string } {
  const name = (env.OTEL_TRACES_SAMPLER || "parentbased_always_on").trim().toLowerCase();
  const arg = Number(env.OTEL_TRACES_SAMPLER_ARG ?? "1");
  const ratio = Number.isFinite(arg) && arg >= 0 && arg <= 1 ? arg : 1;
  switch (name) {
    case "always_on":
      return { sampler: new AlwaysOnSampler(), name };
    case "always_off":
      return { sampler: new AlwaysOffSampler(), name };
    case "traceidratio":
      return { sampler: new TraceIdRatioBasedSampler(ratio), name: `${name} ${ratio}` };
    case "parentbased_always_off":
      return { sampler: new ParentBasedSampler({ root: new AlwaysOffSampler() }), name };
    case "parentbased_traceidratio":
      return ratioSampler(ratio);
    default:
      return { sampler: new ParentBasedSampler({ root: new AlwaysOnSampler() }), name: "parentbased_always_on" };
  }
}

/**
 * The instance's Tracing: TRACING_OFF when not configured, else a tracer provider with a batch
 * processor posting OTLP/HTTP JSON. `exporter` replaces the OTLP one (tests of the set-up only).
 */
export function createTracing(cfg: TracingConfig, env: Env, storeSystem: string, exporter?: SpanExporter): { tracing: Tracing; settings: TracingSettings | null } {
  const settings = tracingSettings(cfg, env);
  if (!settings) return { tracing: TRACING_OFF, settings };
  const provider = new TracerProvider({
    resource: resourceFromAttributes(settings.resource),
    sampler: settings.sampler,
    spanProcessors: [new BatchSpanProcessor({ ...settings.batch, exporter: exporter ?? new OTLPTraceExporter({ url: settings.url, headers: settings.headers }) })],
  });
  const tracing = new Tracing({
    tracer: provider.getTracer("responses-router"),
    propagator: new W3CTraceContextPropagator(),
    captureContent: settings.captureContent,
    storeSystem,
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  });
  return { tracing, settings };
}
