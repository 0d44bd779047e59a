/**
 * Client request headers a `kind: openai` upstream receives as the client sent them: an
 * allow-list of names, so credentials (`authorization`, `api-key`, `openai-organization`,
 * `openai-project`, cookies) never pass: each endpoint gets only its own key.
 */
export const FORWARDED_HEADERS: readonly string[] = ["openai-beta"];

/**
 * The forwarded headers of a request (`get` reads one by lower-case name), or undefined when
 * it has none. `OpenAI-Beta` loses its `responses_websockets=...` feature: that one names the
 * client's socket to the router, and the router calls upstreams over HTTP.
 */
export function forwardedHeaders(get: (name: string) => string | string[] | undefined): Record<string, string> | undefined {
  let out: Record<string, string> | undefined;
  for (const name of FORWARDED_HEADERS) {
    const raw = get(name);
    let value = Array.isArray(raw) ? raw.join(", ") : raw;
    if (name === "openai-beta" && value) value = withoutSocketFeature(value);
    if (value) (out ??= {})[name] = value;
  }
  return out;
}

function withoutSocketFeature(value: string): string {
  if (!value.includes("responses_websockets")) return value;
  return value
    .split(",")
    .map((v) => v.trim())
    .filter((v) => v && !v.startsWith("responses_websockets"))
    .join(", ");
}
