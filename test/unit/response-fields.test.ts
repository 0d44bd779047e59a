import { setFlagsFromString } from "node:v8";
import { describe, expect, it } from "vitest";
import { ApiError } from "../../src/ops/errors.js";
import { validateCreateRequest } from "../../src/responses/create/validate.js";
import { applyRouterFields, nativeRequestBody, type RouterFields } from "../../src/translate/openai/rewrite.js";
import { responseToEvents } from "../../src/translate/replay.js";
import { responseSkeleton } from "../../src/translate/skeleton.js";
import type { ResponseObject } from "../../src/wire/types.js";
import { openaiResponse } from "../helpers/openai-response.js";

/**
 * The Response fields OpenAI always sends that the openai package types loosely or not at
 * all: `completed_at` (when a response completed, else null) and the penalties (echoed, 0
 * by default), where the router validates, rewrites and replays them.
 */

const CLOCK = () => 1_700_000_100;

/** V8's own answer: does `o` keep fast properties (not a dictionary, which JSON.stringify walks the slow way)? */
setFlagsFromString("--allow-natives-syntax");
const hasFastProperties = new Function("o", "return %HasFastProperties(o)") as (o: object) => boolean;
const meta = { id: "resp_r", createdAt: 1_700_000_000, model: "m", status: "in_progress" as const };

function refusal(body: Record<string, unknown>): ApiError {
  try {
    validateCreateRequest({ model: "m", input: "hi", ...body });
  } catch (err) {
    return err as ApiError;
  }
  throw new Error("accepted");
}

describe("presence_penalty and frequency_penalty in a request", () => {
  it("accept numbers in [-2, 2] and null", () => {
    for (const v of [-2, -0.5, 0, 1.25, 2, null]) expect(() => validateCreateRequest({ model: "m", input: "x", presence_penalty: v, frequency_penalty: v })).not.toThrow();
  });

  it("refuse what is out of range or not a number with a 400 naming the param, in OpenAI's words", () => {
    const above = refusal({ presence_penalty: 2.5 });
    expect(above).toBeInstanceOf(ApiError);
    expect(above.toBody().error).toEqual({
      message: "Invalid 'presence_penalty': decimal above maximum value. Expected a value <= 2, but got 2.5 instead.",
      type: "invalid_request_error",
      param: "presence_penalty",
      code: "decimal_above_max_value",
    });
    expect(above.status).toBe(400);
    expect(refusal({ frequency_penalty: -2.5 }).toBody().error).toMatchObject({ param: "frequency_penalty", code: "decimal_below_min_value" });
    expect(refusal({ frequency_penalty: "0.5" }).toBody().error).toMatchObject({ param: "frequency_penalty", code: "invalid_type" });
  });
});

/** A Response as OpenAI's API writes it: every member, in its order. */
const OPENAI_RESPONSE = openaiResponse({
  id: "resp_up",
  created_at: 1_700_000_000,
  completed_at: 1_700_000_001,
  usage: { input_tokens: 12, input_tokens_details: { cached_tokens: 0 }, output_tokens: 4, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 16 },
});

