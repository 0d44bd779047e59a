import type { Hono } from "hono";
import { notFound } from "../../ops/errors.js";
import { mayUseModel, visibleModels } from "../../keys/policy.js";
import type { ModelConfig } from "../../runtime/models.js";
import type { Runtime } from "../../runtime/runtime.js";
import type { AppEnv } from "../context.js";

/**
 * The model list. Each key sees only the models it may call (another key's model is "does not
 * exist"), each with what router.yaml says of it. Codex asks the same URL for its catalog
 * (`GET /models?client_version=...`) and reads `models`; that request is answered in Codex's
 * shape, with the OpenAI list beside it.
 */
export function modelsRoutes(app: Hono<AppEnv>, rt: Runtime): void {
  app.get("/v1/models", (c) => {
    const names = visibleModels(rt.config, c.get("apiKey"));
    const list = { object: "list", data: names.map((id) => modelObject(id, rt.config.models[id]!)) };
    if (c.req.query("client_version") === undefined) return c.json(list);
    const models = names.filter((id) => inCodexCatalog(id, rt.config.models[id]!)).map((id, i) => codexModelInfo(id, rt.config.models[id]!, i));
    return c.json({ ...list, models });
  });

  app.get("/v1/models/:model{.+}", (c) => {
    const id = c.req.param("model");
    if (!Object.hasOwn(rt.config.models, id) || !mayUseModel(c.get("apiKey"), id)) throw notFound(`The model '${id}' does not exist`, "model", "model_not_found");
    return c.json(modelObject(id, rt.config.models[id]!));
  });
}

const STARTED = Math.floor(Date.now() / 1000);

/**
 * Model families Codex ships its own metadata for (prompts tuned per model, tools, context
 * windows): left out of its catalog, since an entry here would replace that metadata.
 */
export const CODEX_KNOWS = /^(gpt-|o\d|codex)/i;

/**
 * Codex takes a catalog entry instead of everything it would otherwise assume for a model
 * (its fallback for unknown names: prompt, tools, context window), so only models whose
 * context window router.yaml knows are listed; the rest keep Codex's own fallback.
 */
export function inCodexCatalog(id: string, m: ModelConfig): boolean {
  return m.context_window !== undefined && !CODEX_KNOWS.test(id);
}

/** OpenAI's Model object, plus what the config knows (only the fields it sets). */
export function modelObject(id: string, m: ModelConfig): Record<string, unknown> {
  const out: Record<string, unknown> = { id, object: "model", created: STARTED, owned_by: "responses-router" };
  if (m.context_window !== undefined) out.context_window = m.context_window;
  if (m.max_output_tokens !== undefined) out.max_output_tokens = m.max_output_tokens;
  if (m.input_modalities !== undefined) out.input_modalities = m.input_modalities;
  if (m.reasoning !== undefined) out.reasoning = m.reasoning;
  return out;
}

/**
 * Codex's base instructions for a model it learns of from this catalog (it uses them as the
 * request's `instructions`, so they must not be empty). Codex's own `base_instructions` /
 * `model_instructions_file` setting replaces them.
 */
export const CODEX_BASE_INSTRUCTIONS = [
  "You are a coding agent running in the Codex CLI on the user's machine. You work in the current workspace through the tools you are given: run shell commands to inspect and test, and edit files with the patch tool when there is one.",
  "Read the relevant files before changing them. Keep changes focused on the task, match the existing style, and do not revert changes you did not make.",
  "Check your work by running the project's build or tests when that is possible. If something fails, read the error and fix the cause.",
  "Ask only when you cannot proceed safely. When you are done, reply with a short summary of what you changed and anything the user should know.",
].join("\n\n");

const EFFORTS = [
  { effort: "low", description: "Fast responses with lighter reasoning" },
  { effort: "medium", description: "Balances speed and reasoning depth" },
  { effort: "high", description: "Greater reasoning depth for complex problems" },
];

/**
 * One model as Codex's catalog entry (codex-rs `ModelInfo`: every field it requires, the
 * capabilities as Codex's recent fallback for unknown models has them - shell_command tool,
 * freeform apply_patch, parallel calls - and `context_window`, so Codex sizes its context and
 * auto-compaction instead of guessing).
 */
export function codexModelInfo(id: string, m: ModelConfig, priority: number): Record<string, unknown> {
  const out: Record<string, unknown> = {
    slug: id,
    display_name: id,
    description: null,
    supported_reasoning_levels: m.reasoning ? EFFORTS : [],
    shell_type: "shell_command",
    visibility: "list",
    supported_in_api: true,
    priority,
    upgrade: null,
    base_instructions: CODEX_BASE_INSTRUCTIONS,
    supports_reasoning_summaries: m.reasoning === true,
    support_verbosity: false,
    default_verbosity: null,
    apply_patch_tool_type: "freeform",
    truncation_policy: { mode: "bytes", limit: 10_000 },
    supports_parallel_tool_calls: true,
    experimental_supported_tools: [],
  };
  if (m.reasoning) out.default_reasoning_level = "medium";
  if (m.context_window !== undefined) out.context_window = m.context_window;
  // Codex knows text and images only; another name would make it reject the whole catalog.
  if (m.input_modalities !== undefined) out.input_modalities = m.input_modalities.filter((x) => x === "text" || x === "image");
  return out;
}
