import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { chatChunk, chatCompletion, chatTextChunks, chatToolCallChunks, nativeEvents, nativeResponse, startMockUpstream, type MockUpstream, type RecordedRequest, type Reply } from "../helpers/mock-upstream.js";
import { assertResponsesGrammar } from "../helpers/grammar.js";
import { parseSse, startTestRouter, twoKindConfig, type TestRouter } from "../helpers/router.js";
import { postResponses, waitUntil } from "../helpers/wait.js";
import { finalResponse, upgradeStatus, WsClient, type WsEvent } from "../helpers/ws-client.js";
import { metricSample } from "../helpers/metrics-text.js";

/**
 * /v1/responses over a WebSocket, driven by the openai package's ResponsesWS client against
 * real mock upstreams of both kinds: tool loops with store:false chaining on the socket,
 * lanes, generate:false, errors that leave the socket usable, limits and cancellation.
 */
let chat: MockUpstream;
let oai: MockUpstream;
let router: TestRouter;
const sockets: WsClient[] = [];

const TOOL = { type: "function" as const, name: "get_weather", description: "Weather for a city", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] }, strict: false };

/** Tool calls the scripted models make before they answer. */
const CALLS = 3;

/** Chat backend: calls the tool CALLS times, then answers quoting the last tool output. */
function chatModel(req: RecordedRequest): Reply {
  const messages = req.body.messages as { role: string; content: unknown }[];
  const tools = messages.filter((m) => m.role === "tool");
  const id = `call_${messages.length}`;
  if (tools.length < CALLS) {
    if (!req.body.stream) return { kind: "json", body: chatCompletion(null, req.body.model, { tool_calls: [{ id, type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }], finish_reason: "tool_calls" }) };
    return { kind: "sse", frames: [chatChunk({ role: "assistant", content: null }), ...chatToolCallChunks([{ id, name: "get_weather", args: ['{"city":', '"Paris"}'] }])] };
  }
  const text = `It is ${String(tools.at(-1)!.content)}`;
  if (!req.body.stream) return { kind: "json", body: chatCompletion(text, req.body.model) };
  return { kind: "sse", frames: [...chatTextChunks(["It is ", String(tools.at(-1)!.content)], req.body.model), "data: [DONE]\n\n"] };
}

/** OpenAI backend: the same loop in Responses items. */
function responsesModel(req: RecordedRequest): Reply {
  const input = (Array.isArray(req.body.input) ? req.body.input : []) as { type?: string; output?: unknown }[];
  const outputs = input.filter((i) => i.type === "function_call_output");
  const resp =
    outputs.length >= CALLS
      ? nativeResponse(`It is ${String(outputs.at(-1)!.output)}`, req.body.model, `resp_up${input.length}`)
      : {
          ...nativeResponse("", req.body.model, `resp_up${input.length}`),
          output: [{ id: `fc_up${input.length}`, type: "function_call", status: "completed", call_id: `call_${input.length}`, name: "get_weather", arguments: '{"city":"Paris"}' }],
        };
  if (!req.body.stream) return { kind: "json", body: resp };
  return { kind: "sse", frames: nativeEvents(resp as ReturnType<typeof nativeResponse>) };
}

function open(apiKey?: string): WsClient {
  const c = new WsClient(router.url, apiKey);
  sockets.push(c);
  return c;
}

beforeAll(async () => {
  chat = await startMockUpstream();
  oai = await startMockUpstream();
  router = await startTestRouter(twoKindConfig(chat.url, oai.url, { server: { websocket: { max_lanes: 3, max_message_bytes: 65_536 } } }));
});
afterAll(async () => {
  for (const s of sockets) s.ws.socket.terminate?.();
  await router?.close(1000);
  await chat?.close();
  await oai?.close();
});
beforeEach(() => {
  chat.requests.length = 0;
  oai.requests.length = 0;
  chat.setDefault("/chat/completions", chatModel);
  oai.setDefault("/responses", responsesModel);
});

