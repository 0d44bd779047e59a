import { beforeAll, describe, expect, it } from "vitest";
import { chatChunk, chatTextChunks, chatToolCallChunks, nativeEvents, nativeResponse, type RecordedRequest, type Reply } from "../helpers/mock-upstream.js";
import { useTwoKindRouter } from "../helpers/router.js";
import { metricSample } from "../helpers/metrics-text.js";
import { assertCodexInstalled, codexExec, type CodexRun } from "./codex-cli.js";

/**
 * The Codex CLI (`codex exec`) as a real client: it sends its whole tool set
 * (function tools, a namespace tool, hosted web_search), reasoning include and
 * store:false to /v1/responses; the model (scripted) calls Codex's exec_command
 * tool to run `echo`, Codex runs it and sends the output back, and the model answers.
 * Run with `npm run test:codex`.
 */
const ECHO = "echo hi from codex";
const toolOutput = (text: unknown) => (typeof text === "string" && text.includes("hi from codex") ? "hi from codex" : `unexpected tool output: ${JSON.stringify(text)}`);

function chatModel(req: RecordedRequest): Reply {
  const result = (req.body.messages as { role: string; content: unknown }[]).find((m) => m.role === "tool");
  if (!result) {
    const args = JSON.stringify({ cmd: ECHO, yield_time_ms: 2000 });
    return { kind: "sse", frames: [chatChunk({ role: "assistant", content: null }), ...chatToolCallChunks([{ id: "call_echo", name: "exec_command", args: [args.slice(0, 9), args.slice(9)] }])] };
  }
  return { kind: "sse", frames: [...chatTextChunks(["Codex saw: ", toolOutput(result.content)], req.body.model), "data: [DONE]\n\n"] };
}

function responsesModel(req: RecordedRequest): Reply {
  const result = (req.body.input as { type?: string; output?: unknown }[]).find((i) => i.type === "function_call_output");
  const resp = result
    ? nativeResponse(`Codex saw: ${toolOutput(result.output)}`, req.body.model, "resp_up2")
    : {
        ...nativeResponse("", req.body.model, "resp_up1"),
        output: [{ id: "fc_up1", type: "function_call", status: "completed", call_id: "call_echo", name: "exec_command", arguments: JSON.stringify({ cmd: ECHO, yield_time_ms: 2000 }) }],
      };
  return { kind: "sse", frames: nativeEvents(resp as ReturnType<typeof nativeResponse>) };
}

const env = useTwoKindRouter();
beforeAll(() => {
  assertCodexInstalled();
  env.chat.setDefault("/chat/completions", chatModel);
  env.oai.setDefault("/responses", responsesModel);
});

function expectToolTurn(run: CodexRun): void {
  const failure = `codex exited ${run.code}\n${run.stderr.slice(-3000)}\n${JSON.stringify(run.events, null, 1).slice(-3000)}`;
  expect(run.code, failure).toBe(0);
  const commands = run.events.filter((e) => e.type === "item.completed" && e.item?.type === "command_execution").map((e) => e.item!);
  expect(commands, failure).toHaveLength(1);
  expect(commands[0]!.command).toContain(ECHO);
  expect(commands[0]!.exit_code).toBe(0);
  expect(commands[0]!.aggregated_output?.trim()).toBe("hi from codex");
  const messages = run.events.filter((e) => e.type === "item.completed" && e.item?.type === "agent_message").map((e) => e.item!.text);
  expect(messages).toEqual(["Codex saw: hi from codex"]);
  expect(run.events.some((e) => e.type === "turn.failed" || e.type === "error")).toBe(false);
  expect(run.events.at(-1)?.type).toBe("turn.completed");
}

