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

/** Fields whose value is a credential wherever they sit in the config. */
const SECRET_FIELDS = new Set(["key", "api_key", "password", "sentinel_password", "token", "secret", "authorization"]);

/**
 * A config tree as it may be shown (the console's config page): credential fields, every
 * `headers` value and a URL's password become `[redacted]`; then any of those values still
 * found elsewhere in the text is scrubbed too (one secret written in two places).
 */
export function redactTree(tree: unknown): unknown {
  const found: string[] = [];
  const walk = (value: unknown, field: string, inHeaders: boolean): unknown => {
    if (typeof value === "string") {
      if (inHeaders || SECRET_FIELDS.has(field)) {
        found.push(value);
        return REDACTED;
      }
      return redactUrl(value, found);
    }
    if (Array.isArray(value)) return value.map((v) => walk(v, field, inHeaders));
    if (value !== null && typeof value === "object") {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) out[k] = walk(v, k, inHeaders || k === "headers");
      return out;
    }
    return value;
  };
  const redacted = walk(tree, "", false);
  return JSON.parse(scrubSecrets(JSON.stringify(redacted), found));
}

/** A URL's password (redis://user:pass@host) as `[redacted]`; any other text unchanged. */
function redactUrl(text: string, found: string[]): string {
  const m = /^([a-z][a-z0-9+.-]*:\/\/[^:/@\s]*:)([^@\s]+)(@.*)$/i.exec(text);
  if (!m) return text;
  found.push(decodeURIComponent(m[2]!));
  return `${m[1]}${REDACTED}${m[3]}`;
}
