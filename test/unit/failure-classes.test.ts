import { describe, expect, it } from "vitest";
import { UpstreamFailure } from "../../src/upstream/errors.js";

/** Which upstream answers count against an endpoint (Envoy-style gateway failures) and which are the request's own. */
const status = (s: number, opts: { json?: boolean; retryAfterMs?: number; message?: string; param?: string; code?: string } = {}) =>
  new UpstreamFailure(
    "ep",
    "status",
    `HTTP ${s}`,
    s,
    { message: opts.message ?? "x", type: "server_error", param: opts.param ?? null, code: opts.code ?? null },
    opts.retryAfterMs,
    { jsonBody: opts.json ?? true, route: "POST /chat/completions" },
  );

describe("UpstreamFailure classification", () => {
  it("endpoint faults: transport errors, 502/503/504, 429 with Retry-After, refused credentials, a non-JSON 5xx, a missing route", () => {
    expect(new UpstreamFailure("ep", "connect", "ECONNREFUSED").endpointFault).toBe(true);
    expect(new UpstreamFailure("ep", "timeout", "first byte").endpointFault).toBe(true);
    for (const s of [502, 503, 504, 401, 403]) expect(status(s).endpointFault, String(s)).toBe(true);
    expect(status(429, { retryAfterMs: 1000 }).endpointFault).toBe(true);
    expect(status(500, { json: false }).endpointFault).toBe(true);
    expect(status(404, { message: "no route" }).endpointFault).toBe(true);
    expect(status(405).endpointFault).toBe(true);
  });

  it("the request's own: a 500 with a JSON error, a 429 without Retry-After, 400, a 404 about a model", () => {
    expect(status(500).endpointFault).toBe(false);
    expect(status(429).endpointFault).toBe(false);
    expect(status(400).endpointFault).toBe(false);
    expect(status(404, { message: "model 'llama' not found, try pulling it first" }).endpointFault).toBe(false);
    expect(status(404, { message: "nope", code: "model_not_found" }).endpointFault).toBe(false);
  });

  it("retries: 5xx and 429 go to another endpoint; only connection-level failures may go to the same one", () => {
    expect(status(500).retryable).toBe(true);
    expect(status(429).retryable).toBe(true);
    expect(status(400).retryable).toBe(false);
    expect(status(500).sameEndpointRetryable).toBe(false);
    expect(new UpstreamFailure("ep", "timeout", "first byte").sameEndpointRetryable).toBe(false);
    expect(new UpstreamFailure("ep", "timeout", "connect timeout", undefined, undefined, undefined, { unreached: true }).sameEndpointRetryable).toBe(true);
    expect(new UpstreamFailure("ep", "connect", "ECONNRESET").sameEndpointRetryable).toBe(true);
  });

  it("a missing route becomes a 502 naming the endpoint and the route", () => {
    const e = status(404, { message: "no route" }).toApiError();
    expect(e.status).toBe(502);
    expect(e.code).toBe("upstream_route_not_found");
    expect(e.message).toContain("'ep'");
    expect(e.message).toContain("POST /chat/completions");
  });
});
