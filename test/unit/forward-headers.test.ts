import { describe, expect, it } from "vitest";
import { forwardedHeaders } from "../../src/http/forward-headers.js";

describe("client headers a kind: openai upstream receives", () => {
  const from = (headers: Record<string, string | string[]>) => forwardedHeaders((name) => headers[name]);

  it("passes OpenAI-Beta only, joined when sent several times", () => {
    expect(from({ "openai-beta": "responses=experimental", authorization: "Bearer k", "openai-organization": "org", cookie: "a" })).toEqual({ "openai-beta": "responses=experimental" });
    expect(from({ "openai-beta": ["a=1", "b=2"] })).toEqual({ "openai-beta": "a=1, b=2" });
    expect(from({})).toBeUndefined();
  });

  it("leaves out the socket's own responses_websockets feature, and the header when nothing else is left", () => {
    expect(from({ "openai-beta": "responses_websockets=2026-02-06, responses=experimental" })).toEqual({ "openai-beta": "responses=experimental" });
    expect(from({ "openai-beta": "responses_websockets=2026-02-06" })).toBeUndefined();
  });
});
