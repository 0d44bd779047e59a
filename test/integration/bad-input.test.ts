import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMockUpstream, type MockUpstream } from "../helpers/mock-upstream.js";
import { startTestRouter, twoKindConfig, type TestRouter } from "../helpers/router.js";

/** Bad input on every route: always a 4xx with the OpenAI error body, naming `param` where there is one. */

let chat: MockUpstream;
let oai: MockUpstream;
let router: TestRouter;

beforeAll(async () => {
  chat = await startMockUpstream();
  oai = await startMockUpstream();
  router = await startTestRouter(twoKindConfig(chat.url, oai.url, { server: { max_body_bytes: 4096 } }));
});
afterAll(async () => {
  await router.close(500);
  await chat.close();
  await oai.close();
});

type ErrorBody = { error: { message: string; type: string; param: string | null; code: string | null } };

/** Sends a request and checks the OpenAI error shape; returns status and error. */
async function call(method: string, path: string, body?: string | Uint8Array, headers: Record<string, string> = { "content-type": "application/json" }) {
  const res = await router.fetch(path, { method, body, headers });
  const text = await res.text();
  const json = JSON.parse(text) as ErrorBody;
  expect(Object.keys(json)).toEqual(["error"]);
  expect(Object.keys(json.error).sort()).toEqual(["code", "message", "param", "type"]);
  expect(typeof json.error.message).toBe("string");
  expect(res.headers.get("content-type")).toContain("application/json");
  return { status: res.status, ...json.error };
}

const post = (body: unknown) => call("POST", "/v1/responses", typeof body === "string" ? body : JSON.stringify(body));

