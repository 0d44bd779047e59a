/**
 * In process, no HTTP: the CPU the tracing API and SDK spend on one request's two spans
 * (the request's SERVER span and one upstream attempt's CLIENT span with the attributes the
 * router sets), through the real batch processor, with the export either dropped (`noop`:
 * span creation, attributes, context, trace headers) or serialised as OTLP JSON (`json`:
 * plus what the exporter's serialiser costs), sending nothing.
 *   node --import tsx test/bench/tracing-spans.ts [noop|json] [requests]
 */
import { JsonTraceSerializer } from "@opentelemetry/otlp-transformer";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace";
import { buildConfig } from "../../src/config/load.js";
import { SpanKind } from "../../src/tracing/index.js";
import { createTracing } from "../../src/tracing/setup.js";

const mode = process.argv[2] === "json" ? "json" : "noop";
const requests = Number(process.argv[3] ?? 20_000);
let bytes = 0;
const exporter: SpanExporter = {
  export(spans: ReadableSpan[], done) {
    if (mode === "json") bytes += JsonTraceSerializer.serializeRequest(spans)?.length ?? 0;
    done({ code: 0 });
  },
  shutdown: async () => {},
};
const cfg = buildConfig({ endpoints: [{ name: "e", url: "http://127.0.0.1:1/v1", kind: "chat" }], models: { m: { endpoints: ["e"] } }, tracing: { enabled: true } });
const { tracing } = createTracing(cfg.tracing, {}, "memory", exporter);

function request(): void {
  const server = tracing.startRequest("POST", () => undefined, { "http.request.method": "POST", "url.path": "/v1/responses", "router.request_id": "req_0123456789abcdef" })!;
  tracing.within(server, () => {
    server.setAttributes({ "gen_ai.operation.name": "chat", "gen_ai.request.model": "m", "gen_ai.response.id": "resp_0123456789abcdef" });
    const call = tracing.startChild("chat m", SpanKind.CLIENT)!;
    call.setAttributes({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "openai_compatible",
      "gen_ai.request.model": "m",
      "server.address": "127.0.0.1",
      "server.port": 8000,
      "http.request.method": "POST",
      "router.upstream": "e",
      "router.model": "m",
      "router.attempt": 0,
      "router.fallback": false,
      "router.affinity": false,
      "router.panic_routed": false,
    });
    tracing.headers(call);
    call.setAttributes({ "http.response.status_code": 200, "gen_ai.response.id": "resp_0123456789abcdef", "gen_ai.response.model": "m", "gen_ai.response.finish_reasons": ["completed"], "gen_ai.usage.input_tokens": 12, "gen_ai.usage.output_tokens": 30 });
    call.end();
  });
  server.updateName("POST /v1/responses");
  server.setAttributes({ "http.route": "/v1/responses", "http.response.status_code": 200, "gen_ai.response.model": "m", "router.upstream": "e", "gen_ai.usage.input_tokens": 12, "gen_ai.usage.output_tokens": 30 });
  server.end();
}

for (let i = 0; i < 2_000; i++) request(); // warm-up
await tracing.flush();
bytes = 0;
const c0 = process.cpuUsage();
for (let i = 0; i < requests; i++) {
  request();
  if (i % 500 === 499) await tracing.flush(); // the batch processor's queue holds 2048 spans
}
await tracing.flush();
const c = process.cpuUsage(c0);
console.log(`${mode}: ${((c.user + c.system) / requests).toFixed(1)} µs CPU per request (2 spans)${mode === "json" ? `, ${(bytes / requests / 2).toFixed(0)} B of OTLP JSON per span` : ""}`);
await tracing.shutdown();
