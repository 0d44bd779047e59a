import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { StreamEvent } from "../../src/wire/types.js";
import { assertResponsesGrammar, runThroughOpenAISdk } from "../helpers/grammar.js";
import { parseSse, startTestRouter, type TestRouter } from "../helpers/router.js";
import { startLlamaChatServer, type LlamaChatServer } from "./llama/llama-chat-server.js";
import { startMcpServer, type TestMcpServer } from "../helpers/mcp-server.js";
import { writeTinyLlamaGguf } from "./llama/tiny-gguf.js";
import { SUMMARY_PREFIX } from "../../src/translate/chat/compaction.js";

/**
 * Real inference behind the router: llama.cpp runs a tiny random-weight LLaMA
 * (a GGUF this test writes itself) behind an OpenAI chat-completions server, as a
 * `kind: chat` endpoint. The text is noise, but tokens, streaming and counts are
 * the backend's own. Run with `npm run test:llama`.
 */
const here = dirname(fileURLToPath(import.meta.url));
let dir: string;
let llama: LlamaChatServer;
let router: TestRouter;
let mcp: TestMcpServer;

beforeAll(async () => {
  if (!existsSync(join(here, "llama", "node_modules", "node-llama-cpp"))) {
    throw new Error("node-llama-cpp is not installed in test/e2e/llama: run `npm run test:llama`, which installs it first.");
  }
  dir = mkdtempSync(join(tmpdir(), "rr-llama-"));
  const modelPath = join(dir, "tiny-llama.gguf");
  const bytes = writeTinyLlamaGguf(modelPath);
  expect(bytes).toBeLessThan(1_000_000);
  llama = await startLlamaChatServer(modelPath, { threads: 1, modelName: "tiny-random" });
  mcp = await startMcpServer();
  router = await startTestRouter({
    // An operator MCP server (the SDK's own, on loopback) the router runs for the model.
    tools: { mcp: { servers: [{ label: "wiki", url: mcp.url, allowed_tools: ["echo"] }] } },
    endpoints: [{ name: "llama", url: llama.url, kind: "chat", max_concurrency: 1, timeouts: { first_byte: "60s", idle: "30s" } }],
    models: { tiny: { endpoints: ["llama"], upstream_model: "tiny-random" } },
    // A short summary: the tiny model's context is 512 tokens.
    compaction: { key: "llama-e2e-compaction-key-0123", summary_max_tokens: 12, prompt: "Summarise the conversation." },
  });
});
afterAll(async () => {
  await router?.close(1000);
  await llama?.close();
  await mcp?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const usageOf = (u: { prompt_tokens: number; completion_tokens: number; total_tokens: number }) => ({
  input_tokens: u.prompt_tokens,
  input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
  output_tokens: u.completion_tokens,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: u.total_tokens,
});

describe("a llama.cpp backend through the router", () => {
  it("node-llama-cpp read the ChatML template from the GGUF file", () => {
    expect(llama.chatTemplate).toBe("ChatML");
  });

  it("a Responses stream passes the full event grammar and keeps the backend's token counts", async () => {
    const res = await router.fetch("/v1/responses", {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer k" },
      body: JSON.stringify({ model: "tiny", instructions: "You are terse.", input: "Say hello to the router.", stream: true, max_output_tokens: 12 }),
    });
    expect(res.status).toBe(200);
    const events = parseSse(await res.text()).map((f) => f.data as StreamEvent);
    const { terminal } = assertResponsesGrammar(events);
    const backend = llama.last!;
    expect(backend.usage.prompt_tokens).toBeGreaterThan(10); // system + user turns in ChatML
    expect(backend.usage.completion_tokens).toBeGreaterThan(0);
    const response = terminal!.response as { usage: unknown; status: string; incomplete_details: unknown };
    expect(response.usage).toEqual(usageOf(backend.usage));
    expect(response.status).toBe(backend.finishReason === "length" ? "incomplete" : "completed");
    if (backend.finishReason === "length") expect(response.incomplete_details).toEqual({ reason: "max_output_tokens" });
    const deltas = events.filter((e) => e.type === "response.output_text.delta").map((e) => e.delta as string);
    expect(deltas.length).toBeGreaterThan(1); // streamed token by token, not in one piece
    expect(deltas.join("")).toBe(backend.text);

    const { final } = await runThroughOpenAISdk(events);
    expect(final.output_text).toBe(backend.text);
  });

  it("the openai SDK's responses.stream() against the router gets the backend's text and usage", async () => {
    const stream = router.client.responses.stream({ model: "tiny", input: "Count to three.", max_output_tokens: 8 });
    const types: string[] = [];
    for await (const ev of stream) types.push(ev.type);
    const final = await stream.finalResponse();
    const backend = llama.last!;
    expect(types[0]).toBe("response.created");
    expect(["response.completed", "response.incomplete"]).toContain(types.at(-1));
    expect(final.output_text).toBe(backend.text);
    expect(final.usage).toEqual(usageOf(backend.usage));
    expect(backend.usage.completion_tokens).toBeLessThanOrEqual(8);
  });

  it("chat completions pass through with the backend's usage chunk", async () => {
    const stream = await router.client.chat.completions.create({
      model: "tiny",
      messages: [{ role: "user", content: "hello world" }],
      max_tokens: 6,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    let usage: unknown = null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? "";
      if (chunk.usage) usage = chunk.usage;
      expect(chunk.model).toBe("tiny");
    }
    expect(text).toBe(llama.last!.text);
    expect(usage).toEqual(llama.last!.usage);
  });

  it("compacts with the backend writing the summary, then answers the next turn from it", async () => {
    const compacted = await router.client.responses.compact({
      model: "tiny",
      input: [
        { role: "user", content: "My name is Ada." },
        { role: "assistant", content: "Hello Ada." },
      ],
    });
    const summaryCall = llama.received.at(-1)!;
    expect(summaryCall.at(-1)).toEqual({ role: "user", content: "Summarise the conversation." });
    const summary = llama.last!.text;
    expect(llama.last!.usage.completion_tokens).toBeGreaterThan(0);
    expect(compacted.object).toBe("response.compaction");
    expect(compacted.output.map((i) => i.type)).toEqual(["message", "compaction"]);
    expect(compacted.usage).toEqual(usageOf(llama.last!.usage));
    const item = compacted.output[1] as { encrypted_content: string };
    expect(item.encrypted_content.startsWith("rrc1.")).toBe(true);
    if (summary.trim().length > 3) expect(item.encrypted_content).not.toContain(summary.trim());

    const next = await router.client.responses.create({ model: "tiny", max_output_tokens: 8, input: [...(compacted.output as never[]), { role: "user", content: "What is my name?" }] });
    expect(["completed", "incomplete"]).toContain(next.status);
    expect(next.output_text).toBe(llama.last!.text);
    const seen = llama.received.at(-1)!.map((m) => m.content);
    expect(seen[0]).toBe("My name is Ada.");
    expect(seen).not.toContain("Hello Ada.");
    expect(seen[1]).toBe(`${SUMMARY_PREFIX}\n${summary}`);
    expect(seen[2]).toBe("What is my name?");
  });

  it("answers a turn that went through one MCP call: the mcp tool choice forces the call (grammar-constrained), the router runs it, the model answers", async () => {
    const before = llama.received.length;
    const r = await router.client.responses.create({
      model: "tiny",
      input: "Echo ping through the wiki.",
      tools: [{ type: "mcp", server_label: "wiki" } as never],
      tool_choice: { type: "mcp", server_label: "wiki" } as never,
      max_output_tokens: 8,
    });
    expect(r.output.map((i) => i.type)).toEqual(["mcp_list_tools", "mcp_call", "message"]);
    const call = r.output[1] as { name: string; arguments: string; output: string; status: string };
    expect(call.name).toBe("echo");
    expect(JSON.parse(call.arguments)).toEqual({ text: "ping" }); // written by the model's own tokens, under the grammar
    expect(call).toMatchObject({ status: "completed", output: "echo: ping" });
    expect(mcp.calls).toEqual([{ name: "echo", args: { text: "ping" } }]);
    // two rounds: the second one carried the call and its result back to the model
    const rounds = llama.received.slice(before);
    expect(rounds).toHaveLength(2);
    expect(rounds[1]!.map((m) => m.role)).toEqual(expect.arrayContaining(["assistant", "tool"]));
    const backend = llama.last!;
    expect(r.status).toBe(backend.finishReason === "length" ? "incomplete" : "completed");
    expect(r.output_text).toBe(backend.text);
  });
});
