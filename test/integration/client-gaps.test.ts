import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PATCH, REASONING, chatBackend, responsesBackend } from "../helpers/client-backends.js";
import { assertResponsesGrammar } from "../helpers/grammar.js";
import { useTwoKindRouter } from "../helpers/router.js";
import type { StreamEvent } from "../../src/wire/types.js";

/**
 * What real clients send that the chat kind used to lose or refuse, through the real openai
 * SDK: freeform custom tools over two turns, `additional_tools` input items, files (data,
 * fetched URLs, ids) and audio, `truncation` against a model's context_window, reasoning
 * summaries. The native kind passes each of them through.
 */
const files = { server: null as Server | null, port: 0, hits: 0 };
const extra: Record<string, unknown> = {};
beforeAll(async () => {
  files.server = createServer((req, res) => {
    files.hits++;
    if (req.url === "/files/notes.txt") return res.writeHead(200, { "content-type": "text/plain; charset=utf-8" }).end("notes from a URL");
    if (req.url === "/files/redirect") return res.writeHead(302, { location: "http://169.254.169.254/latest/meta-data/" }).end();
    if (req.url === "/files/big.bin") return res.writeHead(200, { "content-type": "application/octet-stream" }).end(Buffer.alloc(4096));
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => files.server!.listen(0, "127.0.0.1", r));
  files.port = (files.server!.address() as AddressInfo).port;
  Object.assign(extra, {
    files: { fetch: { allow: [`http://127.0.0.1:${files.port}/files/*`, "http://*.invalid/*", "http://*/anywhere/*"], max_bytes: 1024 } },
    models: {
      local: { endpoints: ["box"], upstream_model: "llama3.1:8b" },
      small: { endpoints: ["box"], context_window: 300 },
      textonly: { endpoints: ["box"], inline_text_files: true },
      cached: { endpoints: ["box"], cache: { ttl: "1h" } },
      "gpt-4.1": { endpoints: ["oai"] },
    },
  });
});
afterAll(() => new Promise<void>((r) => (files.server ? files.server.close(() => r()) : r())));
const env = useTwoKindRouter(extra);
beforeAll(() => {
  env.chat.setDefault("/chat/completions", chatBackend);
  env.oai.setDefault("/responses", responsesBackend);
});

const APPLY_PATCH = { type: "custom" as const, name: "apply_patch", description: "Edit files", format: { type: "grammar" as const, syntax: "lark" as const, definition: "start: /.+/s" } };

async function collect(stream: AsyncIterable<unknown>): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const e of stream) events.push(e as StreamEvent);
  return events;
}

async function badRequest(p: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(OpenAI.BadRequestError);
  return err as InstanceType<typeof OpenAI.APIError>;
}

describe("freeform custom tools", () => {
  it("chat: the call streams as custom_tool_call_input events, and its output chains on the next turn", async () => {
    const client = env.router.client;
    const events = await collect(await client.responses.create({ model: "local", input: "Create hello.txt", tools: [APPLY_PATCH], stream: true }));
    const { items, terminal } = assertResponsesGrammar(events);
    expect(events.map((e) => e.type)).toContain("response.custom_tool_call_input.delta");
    expect(items[1]).toMatchObject({ type: "custom_tool_call", call_id: "call_p1", name: "apply_patch", input: PATCH, status: "completed" });
    const sent = env.chat.requests[0]!.body;
    expect(sent.tools[0].function.parameters.required).toEqual(["input"]);

    const id = (terminal!.response as { id: string }).id;
    const second = await client.responses.create({ model: "local", previous_response_id: id, tools: [APPLY_PATCH], input: [{ type: "custom_tool_call_output", call_id: "call_p1", output: "Done!" }] });
    expect(second.output_text).toBe("Result: Done!");
    const messages = env.chat.requests[1]!.body.messages;
    expect(messages.at(-2).tool_calls).toEqual([{ id: "call_p1", type: "function", function: { name: "apply_patch", arguments: JSON.stringify({ input: PATCH }) } }]);
    expect(messages.at(-1)).toEqual({ role: "tool", tool_call_id: "call_p1", content: "Done!" });
    // Listed as OpenAI lists them: the call (from the previous output) and its output, each with a status.
    const listed = (await client.responses.inputItems.list(second.id, { order: "asc" })).data;
    expect(listed.slice(-2)).toEqual([
      expect.objectContaining({ type: "custom_tool_call", id: expect.stringMatching(/^ctc_/), call_id: "call_p1", input: PATCH, status: "completed" }),
      expect.objectContaining({ type: "custom_tool_call_output", call_id: "call_p1", output: "Done!", status: "completed" }),
    ]);
  });

  it("openai: the custom tool and the call pass through untouched", async () => {
    const r = await env.router.client.responses.create({ model: "gpt-4.1", input: "Create hello.txt", tools: [APPLY_PATCH] });
    expect(r.output[0]).toMatchObject({ type: "custom_tool_call", input: PATCH });
    expect(env.oai.requests[0]!.body.tools).toEqual([APPLY_PATCH]);
  });
});

