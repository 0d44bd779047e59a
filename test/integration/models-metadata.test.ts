import { describe, expect, it } from "vitest";
import { useTwoKindRouter } from "../helpers/router.js";

/** /v1/models carries what router.yaml knows of each model; Codex's catalog request gets Codex's shape. */
const env = useTwoKindRouter({
  models: {
    local: { endpoints: ["box"], upstream_model: "llama3.1:8b", context_window: 32768, max_output_tokens: 4096, input_modalities: ["text", "image", "audio"], reasoning: true },
    plain: { endpoints: ["box"] },
    sized: { endpoints: ["box"], context_window: 8192 },
    "gpt-4.1": { endpoints: ["oai"], context_window: 1047576 },
  },
});

describe("/v1/models metadata", () => {
  it("the openai SDK lists each model with its configured context window, output limit, modalities and reasoning", async () => {
    const models = [];
    for await (const m of env.router.client.models.list()) models.push(m);
    const local = models.find((m) => m.id === "local") as any;
    expect(local).toMatchObject({ id: "local", object: "model", owned_by: "responses-router", context_window: 32768, max_output_tokens: 4096, input_modalities: ["text", "image", "audio"], reasoning: true });
    expect(typeof local.created).toBe("number");
    const plain = models.find((m) => m.id === "plain") as any;
    expect(Object.keys(plain).sort()).toEqual(["created", "id", "object", "owned_by"]);
    expect(await env.router.client.models.retrieve("local")).toMatchObject({ context_window: 32768, reasoning: true });
  });

  it("Codex's catalog request (client_version) is answered in the shape Codex reads, the OpenAI list beside it", async () => {
    const res = await env.router.fetch("/v1/models?client_version=0.169.0", { headers: { authorization: "Bearer test-key" } });
    expect(res.status).toBe(200);
    const body: any = await res.json();
    expect(body.object).toBe("list");
    expect(body.data.map((m: any) => m.id)).toEqual(["local", "plain", "sized", "gpt-4.1"]);
    // Models Codex has its own metadata for (gpt-*, o*, codex*), and those without a known
    // context window, are left to Codex's own metadata and fallback.
    expect(body.models.map((m: any) => m.slug)).toEqual(["local", "sized"]);
    const [local, sized] = body.models;
    expect(local).toMatchObject({
      slug: "local",
      display_name: "local",
      context_window: 32768,
      input_modalities: ["text", "image"],
      default_reasoning_level: "medium",
      supports_reasoning_summaries: true,
      visibility: "list",
      supported_in_api: true,
      shell_type: "shell_command",
      apply_patch_tool_type: "freeform",
      truncation_policy: { mode: "bytes", limit: 10000 },
      experimental_supported_tools: [],
    });
    expect(local.supported_reasoning_levels.map((l: any) => l.effort)).toEqual(["low", "medium", "high"]);
    expect(local.base_instructions.length).toBeGreaterThan(0);
    expect(sized).toMatchObject({ context_window: 8192, supported_reasoning_levels: [], supports_reasoning_summaries: false });
    expect(sized.default_reasoning_level).toBeUndefined();
    expect(sized.input_modalities).toBeUndefined();
    for (const m of body.models) {
      for (const field of ["slug", "display_name", "supported_reasoning_levels", "shell_type", "visibility", "supported_in_api", "priority", "base_instructions", "supports_reasoning_summaries", "support_verbosity", "truncation_policy", "supports_parallel_tool_calls", "experimental_supported_tools"]) {
        expect(m, field).toHaveProperty(field);
      }
    }
  });
});