describe("POST /v1/responses with bad bodies", () => {
  it.each([
    ["malformed JSON", "{\"model\": \"local\", ", null, "invalid_json"],
    ["an empty body", "", null, "invalid_body"],
    ["a JSON array", "[1,2]", null, "invalid_type"],
    ["a JSON string", "\"hi\"", null, "invalid_type"],
    ["JSON null", "null", null, "invalid_type"],
  ])("rejects %s with 400", async (_name, body, param, code) => {
    expect(await post(body)).toMatchObject({ status: 400, type: "invalid_request_error", param, code });
  });

  it.each([
    [{ input: "hi" }, "model", "missing_required_parameter"],
    [{ model: 42, input: "hi" }, "model", "invalid_type"],
    [{ model: "local" }, "input", "missing_required_parameter"],
    [{ model: "local", input: 7 }, "input", "invalid_type"],
    [{ model: "local", input: "hi", temperature: "hot" }, "temperature", "invalid_type"],
    [{ model: "local", input: "hi", temperature: 9 }, "temperature", "decimal_above_max_value"],
    [{ model: "local", input: "hi", temperature: -0.5 }, "temperature", "decimal_below_min_value"],
    [{ model: "local", input: "hi", top_p: 1.5 }, "top_p", "decimal_above_max_value"],
    [{ model: "local", input: "hi", top_p: -0.1 }, "top_p", "decimal_below_min_value"],
    [{ model: "local", input: "hi", top_logprobs: 21 }, "top_logprobs", "integer_above_max_value"],
    [{ model: "local", input: "hi", top_logprobs: -1 }, "top_logprobs", "integer_below_min_value"],
    [{ model: "local", input: "hi", max_output_tokens: 0 }, "max_output_tokens", "integer_below_min_value"],
    [{ model: "local", input: "hi", tool_choice: { type: "function", name: "nope" } }, "tool_choice", null],
    [{ model: "local", input: "hi", reasoning: { effort: "extreme" } }, "reasoning.effort", "invalid_value"],
    [{ model: "local", input: "hi", reasoning: { summary: "verbose" } }, "reasoning.summary", "invalid_value"],
    [{ model: "local", input: "hi", reasoning: { effort: 3 } }, "reasoning.effort", "invalid_type"],
    [{ model: "local", input: "hi", text: { verbosity: "loud" } }, "text.verbosity", "invalid_value"],
    [{ model: "local", input: "hi", service_tier: "gold" }, "service_tier", "invalid_value"],
    [{ model: "local", input: "hi", include: ["nope"] }, "include", "invalid_value"],
    [{ model: "local", input: "hi", user: 5 }, "user", "invalid_type"],
    [{ model: "local", input: "hi", prompt_cache_key: 5 }, "prompt_cache_key", "invalid_type"],
    [{ model: "local", input: "hi", safety_identifier: {} }, "safety_identifier", "invalid_type"],
    [{ model: "local", input: "hi", text: { format: "json" } }, "text.format", "invalid_type"],
    [{ model: "local", input: "hi", text: { format: { type: "json_schema", name: "bad name!", schema: { type: "object" } } } }, "text.format.name", "invalid_value"],
    [{ model: "local", input: "hi", tools: [{ type: "custom", name: "grammar" }], tool_choice: { type: "custom" } }, "tool_choice.name", "missing_required_parameter"],
    [{ model: "local", input: "hi", tools: [{ type: "function", name: "other", parameters: {} }], tool_choice: { type: "function", name: "nope" } }, "tool_choice", null],
    [{ model: "local", input: "hi", tools: [{ type: "function", name: "nope", parameters: {} }], tool_choice: { type: "custom", name: "nope" } }, "tool_choice", null],
    [{ model: "local", input: "hi", stream: "yes" }, "stream", "invalid_type"],
    [{ model: "local", input: "hi", max_output_tokens: 1.5 }, "max_output_tokens", "invalid_type"],
    [{ model: "local", input: "hi", max_output_tokens: 1e300 }, "max_output_tokens", "integer_above_max_value"],
    [{ model: "local", input: "hi", tools: {} }, "tools", "invalid_type"],
    [{ model: "local", input: "hi", tools: [{ type: "function" }] }, "tools[0].name", "missing_required_parameter"],
    [{ model: "local", input: "hi", tools: [{ type: "teleport" }] }, "tools[0].type", "invalid_value"],
    [{ model: "gpt-4.1", input: "hi", tools: [{ type: "teleport" }] }, "tools[0].type", "invalid_value"],
    [{ model: "local", input: [{ type: "hologram" }] }, "input[0].type", "invalid_value"],
    [{ model: "local", input: [{ role: "wizard", content: "x" }] }, "input[0].role", "invalid_value"],
    [{ model: "local", input: [{ role: "user", content: [{ type: "input_smell" }] }] }, "input[0].content[0].type", "invalid_value"],
    [{ model: "local", input: [{ type: "function_call", name: "f" }] }, "input[0].call_id", "missing_required_parameter"],
    [{ model: "local", input: ["just a string"] }, "input[0]", "invalid_type"],
    [{ model: "local", input: "hi", tool_choice: "sometimes" }, "tool_choice", "invalid_value"],
    [{ model: "local", input: "hi", metadata: { a: 1 } }, "metadata.a", "invalid_type"],
    [{ model: "local", input: "hi", previous_response_id: "not-an-id" }, "previous_response_id", "invalid_value"],
    [{ model: "local", input: "hi", router: { cache: "maybe" } }, "router.cache", "invalid_type"],
  ])("rejects %j naming param %s", async (body, param, code) => {
    expect(await post(body)).toMatchObject({ status: 400, type: "invalid_request_error", param, code });
  });

  it("an enum field outside the openai types' values is answered as OpenAI words it; every value they allow passes", async () => {
    expect(await post({ model: "local", input: "hi", text: { verbosity: "loud" } })).toMatchObject({
      message: "Invalid value: 'loud'. Supported values are: 'low', 'medium', and 'high'.",
      param: "text.verbosity",
    });
    const body = { model: "local", input: "hi", reasoning: { effort: "xhigh", summary: "auto" }, text: { verbosity: "low" }, service_tier: "flex", include: ["reasoning.encrypted_content"] };
    const ok = await router.fetch("/v1/responses", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    expect(ok.status).toBe(200);
  });

  it("a tool_choice naming a tool is checked against the tools offered, in OpenAI's words", async () => {
    const f = { type: "function", name: "lookup", parameters: { type: "object", properties: {} } };
    expect(await post({ model: "local", input: "hi", tools: [f], tool_choice: { type: "function", name: "look" } })).toMatchObject({
      status: 400,
      message: "Tool choice 'look' not found in 'tools' parameter.",
      param: "tool_choice",
    });
    const ok = await router.fetch("/v1/responses", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "local", input: "hi", tools: [f], tool_choice: { type: "function", name: "lookup" } }) });
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { tool_choice: unknown }).tool_choice).toEqual({ type: "function", name: "lookup" });
    // A function inside a namespace is offered too; with an MCP server the tools are not all in the request.
    const ns = { type: "namespace", name: "crm", description: "CRM", tools: [{ type: "function", name: "find_customer", parameters: { type: "object", properties: {} } }] };
    const inNamespace = await router.fetch("/v1/responses", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "local", input: "hi", tools: [ns], tool_choice: { type: "function", name: "find_customer" } }) });
    expect(inNamespace.status).toBe(200);
    expect(await post({ model: "local", input: "hi", tools: [ns], tool_choice: { type: "function", name: "find_order" } })).toMatchObject({ status: 400, param: "tool_choice" });
  });

  it("answers 404 naming `model` for an unknown model, and for an unknown previous_response_id", async () => {
    expect(await post({ model: "nope", input: "hi" })).toMatchObject({ status: 404, param: "model", code: "model_not_found" });
    expect(await post({ model: "local", input: "hi", previous_response_id: "resp_unknown" })).toMatchObject({ status: 404, param: "previous_response_id", code: "previous_response_not_found" });
  });

  it("rejects JSON nested deeper than the router handles with 400, not a stack overflow", async () => {
    const deep = `${"[".repeat(1000)}${"]".repeat(1000)}`;
    expect(await post(`{"model":"local","input":"hi","metadata":null,"text":{"format":{"type":"text","x":${deep}}}}`)).toMatchObject({ status: 400, code: "nesting_too_deep" });
  });

  it("413 for a body over server.max_body_bytes, with and without content-length", async () => {
    const big = JSON.stringify({ model: "local", input: "x".repeat(10_000) });
    expect(await post(big)).toMatchObject({ status: 413, type: "invalid_request_error", code: "request_too_large" });
    const chunked = new ReadableStream<Uint8Array>({
      start(c) {
        for (let i = 0; i < 10; i++) c.enqueue(new TextEncoder().encode("x".repeat(1000)));
        c.close();
      },
    });
    const res = await router.fetch("/v1/responses", { method: "POST", body: chunked, headers: { "content-type": "application/json" }, duplex: "half" } as RequestInit);
    expect(res.status).toBe(413);
    expect(((await res.json()) as ErrorBody).error.code).toBe("request_too_large");
  });

  it("a wrong content-type with a JSON body is read as JSON; form data is a 400", async () => {
    const ok = await router.fetch("/v1/responses", { method: "POST", body: JSON.stringify({ model: "local", input: "hi" }), headers: { "content-type": "text/plain" } });
    expect(ok.status).toBe(200);
    expect(await call("POST", "/v1/responses", "model=local&input=hi", { "content-type": "application/x-www-form-urlencoded" })).toMatchObject({ status: 400, code: "invalid_json" });
  });

  it("invalid UTF-8 inside a string is not a server error", async () => {
    const head = new TextEncoder().encode('{"model":"local","input":"bad ');
    const tail = new TextEncoder().encode('"}');
    const res = await router.fetch("/v1/responses", { method: "POST", body: new Uint8Array([...head, 0xff, 0xfe, 0xc3, ...tail]), headers: { "content-type": "application/json" } });
    expect(res.status).toBe(200);
  });
});

