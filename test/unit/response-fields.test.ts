import { describe, expect, it } from "vitest";
import { ApiError } from "../../src/ops/errors.js";
import { validateCreateRequest } from "../../src/responses/create/validate.js";
import { applyRouterFields, type RouterFields } from "../../src/translate/openai/rewrite.js";
import { responseToEvents } from "../../src/translate/replay.js";
import { responseSkeleton } from "../../src/translate/skeleton.js";
import type { ResponseObject } from "../../src/wire/types.js";

/**
 * The Response fields OpenAI always sends that the openai package types loosely or not at
 * all: `completed_at` (when a response completed, else null) and the penalties (echoed, 0
 * by default), where the router validates, rewrites and replays them.
 */

const CLOCK = () => 1_700_000_100;
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
    expect(r).not.toHaveProperty("user");
    expect(applyRouterFields({ id: "resp_up", status: "completed", user: "u1" }, fields()).user).toBe("u1");
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