const KINDS = [
  { kind: "chat", model: "local", upstream: () => chat },
  { kind: "openai", model: "gpt-4.1", upstream: () => oai },
] as const;

describe.each(KINDS)("a tool loop over one socket ($kind backend)", ({ model, kind, upstream }) => {
  it("chains store:false turns by previous_response_id on the socket, with the events HTTP streams", async () => {
    const ws = open();
    let previous: string | undefined;
    let input: unknown = "What is the weather in Paris? Ask the tool three times.";
    for (let turn = 0; turn <= CALLS; turn++) {
      const events = await ws.create({ model, input: input as string, tools: [TOOL], store: false, previous_response_id: previous });
      // The chat path's events are the router's own; a native backend's pass through as it sent them.
      if (kind === "chat") assertResponsesGrammar(events as never);
      expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
      const response = finalResponse(events);
      expect(response.status).toBe("completed");
      expect(response.previous_response_id ?? undefined).toBe(previous);
      // The backend saw the whole history so far, rebuilt from the connection's memory.
      const sent = upstream().requests.at(-1)!.body;
      if (kind === "chat") expect(sent.messages.filter((m: { role: string }) => m.role === "tool")).toHaveLength(turn);
      else expect([sent.input].flat().filter((i: { type?: string }) => i.type === "function_call_output")).toHaveLength(turn);
      if (turn === CALLS) {
        expect(response.output.at(-1).content[0].text).toBe(`It is sunny (turn ${CALLS - 1})`);
        break;
      }
      const call = response.output.find((i: { type: string }) => i.type === "function_call");
      expect(call, JSON.stringify(response.output)).toBeDefined();
      expect(call.name).toBe("get_weather");
      previous = response.id;
      input = [{ type: "function_call_output", call_id: call.call_id, output: `sunny (turn ${turn})` }];
    }
    // store:false: nothing is in the store, and another connection cannot chain from it.
    expect((await router.fetch(`/v1/responses/${previous}`, { headers: { authorization: "Bearer test-key" } })).status).toBe(404);
    const other = open();
    const [err] = await other.create({ model, input: [{ type: "function_call_output", call_id: "call_x", output: "x" }], previous_response_id: previous });
    // OpenAI's socket says 400 here (HTTP: 404), with its own words.
    expect(err).toMatchObject({ type: "error", status: 400, error: { code: "previous_response_not_found", param: "previous_response_id", type: "invalid_request_error", message: `Previous response with id '${previous}' not found.` } });
    ws.close();
    other.close();
  });

  it("sends exactly the event sequence POST /v1/responses streams for the same request", async () => {
    const body = { model, input: "What is the weather in Paris?", tools: [TOOL], store: false };
    const http = parseSse(await (await postResponses(router.url, { ...body, stream: true }, { headers: { authorization: "Bearer test-key" } })).text()).map((f) => f.data);
    const ws = open();
    const events = await ws.create(body);
    const shape = (e: WsEvent) => ({ type: e.type, seq: e.sequence_number, output_index: e.output_index, delta: e.delta, keys: Object.keys(e).sort() });
    expect(events.map(shape)).toEqual(http.map(shape));
    ws.close();
  });

  it("store:true turns are stored as over HTTP: GET works and HTTP chains from a socket's turn", async () => {
    const ws = open();
    const first = finalResponse(await ws.create({ model, input: "Weather in Paris?", tools: [TOOL] }));
    const got = await router.client.responses.retrieve(first.id);
    expect(got.id).toBe(first.id);
    const call = first.output.find((i: { type: string }) => i.type === "function_call");
    const next = await router.client.responses.create({ model, previous_response_id: first.id, input: [{ type: "function_call_output", call_id: call.call_id, output: "rainy" }], tools: [TOOL] });
    expect(next.previous_response_id).toBe(first.id);
    expect(next.output.some((i) => i.type === "function_call")).toBe(true);
    ws.close();
  });
});