describe("applyRouterFields (kind: openai)", () => {
  const fields = (): RouterFields => ({ id: "resp_r", previousResponseId: null, store: true, background: false, hideEncryptedReasoning: false, defaults: responseSkeleton({ model: "m" }, meta), clock: CLOCK });

  it("keeps the upstream's completed_at", () => {
    expect(applyRouterFields({ id: "resp_up", status: "completed", completed_at: 1_600_000_000 }, fields()).completed_at).toBe(1_600_000_000);
  });

  it("stamps a completed response that has none; one still running or ended otherwise gets null", () => {
    expect(applyRouterFields({ id: "resp_up", status: "completed" }, fields()).completed_at).toBe(1_700_000_100);
    expect(applyRouterFields({ id: "resp_up", status: "completed", completed_at: null }, fields()).completed_at).toBe(1_700_000_100);
    for (const status of ["in_progress", "incomplete", "failed"]) expect(applyRouterFields({ id: "resp_up", status }, fields()).completed_at).toBeNull();
  });

  it("fills the penalties from the skeleton when the upstream sends none, keeps its own otherwise; drops user: null", () => {
    expect(applyRouterFields({ id: "resp_up", status: "completed" }, fields())).toMatchObject({ presence_penalty: 0, frequency_penalty: 0 });
    expect(applyRouterFields({ id: "resp_up", status: "completed", presence_penalty: 1, frequency_penalty: 0.5 }, fields())).toMatchObject({ presence_penalty: 1, frequency_penalty: 0.5 });
    const r = applyRouterFields({ id: "resp_up", status: "completed", user: null }, fields());
    expect(JSON.parse(JSON.stringify(r))).not.toHaveProperty("user");
    expect(applyRouterFields({ id: "resp_up", status: "completed", user: "u1" }, fields()).user).toBe("u1");
  });

  it("leaves an upstream response an object V8 keeps with fast properties, as OpenAI lays it out (user: null before metadata)", () => {
    // A deleted member other than the last makes V8 keep the object as a dictionary, and every
    // later read and JSON.stringify of it (each lifecycle event, the answer, the store) pays for it.
    const upstream = JSON.parse(JSON.stringify(OPENAI_RESPONSE)) as Record<string, unknown>;
    expect(hasFastProperties(upstream)).toBe(true);
    const r = applyRouterFields(upstream, fields());
    expect(hasFastProperties(r)).toBe(true);
    expect(Object.keys(JSON.parse(JSON.stringify(r)))).not.toContain("user");
  });

  it("gives a sparse upstream response (an OpenAI-compatible server's) every skeleton member and its own values, still with fast properties", () => {
    const sparse = JSON.parse('{"id":"resp_up","object":"response","created_at":5,"model":"llama3","status":"completed","output":[],"temperature":0.2,"usage":null,"extra":1}') as Record<string, unknown>;
    const r = applyRouterFields(sparse, fields());
    expect(hasFastProperties(r)).toBe(true);
    const skeleton = responseSkeleton({ model: "m" }, meta);
    for (const key of Object.keys(skeleton)) expect(r).toHaveProperty(key);
    expect(r).toMatchObject({ id: "resp_r", created_at: 5, model: "llama3", status: "completed", temperature: 0.2, completed_at: 1_700_000_100, store: true, tool_choice: "auto", extra: 1 });
  });
});

describe("nativeRequestBody", () => {
  it("leaves out what the router owns without deleting it from the body (a dictionary for V8), and the JSON has none of it", () => {
    const req = { model: "m", input: "hi", previous_response_id: "resp_prev", conversation: "conv_1", background: false, stream_options: { include_obfuscation: false }, metadata: { a: "b" } };
    const body = nativeRequestBody(req as never, { upstreamModel: "gpt-4.1", history: [], stream: false, wantEncryptedReasoning: false });
    expect(hasFastProperties(body)).toBe(true);
    expect(JSON.parse(JSON.stringify(body))).toEqual({ model: "gpt-4.1", input: "hi", metadata: { a: "b" }, store: false, stream: false });
    const streamed = nativeRequestBody(req as never, { upstreamModel: "gpt-4.1", history: [], stream: true, wantEncryptedReasoning: false });
    expect(JSON.parse(JSON.stringify(streamed))).toMatchObject({ stream: true, stream_options: { include_obfuscation: false } });
  });
});

describe("responseToEvents (replay)", () => {
  it("opens with null completed_at snapshots and ends with the response's own", () => {
    const done = { ...responseSkeleton({ model: "m" }, { ...meta, status: "completed", completedAt: 1_700_000_042 }), usage: null } as ResponseObject;
    const events = responseToEvents(done);
    expect(events.map((e) => [e.type, (e.response as ResponseObject | undefined)?.completed_at])).toEqual([
      ["response.created", null],
      ["response.in_progress", null],
      ["response.completed", 1_700_000_042],
    ]);
  });
});
