/**
 * The Messages API versions the translation knows. The `anthropic-version` header picks what a
 * request may carry: `2023-06-01` takes `temperature`/`top_p`/`top_k` and only a top-level
 * `system`; the versions from 2026-10-21 on (the one the installed @anthropic-ai/sdk sends) drop
 * the sampling parameters and accept `system`-role messages among the turns.
 */
export const DEFAULT_ANTHROPIC_VERSION = "2026-10-21";

/** What a request for one API version may carry. */
export interface VersionTraits {
  /** `temperature`, `top_p`, `top_k` are accepted. */
  sampling: boolean;
  /** `{role: "system"}` messages are accepted among the turns. */
  systemMessages: boolean;
}

export function versionTraits(version: string | undefined): VersionTraits {
  const modern = (version ?? DEFAULT_ANTHROPIC_VERSION) >= DEFAULT_ANTHROPIC_VERSION;
  return { sampling: !modern, systemMessages: modern };
}

/** The headers of an anthropic endpoint: the key as `x-api-key` (never a bearer token), the version, its beta features. */
export function anthropicHeaders(cfg: { api_key?: string; anthropic_version?: string; anthropic_beta?: string[] }): Record<string, string> {
  const headers: Record<string, string> = { "anthropic-version": cfg.anthropic_version ?? DEFAULT_ANTHROPIC_VERSION };
  if (cfg.api_key) headers["x-api-key"] = cfg.api_key;
  if (cfg.anthropic_beta?.length) headers["anthropic-beta"] = cfg.anthropic_beta.join(",");
  return headers;
}

/** A model's beta features join its endpoint's: the request's `anthropic-beta` header, replacing the endpoint's own; none when the model adds nothing. */
export function modelBetaHeader(endpoint: string[] | undefined, model: string[] | undefined): Record<string, string> | undefined {
  if (!model?.length) return undefined;
  return { "anthropic-beta": [...new Set([...(endpoint ?? []), ...model])].join(",") };
}
