/**
 * kind: anthropic gets the client mappings kind: chat has, through the openai SDK against the
 * scripted Messages mock: Codex's freeform custom tools (JSON, stream, history both ways, over
 * the WebSocket with store: false), `additional_tools` input items, files by `file_url` (fetched
 * by the router) and audio, `truncation` against a model's context_window and Anthropic's own
 * "prompt is too long", and the tool_choice forms.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { anthropicError, message, sentMessages, startAnthropicMock, streamReply, textBlock, toolUseBlock } from "../helpers/anthropic-mock.js";
import { PATCH } from "../helpers/client-backends.js";
import { assertResponsesGrammar } from "../helpers/grammar.js";
import type { MockUpstream } from "../helpers/mock-upstream.js";
import { startTestRouter, type TestRouter } from "../helpers/router.js";
import { finalResponse, WsClient } from "../helpers/ws-client.js";
import type { StreamEvent } from "../../src/wire/types.js";

const APPLY_PATCH = { type: "custom" as const, name: "apply_patch", description: "Edit files", format: { type: "grammar" as const, syntax: "lark" as const, definition: "start: /.+/s" } };
const PDF = Buffer.from("%PDF-1.7 from a URL");

let a: MockUpstream;
let router: TestRouter;
let files: Server;
let filesPort = 0;
const sockets: WsClient[] = [];

beforeAll(async () => {
  files = createServer((req, res) => {
    if (req.url === "/files/notes.txt") return res.writeHead(200, { "content-type": "text/plain; charset=utf-8" }).end("notes from a URL");
    if (req.url === "/files/report.pdf") return res.writeHead(200, { "content-type": "application/pdf" }).end(PDF);
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => files.listen(0, "127.0.0.1", r));
  filesPort = (files.address() as AddressInfo).port;
  a = await startAnthropicMock();
  router = await startTestRouter({
    endpoints: [{ name: "claude-a", url: a.url, kind: "anthropic", api_key: "sk-ant-parity-secret" }],
    models: {
      claude: { endpoints: ["claude-a"], upstream_model: "claude-upstream" },
      "claude-small": { endpoints: ["claude-a"], upstream_model: "claude-upstream", context_window: 300 },
    },
    files: { fetch: { allow: [`http://127.0.0.1:${filesPort}/files/*`], max_bytes: 4096 } },
    compaction: { key: "anthropic-parity-compaction-key-0123" },
  });
});
afterAll(async () => {
  for (const s of sockets) s.ws.socket.terminate?.();
  await router?.close(1000);
  await a?.close();
  await new Promise<void>((r) => files.close(() => r()));
});
beforeEach(() => {
  a.requests.length = 0;
});

async function badRequest(p: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(OpenAI.BadRequestError);
  return err as InstanceType<typeof OpenAI.APIError>;
}

async function collect(stream: AsyncIterable<unknown>): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const e of stream) events.push(e as StreamEvent);
  assertResponsesGrammar(events);
  return events;
}

describe("freeform custom tools on anthropic", () => {
  it("are sent as a tool with one string parameter 'input', the format in the description; the call comes back as custom_tool_call", async () => {
    a.enqueue("/messages", { kind: "json", body: message([textBlock("Patching."), toolUseBlock("toolu_p1", "apply_patch", { input: PATCH })], { stop_reason: "tool_use" }) });
    const r = await router.client.responses.create({ model: "claude", input: "Add hello.txt", tools: [APPLY_PATCH] });
    expect(r.output.at(-1)).toEqual({ id: expect.stringMatching(/^ctc_/), type: "custom_tool_call", status: "completed", call_id: "toolu_p1", name: "apply_patch", input: PATCH });
    const tool = sentMessages(a)[0].tools[0];
    expect(tool).toMatchObject({ name: "apply_patch", input_schema: { type: "object", properties: { input: { type: "string" } }, required: ["input"] } });
    expect(tool.description).toContain("Edit files");
    expect(tool.description).toContain("start: /.+/s");
  });

  it("streams the input as custom_tool_call_input.delta/done, and the next turn replays the call and its output as tool_use/tool_result", async () => {
    a.enqueue("/messages", streamReply(message([toolUseBlock("toolu_p2", "apply_patch", { input: PATCH })], { stop_reason: "tool_use" })));
    const events = await collect(await router.client.responses.create({ model: "claude", input: "Add hello.txt", tools: [APPLY_PATCH], stream: true }));
    const deltas = events.filter((e) => e.type === "response.custom_tool_call_input.delta").map((e) => (e as any).delta);
    expect(deltas.join("")).toBe(PATCH);
    expect(events.find((e) => e.type === "response.custom_tool_call_input.done")).toMatchObject({ input: PATCH });
    expect(events.some((e) => e.type.startsWith("response.function_call_arguments"))).toBe(false);
    const first = (events.at(-1) as any).response;
    expect(first.output[0]).toMatchObject({ type: "custom_tool_call", call_id: "toolu_p2", input: PATCH, status: "completed" });

    await router.client.responses.create({ model: "claude", previous_response_id: first.id, tools: [APPLY_PATCH], input: [{ type: "custom_tool_call_output", call_id: "toolu_p2", output: "Done!" }] });
    const sent = sentMessages(a)[1];
    expect(sent.messages.slice(1).map((m: { role: string; content: { cache_control?: unknown }[] }) => ({ role: m.role, content: m.content.map(({ cache_control: _, ...b }) => b) }))).toEqual([
      { role: "assistant", content: [{ type: "tool_use", id: "toolu_p2", name: "apply_patch", input: { input: PATCH } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_p2", content: "Done!" }] },
    ]);
  });

  it("tool_choice {type: custom} forces the tool; allowed_tools required forces its one tool, or any of several", async () => {
    const shell = { type: "function" as const, name: "shell", parameters: { type: "object", properties: { cmd: { type: "string" } } }, strict: false };
    await router.client.responses.create({ model: "claude", input: "patch", tools: [APPLY_PATCH], tool_choice: { type: "custom", name: "apply_patch" } });
    await router.client.responses.create({ model: "claude", input: "patch", tools: [APPLY_PATCH, shell], tool_choice: { type: "allowed_tools", mode: "required", tools: [{ type: "custom", name: "apply_patch" }] } });
    await router.client.responses.create({ model: "claude", input: "patch", tools: [APPLY_PATCH, shell], tool_choice: { type: "allowed_tools", mode: "required", tools: [{ type: "custom", name: "apply_patch" }, { type: "function", name: "shell" }] } });
    await router.client.responses.create({ model: "claude", input: "patch", tools: [APPLY_PATCH, shell], tool_choice: { type: "allowed_tools", mode: "auto", tools: [{ type: "function", name: "shell" }] } });
    const sent = sentMessages(a);
    expect(sent.map((b) => b.tool_choice)).toEqual([{ type: "tool", name: "apply_patch" }, { type: "tool", name: "apply_patch" }, { type: "any" }, undefined]);
  });

  it("chains a custom call over the WebSocket with store: false", async () => {
    const ws = new WsClient(router.url);
    sockets.push(ws);
    a.enqueue("/messages", streamReply(message([toolUseBlock("toolu_p3", "apply_patch", { input: PATCH })], { stop_reason: "tool_use" })));
    const first = finalResponse(await ws.create({ model: "claude", input: "Add hello.txt", tools: [APPLY_PATCH], store: false }));
    expect(first.output[0]).toMatchObject({ type: "custom_tool_call", input: PATCH });
    const events = await ws.create({ model: "claude", previous_response_id: first.id, input: [{ type: "custom_tool_call_output", call_id: "toolu_p3", output: "Done!" }], tools: [APPLY_PATCH], store: false });
    expect(finalResponse(events).status).toBe("completed");
    ws.close();
    const sent = sentMessages(a)[1];
    expect(sent.messages[1].content[0]).toMatchObject({ type: "tool_use", id: "toolu_p3", input: { input: PATCH } });
    expect(sent.messages[2].content[0]).toMatchObject({ type: "tool_result", tool_use_id: "toolu_p3", content: "Done!" });
  });
});

describe("additional_tools input items on anthropic", () => {
  const item = { type: "additional_tools", role: "developer", tools: [{ type: "namespace", name: "weather", description: "", tools: [{ type: "function", name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } }] }] };

  it("are hoisted into the tools (tools: []), a call maps back to its namespace, and history replays them once", async () => {
    a.enqueue("/messages", { kind: "json", body: message([toolUseBlock("toolu_w1", "weather__get_weather", { city: "Oslo" })], { stop_reason: "tool_use" }) });
    const r = await router.client.responses.create({ model: "claude", tools: [], input: [item, { role: "user", content: "Weather in Oslo?" }] } as never);
    expect(r.output.at(-1)).toMatchObject({ type: "function_call", name: "get_weather", namespace: "weather", call_id: "toolu_w1" });
    await router.client.responses.create({ model: "claude", previous_response_id: r.id, tools: [], input: [item, { type: "function_call_output", call_id: "toolu_w1", output: "cold" }] } as never);
    const sent = sentMessages(a);
    expect(sent[0].tools.map((t: { name: string }) => t.name)).toEqual(["weather__get_weather"]);
    expect(sent[1].tools.map((t: { name: string }) => t.name)).toEqual(["weather__get_weather"]);
    expect(sent[1].messages[1].content[0]).toMatchObject({ type: "tool_use", name: "weather__get_weather" });
  });

  it("a compaction summary over a history with hoisted tools calls none of them", async () => {
    a.enqueue("/messages", { kind: "json", body: message([textBlock("SUMMARY: asked about Oslo")]) });
    const history = [item, { role: "user", content: "Weather in Oslo?" }, { type: "function_call", call_id: "toolu_c1", name: "get_weather", namespace: "weather", arguments: '{"city":"Oslo"}' }, { type: "function_call_output", call_id: "toolu_c1", output: "cold" }];
    const compacted = await router.client.responses.compact({ model: "claude", input: history as never });
    expect(compacted.output.at(-1)).toMatchObject({ type: "compaction" });
    const summary = sentMessages(a)[0];
    expect(summary.tools.map((t: { name: string }) => t.name)).toEqual(["weather__get_weather"]);
    expect(summary.tool_choice).toEqual({ type: "none" });
    expect(summary.messages[1].content[0]).toMatchObject({ type: "tool_use", id: "toolu_c1", name: "weather__get_weather" });
  });
});

describe("files and audio on anthropic", () => {
  const file = (part: Record<string, unknown>) => router.client.responses.create({ model: "claude", input: [{ role: "user", content: [{ type: "input_text", text: "read" }, part as never] }] });

  it("a file_url the config allows is fetched by the router: a PDF as a base64 document, a text file as a text document", async () => {
    await file({ type: "input_file", file_url: `http://127.0.0.1:${filesPort}/files/report.pdf` });
    await file({ type: "input_file", file_url: `http://127.0.0.1:${filesPort}/files/notes.txt` });
    const sent = sentMessages(a);
    expect(sent[0].messages[0].content[1]).toEqual({ type: "document", title: "report.pdf", source: { type: "base64", media_type: "application/pdf", data: PDF.toString("base64") } });
    expect(sent[1].messages[0].content[1]).toEqual({ type: "document", title: "notes.txt", source: { type: "text", media_type: "text/plain", data: "notes from a URL" } });
  });

  it("input_tokens (Anthropic's count_tokens) and /v1/responses/compact read a fetched file_url too", async () => {
    const url = `http://127.0.0.1:${filesPort}/files/report.pdf`;
    const input = [{ role: "user" as const, content: [{ type: "input_file" as const, file_url: url }] }];
    const counted = await router.client.responses.inputTokens.count({ model: "claude", input });
    expect(counted.input_tokens).toBe(42);
    const countBody = a.requests.find((r) => r.path === "/messages/count_tokens")!.body;
    expect(countBody.messages[0].content[0]).toMatchObject({ type: "document", source: { type: "base64", data: PDF.toString("base64") } });
    a.enqueue("/messages", { kind: "json", body: message([textBlock("SUMMARY: a report")]) });
    await router.client.responses.compact({ model: "claude", input });
    expect(sentMessages(a)[0].messages[0].content[0]).toMatchObject({ type: "document", source: { type: "base64" } });
  });

  it("a file_url the config does not allow and input_audio are 400s naming the part, an unknown file_id a 404; Anthropic never called", async () => {
    const notAllowed = await badRequest(file({ type: "input_file", file_url: `http://127.0.0.1:${filesPort}/secret/x.pdf` }));
    expect(notAllowed.param).toBe("input[0].content[1].file_url");
    const byId = (await file({ type: "input_file", file_id: "file-abc" }).catch((e: unknown) => e)) as { status: number; param: string };
    expect(byId.status).toBe(404);
    expect(byId.param).toBe("input[0].content[1].file_id");
    const audio = await badRequest(file({ type: "input_audio", input_audio: { data: "UklGRg==", format: "wav" } }));
    expect(audio.param).toBe("input[0].content[1].type");
    expect(audio.message).toMatch(/audio/i);
    expect(a.requests).toHaveLength(0);
  });
});

describe("truncation against models.<name>.context_window on anthropic", () => {
  const long = (n: number) => "word ".repeat(n);
  const turns = [
    { role: "user" as const, content: long(200) },
    { role: "assistant" as const, content: long(200) },
    { role: "user" as const, content: "the newest question" },
  ];

  it("disabled (the default): 400 context_length_exceeded, Anthropic never called", async () => {
    const e = await badRequest(router.client.responses.create({ model: "claude-small", input: turns }));
    expect(e.code).toBe("context_length_exceeded");
    expect(e.param).toBe("input");
    expect(a.requests).toHaveLength(0);
  });

  it("auto: the oldest turn is left out of what is sent, the stored input whole", async () => {
    const r = await router.client.responses.create({ model: "claude-small", input: turns, truncation: "auto" });
    expect(r.truncation).toBe("auto");
    expect(sentMessages(a)[0].messages).toEqual([{ role: "user", content: [{ type: "text", text: "the newest question" }] }]);
    expect((await router.client.responses.inputItems.list(r.id)).data).toHaveLength(3);
  });

  it("Anthropic's 'prompt is too long' 400 is OpenAI's context_length_exceeded", async () => {
    a.enqueue("/messages", anthropicError(400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum"));
    const e = await badRequest(router.client.responses.create({ model: "claude", input: "hi" }));
    expect(e.code).toBe("context_length_exceeded");
    expect(e.param).toBe("input");
    expect(e.message).toContain("prompt is too long");
  });
});
