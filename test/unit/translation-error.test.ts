import { describe, expect, it } from "vitest";
import { ApiError, isKnownError, toApiError } from "../../src/ops/errors.js";
import { errorResponse } from "../../src/http/errors.js";
import { TranslationError } from "../../src/translate/errors.js";

describe("TranslationError -> the client's error", () => {
  it("maps to a 400 invalid_request_error keeping message, param and code", () => {
    const e = toApiError(new TranslationError("Stored prompt templates need an OpenAI-hosted model.", "prompt", "unsupported_parameter"));
    expect(e).toBeInstanceOf(ApiError);
    expect(e.status).toBe(400);
    expect(e.toBody()).toEqual({
      error: { message: "Stored prompt templates need an OpenAI-hosted model.", type: "invalid_request_error", param: "prompt", code: "unsupported_parameter" },
    });
  });

  it("leaves param and code null when the translation names none", () => {
    expect(toApiError(new TranslationError("bad")).toBody().error).toEqual({ message: "bad", type: "invalid_request_error", param: null, code: null });
  });

  it("renders as an HTTP 400 with the OpenAI error body", async () => {
    const res = errorResponse(new TranslationError("'tools' must be an array.", "tools"));
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: { message: "'tools' must be an array.", type: "invalid_request_error", param: "tools", code: null } });
  });

  it("counts as a known error (not logged as a router fault); a plain Error does not", () => {
    expect(isKnownError(new TranslationError("x"))).toBe(true);
    expect(isKnownError(new Error("x"))).toBe(false);
    expect(toApiError(new Error("x")).status).toBe(500);
  });
});
