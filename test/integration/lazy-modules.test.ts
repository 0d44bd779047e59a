import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/**
 * A router that uses neither Redis, tracing nor MCP does not load their libraries: ioredis and
 * BullMQ come with a Redis in the config, the OpenTelemetry SDK (and @opentelemetry/core, where
 * the trace-context propagator lives) with tracing on, the MCP SDK when MCP is configured (or
 * with its first session) (~26 MB of resident memory together).
 * Their own suites run them.
 */
const FIXTURE = fileURLToPath(new URL("./fixtures/loaded-packages.ts", import.meta.url));

function loadedPackages(config: Record<string, unknown>, settleMs = 0): string[] {
  // The span of the fixture's one request goes nowhere: its export gives up at once.
  const env = { ...process.env, ROUTER_CONFIG: JSON.stringify(config), OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: "200", OTEL_BSP_EXPORT_TIMEOUT: "200", SETTLE_MS: String(settleMs) };
  const out = execFileSync(process.execPath, ["--import", "tsx", FIXTURE], { env, encoding: "utf8", timeout: 60_000 });
  return JSON.parse(out) as string[];
}

describe("libraries a router loads only when it uses them", () => {
  it("memory store, no tracing, no MCP: none of them", () => {
    const loaded = loadedPackages({ endpoints: [{ name: "box", url: "http://127.0.0.1:9/v1", kind: "chat" }], models: { m: { endpoints: ["box"] } } });
    // What every router loads is seen (the check sees both ESM imports and CommonJS requires).
    expect(loaded).toEqual(expect.arrayContaining(["hono", "undici", "prom-client", "zod"]));
    // @opentelemetry/core (the W3C propagator's home) brings the semantic conventions, ~400 KB of source.
    for (const lazy of ["ioredis", "bullmq", "@modelcontextprotocol/sdk", "@opentelemetry/sdk-trace", "@opentelemetry/exporter-trace-otlp-http", "@opentelemetry/resources", "@opentelemetry/core", "@opentelemetry/semantic-conventions"]) {
      expect(loaded).not.toContain(lazy);
    }
  });

  it("tracing on: the OpenTelemetry SDK, and still no Redis or MCP", () => {
    const loaded = loadedPackages({
      endpoints: [{ name: "box", url: "http://127.0.0.1:9/v1", kind: "chat" }],
      models: { m: { endpoints: ["box"] } },
      tracing: { enabled: true, endpoint: "http://127.0.0.1:9/v1/traces" },
    });
    expect(loaded).toEqual(expect.arrayContaining(["@opentelemetry/sdk-trace", "@opentelemetry/exporter-trace-otlp-http"]));
    expect(loaded).not.toContain("ioredis");
    expect(loaded).not.toContain("@modelcontextprotocol/sdk");
  });

  it("MCP configured (allowed_urls or operator servers): the MCP SDK, loaded ahead of the first session", () => {
    const loaded = loadedPackages(
      { endpoints: [{ name: "box", url: "http://127.0.0.1:9/v1", kind: "chat" }], models: { m: { endpoints: ["box"] } }, tools: { mcp: { allowed_urls: ["https://mcp.example.com/*"] } } },
      1500,
    );
    expect(loaded).toContain("@modelcontextprotocol/sdk");
    expect(loaded).not.toContain("ioredis");
  });
});
