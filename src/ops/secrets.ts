/**
 * Keeping secrets (endpoint keys, a search provider's key, an MCP server's header values) out
 * of text that leaves the router: error messages, error bodies and stream events an upstream
 * may echo them in. One rule everywhere: the value itself, and its first 8 characters (what
 * "Incorrect API key provided: sk-abc123**...**" keeps), become `[redacted]`. A value shorter
 * than 8 characters ("EMPTY", "none", a content type) is no credential and would mangle the text.
 */
export const REDACTED = "[redacted]";

/** `text` without `secret` or its 8-character head. */
export function scrubSecret(text: string, secret?: string): string {
  if (!secret || secret.length < 8) return text;
  const head = secret.slice(0, 8);
  // The common case (nothing to scrub) without a split and join: the key starts with its head.
  if (!text.includes(head)) return text;
  let out = text.split(secret).join(REDACTED);
  if (out.includes(head)) out = out.split(head).join(REDACTED);
  return out;
}

/** `text` without any of `secrets` (each as `scrubSecret`). */
export function scrubSecrets(text: string, secrets: readonly (string | undefined)[]): string {
  let out = text;
  for (const secret of secrets) out = scrubSecret(out, secret);
  return out;
}
