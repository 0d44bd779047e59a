/**
 * Whether tracing is on, decided without loading the OpenTelemetry SDK (setup.ts loads it, and
 * only a router that traces imports setup.ts): `enabled: true`, or `enabled` unset and an OTLP
 * endpoint in the file or the environment; OTEL_SDK_DISABLED=true turns it off whatever the file says.
 */
import type { RouterConfig } from "../config/load.js";

export type TracingConfig = RouterConfig["tracing"];
export type Env = Readonly<Record<string, string | undefined>>;

const TRUE = /^\s*true\s*$/i;

export function tracingEnabled(cfg: TracingConfig, env: Env): boolean {
  if (TRUE.test(env.OTEL_SDK_DISABLED ?? "")) return false;
  const envEndpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT;
  return cfg.enabled ?? (cfg.endpoint !== undefined || !!envEndpoint);
}