describe("Codex CLI through the router", () => {
  it("completes a turn with a shell tool call on a chat backend (namespace tools flattened, hosted tools dropped)", async () => {
    const run = await codexExec(env.router.url, "local", "Run `echo hi from codex` and tell me what it printed.");
    expectToolTurn(run);

    expect(env.chat.requests).toHaveLength(2);
    const [first, second] = env.chat.requests.map((r) => r.body);
    expect(first.model).toBe("llama3.1:8b");
    expect(first.stream).toBe(true);
    expect(first.stream_options).toEqual({ include_usage: true });
    const names = (first.tools as { type: string; function: { name: string } }[]).map((t) => t.function.name);
    expect(names).toContain("exec_command");
    expect(names.some((n) => /^[A-Za-z0-9_]+__[A-Za-z0-9_]+$/.test(n))).toBe(true); // a namespace's members, flattened
    expect((first.tools as { type: string }[]).every((t) => t.type === "function")).toBe(true);
    const metrics = await (await env.router.fetch("/metrics")).text();
    expect(metrics).toMatch(/responses_router_dropped_tools_total\{model="local",tool_type="web_search"\} [1-9]/);
    expect(first.messages[0].role).toBe("system");

    // Turn 2 carries the call and Codex's tool output, as chat messages for the same call id.
    const assistant = second.messages.find((m: { role: string }) => m.role === "assistant");
    expect(assistant.tool_calls).toEqual([{ id: "call_echo", type: "function", function: { name: "exec_command", arguments: JSON.stringify({ cmd: ECHO, yield_time_ms: 2000 }) } }]);
    const tool = second.messages.find((m: { role: string }) => m.role === "tool");
    expect(tool.tool_call_id).toBe("call_echo");
    expect(tool.content).toContain("hi from codex");
  });

  it("completes the same turn on an OpenAI backend, where Codex's request passes through untouched", async () => {
    const run = await codexExec(env.router.url, "gpt-4.1", "Run `echo hi from codex` and tell me what it printed.");
    expectToolTurn(run);

    expect(env.oai.requests).toHaveLength(2);
    const [first, second] = env.oai.requests.map((r) => r.body);
    expect(first.store).toBe(false);
    expect(first.stream).toBe(true);
    expect(first.include).toContain("reasoning.encrypted_content");
    const types = new Set((first.tools as { type: string }[]).map((t) => t.type));
    expect(types.has("function")).toBe(true);
    expect(types.has("namespace")).toBe(true);
    expect(types.has("web_search")).toBe(true);
    expect(first.reasoning).toEqual({ summary: "auto" });
    expect(first.prompt_cache_key).toEqual(expect.any(String));
    expect(first).not.toHaveProperty("previous_response_id");
    const call = second.input.find((i: { type?: string }) => i.type === "function_call");
    const output = second.input.find((i: { type?: string }) => i.type === "function_call_output");
    expect(call).toMatchObject({ call_id: "call_echo", name: "exec_command" });
    expect(output.call_id).toBe("call_echo");
  });
});

describe("Codex CLI through the router over a WebSocket (supports_websockets = true)", () => {
  const websocketResponses = async () => {
    const text = await (await env.router.fetch("/metrics")).text();
    let sum = 0;
    for (const model of ["local", "gpt-4.1"]) sum += metricSample(text, "responses_router_responses_total", { transport: "websocket", model, status: "200" }) ?? 0;
    return { sum, http: metricSample(text, "responses_router_responses_total", { transport: "http", model: "local", status: "200" }) ?? 0, httpOai: metricSample(text, "responses_router_responses_total", { transport: "http", model: "gpt-4.1", status: "200" }) ?? 0 };
  };

  for (const { kind, model, upstream } of [
    { kind: "chat", model: "local", upstream: () => env.chat },
    { kind: "openai", model: "gpt-4.1", upstream: () => env.oai },
  ]) {
    it(`runs its tool turn over the router's WebSocket, not the HTTP fallback (${kind} backend)`, async () => {
      const before = await websocketResponses();
      const run = await codexExec(env.router.url, model, "Run `echo hi from codex` and tell me what it printed.", "test-key", { websockets: true });
      expectToolTurn(run);
      expect(upstream().requests).toHaveLength(2);
      expect(JSON.stringify(upstream().requests[1]!.body)).toContain("hi from codex");
      const after = await websocketResponses();
      // Both model turns came through response.create on a socket; no POST /v1/responses was made.
      expect(after.sum - before.sum).toBeGreaterThanOrEqual(2);
      expect(after.http).toBe(before.http);
      expect(after.httpOai).toBe(before.httpOai);
    });
  }
});
