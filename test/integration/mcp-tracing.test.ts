/** Traces of a response that ran a hosted MCP tool: an INTERNAL span per model round, a CLIENT span per tool listing and call. */
import { afterAll, beforeAll, expect, it } from "vitest";
import { startMcpServer, type TestMcpServer } from "../helpers/mcp-server.js";
import { chatCompletion, startMockUpstream, type MockUpstream } from "../helpers/mock-upstream.js";
import { KIND, startOtlpReceiver, type OtlpReceiver } from "../helpers/otlp-receiver.js";
import { startTestRouter, type TestRouter } from "../helpers/router.js";

let chat: MockUpstream;
let mcp: TestMcpServer;
let otlp: OtlpReceiver;
let router: TestRouter;

beforeAll(async () => {
  chat = await startMockUpstream();
  mcp = await startMcpServer();
  otlp = await startOtlpReceiver();
  chat.setDefault("/chat/completions", (rec) => {
    const told = (rec.body.messages as { role: string }[]).some((m) => m.role === "tool");
    return { kind: "json", body: told ? chatCompletion("done") : chatCompletion(null, "mock", { tool_calls: [{ id: "c1", type: "function", function: { name: "wiki__echo", arguments: '{"text":"t"}' } }] }) };
  });
  router = await startTestRouter(
    {
      endpoints: [{ name: "box", url: chat.url, kind: "chat" }],
      models: { local: { endpoints: ["box"] } },
      tools: { mcp: { servers: [{ label: "wiki", url: mcp.url, headers: { Authorization: "Bearer trace-secret-555" } }] } },
      tracing: { endpoint: otlp.url, service_name: "router-under-test" },
    },
    { env: {} },
  );
});
afterAll(async () => {
  await router?.close(500);
  await Promise.all([chat?.close(), mcp?.close(), otlp?.close()]);
});

it("a span per round (the round's upstream call under it) and per tool listing and call; no credentials in spans", async () => {
  const traceId = [...crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, "0")).join("");
  const res = await router.fetch("/v1/responses", {
    method: "POST",
    headers: { "content-type": "application/json", traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
    body: JSON.stringify({ model: "local", input: "x", tools: [{ type: "mcp", server_label: "wiki" }] }),
  });
  expect(res.status).toBe(200);
  const of = () => otlp.spans.filter((s) => s.traceId === traceId);
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    await router.runtime.tracing.flush();
    if (of().some((s) => s.kind === KIND.server) && of().filter((s) => s.name.startsWith("tool loop round")).length === 2) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const spans = of();
  const rounds = spans.filter((s) => s.name.startsWith("tool loop round"));
  expect(rounds.map((s) => s.kind)).toEqual([KIND.internal, KIND.internal]);
  const list = spans.find((s) => s.name === "mcp_list_tools wiki");
  const call = spans.find((s) => s.name === "mcp_call wiki");
  expect(list?.kind).toBe(KIND.client);
  expect(call?.kind).toBe(KIND.client);
  expect(call?.attributes["router.tool.outcome"]).toBe("ok");
  // each round's upstream call is a child of its round span
  const upstream = spans.filter((s) => s.kind === KIND.client && s.attributes["gen_ai.operation.name"]);
  expect(upstream).toHaveLength(2);
  for (const u of upstream) expect(rounds.map((r) => r.spanId)).toContain(u.parentSpanId);
  expect(otlp.bodies.join("")).not.toContain("trace-secret-555");
});
