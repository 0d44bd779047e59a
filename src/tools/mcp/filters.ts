/** `allowed_tools` and `require_approval` as the Responses API defines them for an MCP tool. */

export interface ToolFilter {
  tool_names?: string[];
  read_only?: boolean;
}

export type AllowedTools = string[] | ToolFilter | null | undefined;
export type RequireApproval = "always" | "never" | { always?: ToolFilter; never?: ToolFilter } | null | undefined;

/** What a listed tool says about itself, as far as the filters read it. */
export interface ToolFacts {
  name: string;
  annotations?: unknown;
}

function readOnly(tool: ToolFacts): boolean {
  const a = tool.annotations as { readOnlyHint?: unknown } | null | undefined;
  return a?.readOnlyHint === true;
}

/** A filter names tools by name and/or by their readOnlyHint; an empty one matches none. */
function matches(filter: ToolFilter, tool: ToolFacts): boolean {
  if (filter.tool_names === undefined && filter.read_only === undefined) return false;
  return isAllowed(filter, tool);
}

export function isAllowed(allowed: AllowedTools, tool: ToolFacts): boolean {
  if (allowed == null) return true;
  if (Array.isArray(allowed)) return allowed.includes(tool.name);
  if (allowed.tool_names === undefined && allowed.read_only === undefined) return true;
  const byName = allowed.tool_names === undefined || allowed.tool_names.includes(tool.name);
  const byHint = allowed.read_only === undefined || readOnly(tool) === allowed.read_only;
  return byName && byHint;
}

/** OpenAI's default: every call needs approval unless the request says otherwise. */
export function needsApproval(rule: RequireApproval, tool: ToolFacts): boolean {
  if (rule == null || rule === "always") return true;
  if (rule === "never") return false;
  if (rule.never && matches(rule.never, tool)) return false;
  if (rule.always && matches(rule.always, tool)) return true;
  // A filter object that names only `never` tools means the rest still need approval; one naming only `always` tools frees the rest.
  return rule.always === undefined;
}