describe("lanes, warm-up and errors", () => {
  it("runs two stream_id lanes at once; closing the socket cancels the running upstream call and frees its slot", async () => {
    const ws = open();
    chat.enqueue("/chat/completions", { kind: "hang" });
    ws.send({ type: "response.create", stream_id: "slow", model: "local", input: "wait" });
    await waitUntil("the slow lane holds an endpoint slot", () => router.runtime.pool.get("box")!.inFlight === 1);
    const fast = await ws.create({ stream_id: "fast", model: "gpt-4.1", input: "hi" });
    expect(finalResponse(fast).status).toBe("completed");
    expect(fast.every((e) => e.stream_id === "fast")).toBe(true);
    expect(ws.events.filter((e) => e.stream_id === "slow")).toEqual([]);
    const aborted = chat.aborted;
    ws.close();
    await waitUntil("the slow lane's upstream call is aborted", () => chat.aborted === aborted + 1 && router.runtime.pool.get("box")!.inFlight === 0);
  });

  it("runs a lane's requests in order (FIFO) and tags every event with its lane", async () => {
    const ws = open();
    ws.send({ type: "response.create", stream_id: "a", model: "local", input: "one", metadata: { n: "1" } });
    ws.send({ type: "response.create", stream_id: "a", model: "local", input: "two", metadata: { n: "2" } });
    const done = await ws.until("two completions on lane a", () => {
      const c = ws.events.filter((e) => e.type === "response.completed");
      return c.length === 2 ? c : undefined;
    });
    expect(done.map((e) => e.response.metadata.n)).toEqual(["1", "2"]);
    expect(ws.events.every((e) => e.stream_id === "a")).toBe(true);
    ws.close();
  });

  it("refuses a lane beyond server.websocket.max_lanes with an error event on that lane", async () => {
    const ws = open();
    for (const id of ["l1", "l2", "l3"]) {
      chat.enqueue("/chat/completions", { kind: "hang" });
      ws.send({ type: "response.create", stream_id: id, model: "local", input: "wait" });
    }
    const [err] = await ws.create({ stream_id: "l4", model: "gpt-4.1", input: "hi" });
    expect(err).toMatchObject({ type: "error", status: 429, stream_id: "l4", error: { code: "too_many_streams", param: "stream_id" } });
    ws.close();
    await waitUntil("the hanging lanes' slots are freed", () => router.runtime.pool.get("box")!.inFlight === 0);
  });

  it("generate:false prepares a turn without calling a backend; the next turn continues from it", async () => {
    for (const { model, upstream } of KINDS) {
      const ws = open();
      const before = upstream().requests.length;
      const warm = await ws.create({ model, input: [{ role: "developer", content: "You are terse." }], tools: [TOOL], store: false, generate: false } as never);
      expect(warm.map((e) => e.type)).toEqual(["response.created", "response.in_progress", "response.completed"]);
      const prepared = finalResponse(warm);
      expect(prepared).toMatchObject({ status: "completed", output: [], model });
      expect(upstream().requests.length).toBe(before);
      const events = await ws.create({ model, input: "Weather in Paris?", tools: [TOOL], store: false, previous_response_id: prepared.id });
      expect(finalResponse(events).previous_response_id).toBe(prepared.id);
      const sent = JSON.stringify(upstream().requests.at(-1)!.body);
      expect(sent).toContain("You are terse.");
      expect(sent).toContain("Weather in Paris?");
      ws.close();
    }
  });

  it("generate:false with store:true is stored, and with a conversation its input joins the conversation", async () => {
    const ws = open();
    const conv = await router.client.conversations.create({});
    const before = chat.requests.length;
    const warm = finalResponse(await ws.create({ model: "local", input: "Remember the word PLUM.", conversation: conv.id, generate: false } as never));
    expect(chat.requests.length).toBe(before);
    expect((await router.client.responses.retrieve(warm.id)).status).toBe("completed");
    await ws.create({ model: "local", input: "Which word?", conversation: conv.id });
    expect(JSON.stringify(chat.requests.at(-1)!.body.messages)).toContain("PLUM");
    ws.close();
  });

  it("answers bad messages with OpenAI-shaped error events and keeps the socket usable", async () => {
    const ws = open();
    const next = async (send: () => void) => {
      const from = ws.events.length;
      send();
      return ws.until("an event", () => ws.events[from]);
    };
    expect(await next(() => ws.ws.sendRaw("not json"))).toMatchObject({ type: "error", status: 400, error: { type: "invalid_request_error", code: "invalid_json" } });
    expect(await next(() => ws.send({ type: "response.cancel" }))).toMatchObject({ type: "error", status: 400, error: { code: "unknown_event_type", param: "type" } });
    expect(await next(() => ws.send({ model: "local" }))).toMatchObject({ type: "error", error: { code: "missing_required_parameter", param: "type" } });
    expect(await next(() => ws.send({ type: "response.create", input: "hi" }))).toMatchObject({ type: "error", status: 400, error: { param: "model" } });
    expect(await next(() => ws.send({ type: "response.create", model: "nope", input: "hi" }))).toMatchObject({ type: "error", status: 404, error: { code: "model_not_found" } });
    expect(await next(() => ws.send({ type: "response.create", model: "local", input: "hi", background: true }))).toMatchObject({ type: "error", status: 400, error: { param: "background" } });
    expect(await next(() => ws.send({ type: "response.create", stream_id: "x", model: "local", input: 5 }))).toMatchObject({ type: "error", status: 400, stream_id: "x" });
    expect(await next(() => ws.send({ type: "response.steer", previous_response_id: "resp_x", input: "also this" }))).toMatchObject({
      type: "response.steer.failed",
      error: { type: "invalid_request_error", code: "steering_not_supported" },
      steer: { input: "also this", previous_response_id: "resp_x" },
    });
    const ok = await ws.create({ model: "local", input: "hi" });
    expect(finalResponse(ok).status).toBe("completed");
    expect(ws.closed).toBeNull();
    ws.close();
  });

  it("closes with 1003 on a binary frame and 1009 on a message over max_message_bytes", async () => {
    const bin = open();
    bin.ws.sendRaw(Buffer.from([1, 2, 3]));
    expect((await bin.waitClosed()).code).toBe(1003);
    const big = open();
    big.send({ type: "response.create", model: "local", input: "x".repeat(70_000) });
    expect(await big.waitClosed()).toEqual({ code: 1009, reason: "message too big: the limit is 65536 bytes" });
    const metrics = await (await router.fetch("/metrics")).text();
    expect(metricSample(metrics, "responses_router_websocket_closes_total", { reason: "binary_frame" })).toBeGreaterThanOrEqual(1);
    expect(metricSample(metrics, "responses_router_websocket_closes_total", { reason: "message_too_big" })).toBeGreaterThanOrEqual(1);
  });

  it("counts responses by transport and open sockets", async () => {
    const ws = open();
    await ws.create({ model: "local", input: "hi" });
    const metrics = await (await router.fetch("/metrics")).text();
    expect(metricSample(metrics, "responses_router_responses_total", { transport: "websocket", model: "local", status: "200" })).toBeGreaterThanOrEqual(1);
    expect(metricSample(metrics, "responses_router_websocket_connections", {})).toBeGreaterThanOrEqual(1);
    await postResponses(router.url, { model: "local", input: "hi" }, { headers: { authorization: "Bearer test-key" } });
    const after = await (await router.fetch("/metrics")).text();
    expect(metricSample(after, "responses_router_responses_total", { transport: "http", model: "local", status: "200" })).toBeGreaterThanOrEqual(1);
    ws.close();
  });

  it("answers any other upgrade as HTTP would (404)", async () => {
    const status = await upgradeStatus(`${router.url.replace("http", "ws")}/v1/chat/completions`, {});
    expect(status.code).toBe(404);
    expect(JSON.parse(status.body).error.code).toBe("unknown_url");
  });
});