describe("additional_tools input items", () => {
  const item = { type: "additional_tools", role: "developer", tools: [{ type: "namespace", name: "weather", description: "", tools: [{ type: "function", name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } }] }] };

  it("chat: their tools are hoisted (tools: []) and a call maps back to its namespace", async () => {
    const r = await env.router.client.responses.create({ model: "local", tools: [], input: [item, { role: "user", content: "Weather in Oslo?" }] } as never);
    expect(r.output.at(-1)).toMatchObject({ type: "function_call", name: "get_weather", namespace: "weather" });
    expect(env.chat.requests[0]!.body.tools.map((t: { function: { name: string } }) => t.function.name)).toEqual(["weather__get_weather"]);
  });

  it("chat: items replayed from history are hoisted once", async () => {
    const first = await env.router.client.responses.create({ model: "local", tools: [], input: [item, { role: "user", content: "hello" }] } as never);
    await env.router.client.responses.create({ model: "local", previous_response_id: first.id, tools: [], input: [item, { role: "user", content: "again" }] } as never);
    expect(env.chat.requests[1]!.body.tools).toHaveLength(1);
  });

  it("openai: passed through as input items", async () => {
    await env.router.client.responses.create({ model: "gpt-4.1", tools: [], input: [item, { role: "user", content: "hi" }] } as never);
    expect(env.oai.requests[0]!.body.input[0]).toEqual(item);
  });
});

