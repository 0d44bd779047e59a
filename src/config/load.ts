import { readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import type { z } from "zod";
import { routerConfigSchema, type ParsedRouterConfig } from "./schema.js";

export interface ModelTarget {
  endpoint: string;
  upstreamModel: string;
  weight: number;
}

/** The validated config plus what is derived from it once per load. */
export interface RouterConfig extends ParsedRouterConfig {
  /** model name -> the endpoints that serve it, with the model name each one expects. */
  targets: Map<string, ModelTarget[]>;
  /** Where it came from (for logs); "<inline>" for configs built in code. */
  source: string;
}

export interface ConfigIssue {
  path: string;
  message: string;
}

export class ConfigError extends Error {
  constructor(
    readonly source: string,
    readonly issues: ConfigIssue[],
  ) {
    super(`invalid config ${source}:\n${issues.map((i) => `  - ${i.path || "(root)"}: ${i.message}`).join("\n")}`);
    this.name = "ConfigError";
  }
}

const VAR = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/**
 * Replaces ${VAR} and ${VAR:-default} in every string value (never in keys).
 * Done on the parsed tree, not the text, so a secret with YAML-special characters
 * cannot change the document's structure. A ${VAR} that is unset and has no
 * default is an issue reported with its path.
 */
export function interpolateEnv(value: unknown, env: NodeJS.ProcessEnv, path: string[] = [], issues: ConfigIssue[] = []): unknown {
  if (typeof value === "string") {
    return value.replace(VAR, (_m, name: string, fallback: string | undefined) => {
      const v = env[name];
      if (v !== undefined && v !== "") return v;
      if (fallback !== undefined) return fallback;
      issues.push({ path: path.join("."), message: `environment variable ${name} is not set (write \${${name}:-default} for a default)` });
      return "";
    });
  }
  if (Array.isArray(value)) return value.map((v, i) => interpolateEnv(v, env, [...path, String(i)], issues));
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = interpolateEnv(v, env, [...path, k], issues);
    return out;
  }
  return value;
}

function zodIssues(error: z.ZodError): ConfigIssue[] {
  return error.issues.map((i) => ({ path: i.path.map(String).join("."), message: i.message }));
}

/** Validates an already-parsed object (YAML or inline) into a RouterConfig, or throws ConfigError. */
export function buildConfig(raw: unknown, source = "<inline>", env: NodeJS.ProcessEnv = process.env): RouterConfig {
  const issues: ConfigIssue[] = [];
  const interpolated = interpolateEnv(raw, env, [], issues);
  const parsed = routerConfigSchema.safeParse(interpolated);
  if (!parsed.success) issues.push(...zodIssues(parsed.error), ...crossReferenceIssues(interpolated));
  if (issues.length > 0 || !parsed.success) throw new ConfigError(source, issues);
  const cfg = parsed.data;
  const weights = new Map(cfg.endpoints.map((e) => [e.name, e.weight]));
  const targets = new Map<string, ModelTarget[]>();
  for (const [model, m] of Object.entries(cfg.models)) {
    targets.set(
      model,
      m.endpoints.map((ref) => {
        const r = typeof ref === "string" ? { name: ref } : ref;
        return {
          endpoint: r.name,
          upstreamModel: ("upstream_model" in r && r.upstream_model) || m.upstream_model || model,
          weight: ("weight" in r && r.weight) || weights.get(r.name) || 1,
        };
      }),
    );
  }
  return { ...cfg, targets, source };
}

/**
 * Model -> endpoint references, checked on the raw tree so they are reported
 * together with shape errors (zod runs its own refinement only on a valid shape).
 */
function crossReferenceIssues(raw: unknown): ConfigIssue[] {
  const r = raw as { endpoints?: unknown; models?: unknown };
  if (!Array.isArray(r?.endpoints) || !r.models || typeof r.models !== "object") return [];
  const names = new Set(r.endpoints.map((e) => (e as { name?: unknown })?.name).filter((n) => typeof n === "string"));
  const issues: ConfigIssue[] = [];
  for (const [model, m] of Object.entries(r.models as Record<string, { endpoints?: unknown }>)) {
    if (!Array.isArray(m?.endpoints)) continue;
    m.endpoints.forEach((ref, i) => {
      const name = typeof ref === "string" ? ref : (ref as { name?: unknown })?.name;
      if (typeof name === "string" && !names.has(name)) issues.push({ path: `models.${model}.endpoints.${i}`, message: `unknown endpoint "${name}"` });
    });
  }
  return issues;
}

export function parseConfigText(text: string, source: string, env: NodeJS.ProcessEnv = process.env): RouterConfig {
  let raw: unknown;
  try {
    raw = parseYaml(text, { prettyErrors: true });
  } catch (err) {
    throw new ConfigError(source, [{ path: "", message: `YAML syntax: ${(err as Error).message}` }]);
  }
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    throw new ConfigError(source, [{ path: "", message: "the file must hold a YAML mapping (server, endpoints, models, ...)" }]);
  }
  return buildConfig(raw, source, env);
}

export function loadConfigFile(path: string, env: NodeJS.ProcessEnv = process.env): RouterConfig {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new ConfigError(path, [{ path: "", message: `cannot read file: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}` }]);
  }
  return parseConfigText(text, path, env);
}