describe("other routes", () => {
  it("unknown ids are 404 on GET, DELETE and input_items", async () => {
    for (const [method, path] of [
      ["GET", "/v1/responses/not-an-id"],
      ["DELETE", "/v1/responses/not-an-id"],
      ["GET", "/v1/responses/not-an-id/input_items"],
      ["GET", "/v1/responses/resp_doesnotexist"],
      ["GET", `/v1/responses/${"x".repeat(3000)}`],
      ["GET", "/v1/responses/%00%ff"],
    ] as const) {
      expect(await call(method, path), `${method} ${path}`).toMatchObject({ status: 404, type: "invalid_request_error" });
    }
  });

  it("bad input_items queries name their param", async () => {
    const r = await router.client.responses.create({ model: "local", input: "hi" });
    expect(await call("GET", `/v1/responses/${r.id}/input_items?limit=1000`)).toMatchObject({ status: 400, param: "limit" });
    expect(await call("GET", `/v1/responses/${r.id}/input_items?limit=abc`)).toMatchObject({ status: 400, param: "limit" });
    expect(await call("GET", `/v1/responses/${r.id}/input_items?order=sideways`)).toMatchObject({ status: 400, param: "order" });
    expect(await call("GET", `/v1/responses/${r.id}/input_items?after=msg_nope`)).toMatchObject({ status: 400, param: "after" });
  });

  it("unknown routes and wrong methods are 404 in OpenAI shape (as OpenAI answers them)", async () => {
    for (const [method, path] of [
      ["GET", "/v1/nothing"],
      ["POST", "/v2/responses"],
      ["PUT", "/v1/responses"],
      ["PATCH", "/v1/responses/resp_x"],
      ["GET", "/v1/responses"],
      ["POST", "/v1/models"],
      ["GET", "/"],
    ] as const) {
      expect(await call(method, path, method === "GET" ? undefined : "{}"), `${method} ${path}`).toMatchObject({ status: 404, code: "unknown_url" });
    }
  });

  it("GET /v1/models/{unknown} is 404 naming model", async () => {
    expect(await call("GET", "/v1/models/nope")).toMatchObject({ status: 404, param: "model", code: "model_not_found" });
  });
});