describe("files and audio on chat", () => {
  const file = (part: Record<string, unknown>, model = "local") =>
    env.router.client.responses.create({ model, input: [{ role: "user", content: [{ type: "input_text", text: "read" }, part as never] }] });

  it("file_data -> a chat file part; input_audio -> input_audio", async () => {
    const data = "data:application/pdf;base64,JVBERi0=";
    await file({ type: "input_file", filename: "a.pdf", file_data: data });
    expect(env.chat.requests[0]!.body.messages[0].content[1]).toEqual({ type: "file", file: { file_data: data, filename: "a.pdf" } });
    await env.router.client.responses.create({ model: "local", input: [{ role: "user", content: [{ type: "input_audio", input_audio: { data: "UklGRg==", format: "wav" } }] as never }] });
    expect(env.chat.requests[1]!.body.messages[0].content).toEqual([{ type: "input_audio", input_audio: { data: "UklGRg==", format: "wav" } }]);
  });

  it("a file_url the config allows is fetched; inline_text_files sends a text file as text", async () => {
    const url = `http://127.0.0.1:${files.port}/files/notes.txt`;
    await file({ type: "input_file", file_url: url });
    expect(env.chat.requests[0]!.body.messages[0].content[1]).toEqual({ type: "file", file: { file_data: `data:text/plain;base64,${Buffer.from("notes from a URL").toString("base64")}`, filename: "notes.txt" } });
    await file({ type: "input_file", file_url: url }, "textonly");
    expect(env.chat.requests[1]!.body.messages[0].content[1]).toEqual({ type: "text", text: '<file name="notes.txt">\nnotes from a URL\n</file>' });
  });

  it("a file_url the config does not allow, a loopback one under a wildcard host, one too large: 400 naming it, nothing fetched", async () => {
    const before = files.hits;
    const notAllowed = await badRequest(file({ type: "input_file", file_url: `http://127.0.0.1:${files.port}/secret/x.txt` }));
    expect(notAllowed.param).toBe("input[0].content[1].file_url");
    expect(notAllowed.message).toContain("files.fetch.allow");
    const loopback = await badRequest(file({ type: "input_file", file_url: `http://127.0.0.1:${files.port}/anywhere/x.txt` }));
    expect(loopback.message).toContain("private address");
    const localhost = await badRequest(file({ type: "input_file", file_url: `http://localhost:${files.port}/anywhere/x.txt` }));
    expect(localhost.message).toContain("private address");
    expect(files.hits).toBe(before);
    const redirected = await badRequest(file({ type: "input_file", file_url: `http://127.0.0.1:${files.port}/files/redirect` }));
    expect(redirected.message).toContain("answered 302");
    const big = await badRequest(file({ type: "input_file", file_url: `http://127.0.0.1:${files.port}/files/big.bin` }));
    expect(big.code).toBe("file_too_large");
    expect(env.chat.requests).toHaveLength(0);
  });

  it("input_tokens and /v1/responses/compact read a fetched file_url too", async () => {
    const url = `http://127.0.0.1:${files.port}/files/notes.txt`;
    const input = [{ role: "user" as const, content: [{ type: "input_file" as const, file_url: url }] }];
    const counted = await env.router.client.responses.inputTokens.count({ model: "local", input });
    expect(counted.input_tokens).toBeGreaterThan(0);
    env.chat.enqueue("/chat/completions", { kind: "json", body: { choices: [{ message: { role: "assistant", content: "a summary" }, finish_reason: "stop" }], usage: { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 } } });
    await env.router.client.responses.compact({ model: "local", input });
    expect(JSON.stringify(env.chat.requests.at(-1)!.body.messages)).toContain(Buffer.from("notes from a URL").toString("base64"));
  });

  it("a request with a file_url is not answered from the response cache: the file may have changed", async () => {
    const url = `http://127.0.0.1:${files.port}/files/notes.txt`;
    const before = files.hits;
    await file({ type: "input_file", file_url: url }, "cached");
    await file({ type: "input_file", file_url: url }, "cached");
    expect(files.hits - before).toBe(2);
    expect(env.chat.requests).toHaveLength(2);
    // The same request with the file's data is cached as usual.
    const data = { type: "input_file", filename: "n.txt", file_data: "data:text/plain;base64,bm90ZXM=" };
    await file(data, "cached");
    await file(data, "cached");
    expect(env.chat.requests).toHaveLength(3);
  });

  it("a file_id the router's Files do not hold is a 404 naming it, as OpenAI's, before any upstream call", async () => {
    const err = (await file({ type: "input_file", file_id: "file-abc" }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect(err.param).toBe("input[0].content[1].file_id");
    expect(err.message).toContain("file-abc");
    expect(env.chat.requests).toHaveLength(0);
  });
});

describe("truncation against models.<name>.context_window", () => {
  const long = (n: number) => "word ".repeat(n);
  const turns = [
    { role: "user" as const, content: long(200) },
    { role: "assistant" as const, content: long(200) },
    { role: "user" as const, content: "the newest question" },
  ];

  it("disabled (the default): 400 context_length_exceeded, the backend never called", async () => {
    const e = await badRequest(env.router.client.responses.create({ model: "small", input: turns }));
    expect(e.code).toBe("context_length_exceeded");
    expect(e.param).toBe("input");
    expect((e.error as { message: string }).message).toBe("Your input exceeds the context window of this model. Please adjust your input and try again.");
    expect(env.chat.requests).toHaveLength(0);
  });

  it("auto: the oldest turn is dropped, the newest input kept, the stored input whole", async () => {
    const r = await env.router.client.responses.create({ model: "small", input: turns, truncation: "auto" });
    expect(r.output_text).toBe("Echo: the newest question");
    expect(r.truncation).toBe("auto");
    expect(env.chat.requests[0]!.body.messages).toEqual([{ role: "user", content: "the newest question" }]);
    const items = await env.router.client.responses.inputItems.list(r.id);
    expect(items.data).toHaveLength(3);
  });

  it("a backend's own context-overflow 400 (vLLM, llama.cpp words) reaches the client as OpenAI's context_length_exceeded", async () => {
    env.chat.enqueue(
      "/chat/completions",
      { kind: "json", status: 400, body: { object: "error", message: "This model's maximum context length is 4096 tokens. However, you requested 9000 tokens.", type: "BadRequestError", param: null, code: 400 } },
      { kind: "json", status: 400, body: { error: { code: 400, message: "the request exceeds the available context size, try increasing it", type: "exceed_context_size_error", n_prompt_tokens: 9000, n_ctx: 4096 } } },
    );
    for (let i = 0; i < 2; i++) {
      const e = await badRequest(env.router.client.responses.create({ model: "local", input: "long" }));
      expect(e.code).toBe("context_length_exceeded");
      expect(e.param).toBe("input");
      expect((e.error as { message: string }).message).toBe("Your input exceeds the context window of this model. Please adjust your input and try again.");
    }
  });

  it("a model without context_window sends everything", async () => {
    await env.router.client.responses.create({ model: "local", input: turns });
    expect(env.chat.requests[0]!.body.messages).toHaveLength(3);
  });
});

describe("reasoning summaries from a chat backend (openai SDK)", () => {
  it("reasoning.summary set: summary events and a summary_text item, streamed", async () => {
    const stream = env.router.client.responses.stream({ model: "local", input: "hi", reasoning: { summary: "auto" } });
    const types: string[] = [];
    stream.on("event", (e) => types.push(e.type));
    const final = await stream.finalResponse();
    expect(types).toContain("response.reasoning_summary_text.delta");
    expect(types).not.toContain("response.reasoning_text.delta");
    expect(final.output[0]).toMatchObject({ type: "reasoning", summary: [{ type: "summary_text", text: REASONING }] });
  });
});
