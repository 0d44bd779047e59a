import { describe, expect, it } from "vitest";
import { buildConfig } from "../../src/config/load.js";
import { UpstreamFailure } from "../../src/upstream/errors.js";
import { UpstreamClient } from "../../src/upstream/client.js";
import { replayableItems } from "../../src/translate/openai/rewrite.js";
import { anthropicHeaders, DEFAULT_ANTHROPIC_VERSION, modelBetaHeader, versionTraits } from "../../src/translate/anthropic/version.js";
import { encodeThinking } from "../../src/translate/anthropic/types.js";

const base = (endpoint: Record<string, unknown>, model: Record<string, unknown> = {}) => ({
  endpoints: [{ name: "ep", url: "http://127.0.0.1:9/v1", ...endpoint }],
  models: { m: { endpoints: ["ep"], ...model } },
});

describe("kind: anthropic config", () => {
  it("parses with the defaults a Messages request needs", () => {
    const cfg = buildConfig(base({ kind: "anthropic", api_key: "k" }));
    expect(cfg.endpoints[0]).toMatchObject({ kind: "anthropic" });
    expect(cfg.models.m).toMatchObject({ prompt_caching: true, structured_output: "tool", thinking_budget: { minimal: 1024, low: 2048, medium: 8192, high: 16384, xhigh: 32768 } });
  });

  it("rejects anthropic settings on other kinds, a bad version and a budget under Anthropic's minimum", () => {
    expect(() => buildConfig(base({ kind: "chat", anthropic_version: "2023-06-01" }))).toThrow(/anthropic_version applies to kind: anthropic/);
    expect(() => buildConfig(base({ kind: "anthropic", anthropic_version: "latest" }))).toThrow(/API version date/);
    expect(() => buildConfig(base({ kind: "anthropic" }, { thinking_budget: { low: 500 } }))).toThrow(/at least 1024/);
  });

  it("sends the key as x-api-key with the version and betas, never as a bearer token; the url gains /v1", () => {
    expect(anthropicHeaders({ api_key: "k", anthropic_beta: ["a", "b"] })).toEqual({ "anthropic-version": DEFAULT_ANTHROPIC_VERSION, "x-api-key": "k", "anthropic-beta": "a,b" });
    expect(modelBetaHeader(["a"], ["b", "a"])).toEqual({ "anthropic-beta": "a,b" });
    expect(modelBetaHeader(["a"], undefined)).toBeUndefined();
    expect(versionTraits("2023-06-01")).toEqual({ sampling: true, systemMessages: false });
    expect(versionTraits(undefined)).toEqual({ sampling: false, systemMessages: true });
    const cfg = buildConfig({ endpoints: [{ name: "ep", url: "http://127.0.0.1:9", kind: "anthropic", api_key: "k" }], models: { m: { endpoints: ["ep"] } } });
    const client = new UpstreamClient(cfg.endpoints[0]!);
    expect((client as unknown as { basePath: string }).basePath).toBe("/v1");
    expect((client as unknown as { headers: Record<string, string> }).headers.authorization).toBeUndefined();
    void client.destroy();
  });
});

describe("Anthropic failures", () => {
  it("529 overloaded counts against the endpoint, is retried elsewhere and answers 503", () => {
    const f = new UpstreamFailure("ep", "status", "HTTP 529", 529, { message: "Overloaded", type: "server_error", param: null, code: "upstream_overloaded" }, 2000, { jsonBody: true });
    expect(f.endpointFault).toBe(true);
    expect(f.retryable).toBe(true);
    const e = f.toApiError();
    expect(e.status).toBe(503);
    expect(e.code).toBe("upstream_overloaded");
    expect(e.headers["retry-after"]).toBe("2");
  });
});

describe("Anthropic thinking on an openai endpoint", () => {
  it("is left out of the replayed history (OpenAI cannot read it); OpenAI's own encrypted reasoning stays", () => {
    const items = replayableItems([
      { type: "reasoning", id: "rs_1", summary: [], encrypted_content: encodeThinking({ type: "thinking", thinking: "t", signature: "s" }) },
      { type: "reasoning", id: "rs_2", summary: [], encrypted_content: "gAAAAB-openai" },
    ]);
    expect(items).toEqual([{ type: "reasoning", id: "rs_2", summary: [], encrypted_content: "gAAAAB-openai" }]);
  });
});
