import type { RouterConfig } from "../config/load.js";

/** One configured `server.api_keys[]` entry. */
export type ApiKey = RouterConfig["server"]["api_keys"][number];

/** The key label of metrics and usage rows for requests made without keys (a router with no api_keys). */
export const NO_KEY = "";

/**
 * The models a key may call, compiled once per key entry (a reload builds new entries,
 * so a changed list takes effect with the next request). No list: every model.
 */
const compiled = new WeakMap<ApiKey, (model: string) => boolean>();

export function mayUseModel(key: ApiKey | null, model: string): boolean {
  if (!key?.models) return true;
  let test = compiled.get(key);
  if (!test) {
    test = compileModelList(key.models);
    compiled.set(key, test);
  }
  return test(model);
}

/** Names match exactly; `*` matches any run of characters and `?` one character. */
export function compileModelList(patterns: string[]): (model: string) => boolean {
  const exact = new Set(patterns.filter((p) => !/[*?]/.test(p)));
  const globs = patterns.filter((p) => /[*?]/.test(p)).map(globToRegExp);
  return (model) => exact.has(model) || globs.some((g) => g.test(model));
}

function globToRegExp(glob: string): RegExp {
  const body = glob.replace(/[.+^${}()|[\]\\/]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".");
  return new RegExp(`^${body}$`);
}

/** The configured models this key may call, in config order. */
export function visibleModels(cfg: RouterConfig, key: ApiKey | null): string[] {
  const all = Object.keys(cfg.models);
  return key?.models ? all.filter((m) => mayUseModel(key, m)) : all;
}

/**
 * Admin reads (usage, backend health) and the admin API: an admin key; on a router without
 * keys (auth let the request in with none) every route is open, so these are too.
 */
export function isAdmin(cfg: RouterConfig, key: ApiKey | null): boolean {
  return key === null ? cfg.server.api_keys.length === 0 : key.role === "admin";
}

/** Tool types every key may use: the client's own functions, which the router never runs. */
const CLIENT_TOOLS = new Set(["function", "namespace", "custom"]);

/**
 * Whether a key may use a tool: its `tools` list names the tool's type (a dated variant such
 * as `web_search_preview_2025_03_11` matches its base name) or, for `mcp`, the server's label.
 * No list: every tool; an empty list: client functions only.
 */
export function mayUseTool(key: ApiKey | null, type: string, serverLabel?: string): boolean {
  if (!key?.tools || CLIENT_TOOLS.has(type)) return true;
  const base = type.replace(/_\d{4}_\d{2}_\d{2}$/, "");
  return key.tools.some((t) => t === type || t === base || (t === "web_search" && base === "web_search_preview") || (type === "mcp" && serverLabel !== undefined && t === serverLabel));
}
