import { describe, expect, it } from "vitest";
import { buildConfig } from "../../src/config/load.js";
import { TRACING_OFF } from "../../src/tracing/index.js";
import { tracingSettings } from "../../src/tracing/setup.js";

/** How `tracing:` and the OTEL_* variables combine (the file wins; OTEL_SDK_DISABLED wins over both). */
const cfg = (tracing: Record<string, unknown> = {}) =>
  buildConfig({ endpoints: [{ name: "e", url: "http://127.0.0.1:1/v1", kind: "chat" }], models: { m: { endpoints: ["e"] } }, tracing }).tracing;

describe("tracing settings", () => {
  it("off unless configured", () => {
    expect(tracingSettings(cfg(), {})).toBeNull();
    expect(tracingSettings(cfg({ enabled: false, endpoint: "http://c:4318/v1/traces" }), { OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318" })).toBeNull();
  });

  it("an endpoint in the file or in OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT turns it on", () => {
    expect(tracingSettings(cfg({ endpoint: "http://c:4318/v1/traces" }), {})?.url).toBe("http://c:4318/v1/traces");
    expect(tracingSettings(cfg(), { OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318/" })?.url).toBe("http://c:4318/v1/traces");
    expect(tracingSettings(cfg(), { OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://t:9/x" })?.url).toBe("http://t:9/x");
    expect(tracingSettings(cfg({ enabled: true }), {})?.url).toBe("http://localhost:4318/v1/traces");
  });

  it("OTEL_SDK_DISABLED=true turns it off whatever the file says", () => {
    expect(tracingSettings(cfg({ enabled: true }), { OTEL_SDK_DISABLED: "true" })).toBeNull();
    expect(tracingSettings(cfg({ enabled: true }), { OTEL_SDK_DISABLED: "false" })).not.toBeNull();
  });

  it("service name: the file, then OTEL_SERVICE_NAME, then OTEL_RESOURCE_ATTRIBUTES, then responses-router", () => {
    const env = { OTEL_SERVICE_NAME: "env-name", OTEL_RESOURCE_ATTRIBUTES: "service.name=attr-name,deployment.environment.name=prod" };
    expect(tracingSettings(cfg({ enabled: true, service_name: "file-name" }), env)?.serviceName).toBe("file-name");
    expect(tracingSettings(cfg({ enabled: true }), env)?.resource).toEqual({ "service.name": "env-name", "deployment.environment.name": "prod" });
    expect(tracingSettings(cfg({ enabled: true }), { OTEL_RESOURCE_ATTRIBUTES: "service.name=attr-name" })?.serviceName).toBe("attr-name");
    expect(tracingSettings(cfg({ enabled: true }), {})?.serviceName).toBe("responses-router");
  });

  it("sampler: sample_ratio, else OTEL_TRACES_SAMPLER(_ARG), else parent-based always on", () => {
    expect(tracingSettings(cfg({ enabled: true, sample_ratio: 0.25 }), { OTEL_TRACES_SAMPLER: "always_off" })?.samplerName).toBe("parentbased_traceidratio 0.25");
    expect(tracingSettings(cfg({ enabled: true }), { OTEL_TRACES_SAMPLER: "traceidratio", OTEL_TRACES_SAMPLER_ARG: "0.1" })?.samplerName).toBe("traceidratio 0.1");
    expect(tracingSettings(cfg({ enabled: true }), { OTEL_TRACES_SAMPLER: "always_off" })?.samplerName).toBe("always_off");
    expect(tracingSettings(cfg({ enabled: true }), {})?.samplerName).toBe("parentbased_always_on");
  });

  it("headers: the file's, else OTEL_EXPORTER_OTLP_HEADERS with the traces-specific ones over them", () => {
    expect(tracingSettings(cfg({ enabled: true, headers: { authorization: "Bearer x" } }), { OTEL_EXPORTER_OTLP_HEADERS: "a=1" })?.headers).toEqual({ authorization: "Bearer x" });
    expect(tracingSettings(cfg({ enabled: true }), { OTEL_EXPORTER_OTLP_HEADERS: "a=1,b=2", OTEL_EXPORTER_OTLP_TRACES_HEADERS: "b=3" })?.headers).toEqual({ a: "1", b: "3" });
    expect(tracingSettings(cfg({ enabled: true }), {})?.headers).toBeUndefined();
  });

  it("OTEL_BSP_* set the batch processor; unset or invalid ones leave its defaults", () => {
    expect(tracingSettings(cfg({ enabled: true }), { OTEL_BSP_SCHEDULE_DELAY: "1000", OTEL_BSP_MAX_QUEUE_SIZE: "8192", OTEL_BSP_MAX_EXPORT_BATCH_SIZE: "x" })?.batch).toEqual({
      scheduledDelayMillis: 1000,
      maxQueueSize: 8192,
      maxExportBatchSize: undefined,
      exportTimeoutMillis: undefined,
    });
  });

  it("capture_content is off by default", () => {
    expect(tracingSettings(cfg({ enabled: true }), {})?.captureContent).toBe(false);
    expect(tracingSettings(cfg({ enabled: true, capture_content: true }), {})?.captureContent).toBe(true);
  });

  it("a bad endpoint or ratio is a config error", () => {
    expect(() => cfg({ endpoint: "not a url" })).toThrow();
    expect(() => cfg({ endpoint: "ftp://c/v1/traces" })).toThrow();
    expect(() => cfg({ sample_ratio: 2 })).toThrow();
  });
});

describe("TRACING_OFF", () => {
  it("makes no span and runs store calls as they are", async () => {
    expect(TRACING_OFF.on).toBe(false);
    expect(TRACING_OFF.startRequest("POST", () => "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")).toBeUndefined();
    expect(TRACING_OFF.current()).toBeUndefined();
    expect(TRACING_OFF.carrier()).toBeUndefined();
    expect(TRACING_OFF.startJob("job", { traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" })).toBeUndefined();
    expect(await TRACING_OFF.store("op", async () => 42)).toBe(42);
  });
});
