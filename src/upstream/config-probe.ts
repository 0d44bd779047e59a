import type { RouterConfig } from "../config/load.js";
import { UpstreamClient } from "./client.js";
import { UpstreamFailure } from "./errors.js";

export interface EndpointProbe {
  endpoint: string;
  ok: boolean;
  /** One line: what was found (never the endpoint's URL or key). */
  detail: string;
}

/**
 * `check --probe`: contacts every endpoint of a config once (`GET {url}/models`, with the
 * endpoint's own key: a bearer token, or `x-api-key` and `anthropic-version` on `kind: anthropic`) and reports reachability, refused credentials, a url that lacks the
 * API's route (no /v1), and, for chat endpoints, every configured upstream_model the server
 * does not list. Probes run in parallel, each bounded by `timeoutMs`.
 */
export async function probeEndpoints(config: RouterConfig, timeoutMs = 10_000): Promise<EndpointProbe[]> {
  const wanted = new Map<string, Set<string>>(); // endpoint -> upstream models the config sends it
  for (const targets of config.targets.values()) {
    for (const t of targets) {
      let set = wanted.get(t.endpoint);
      if (!set) wanted.set(t.endpoint, (set = new Set()));
      set.add(t.upstreamModel);
    }
  }
  return Promise.all(config.endpoints.map((ep) => probeOne(ep, wanted.get(ep.name) ?? new Set(), timeoutMs)));
}

async function probeOne(ep: RouterConfig["endpoints"][number], models: Set<string>, timeoutMs: number): Promise<EndpointProbe> {
  const client = new UpstreamClient(ep);
  const result = (ok: boolean, detail: string): EndpointProbe => ({ endpoint: ep.name, ok, detail });
  try {
    const reply = await client.get("/models", AbortSignal.timeout(timeoutMs));
    const text = await reply.body.text();
    let listed: string[];
    try {
      const body = JSON.parse(text) as { data?: { id?: unknown }[] };
      listed = (body.data ?? []).map((m) => String(m.id));
    } catch {
      return result(false, ep.kind === "anthropic" ? "GET /v1/models did not answer JSON: is this an Anthropic Messages API?" : "GET /models did not answer JSON: is this an OpenAI-compatible API (url ending in /v1)?");
    }
    if (ep.kind !== "chat") return result(true, `reachable, credentials accepted, ${listed.length} models listed`);
    const missing = [...models].filter((m) => !listed.includes(m));
    if (missing.length > 0) {
      return result(false, `reachable, but does not list ${missing.map((m) => `'${m}'`).join(", ")} (it lists: ${listed.slice(0, 10).join(", ") || "nothing"}${listed.length > 10 ? ", ..." : ""})`);
    }
    return result(true, `reachable, ${models.size > 0 ? `serves ${[...models].map((m) => `'${m}'`).join(", ")}` : `${listed.length} models listed`}`);
  } catch (err) {
    if (err instanceof UpstreamFailure) {
      if (err.kind === "status" && (err.status === 401 || err.status === 403)) return result(false, `credentials refused (HTTP ${err.status}): check api_key`);
      if (err.routeMissing) return result(false, `no /models route (HTTP ${err.status}): the url probably lacks /v1`);
      if (err.kind === "status") return result(false, `GET /models answered HTTP ${err.status}: ${err.body?.message ?? ""}`.trim());
      return result(false, `unreachable (${err.message})`);
    }
    const e = err as Error;
    return result(false, e.name === "TimeoutError" || e.name === "AbortError" ? `no answer within ${timeoutMs} ms` : `unreachable (${e.message})`);
  } finally {
    await client.destroy().catch(() => {});
  }
}
