import type { Lease } from "../routing/pool.js";
import { failed, SpanKind, type Span, type Tracing } from "../tracing/index.js";
import type { UpstreamClient, UpstreamReply } from "./client.js";
import { UpstreamFailure } from "./errors.js";

const PROVIDERS = { openai: "openai", chat: "openai_compatible", anthropic: "anthropic" } as const;

/** What names an upstream attempt's span: the route family's operation and where the attempt stands. */
export interface AttemptTraceInfo {
  /** The upstream route for proxied calls (/chat/completions, /embeddings); undefined: /v1/responses. */
  path?: string;
  /** The model the client asked for. */
  requested: string;
  /** The model this attempt serves (the one asked for, or a fallback). */
  model: string;
  /** The endpoint conversation affinity prefers for this step, if any. */
  prefer?: string | null;
  /** 0 for the first endpoint tried for the request, then 1, 2... across failover and fallbacks. */
  index: number;
}

/**
 * Sends one upstream call under its own CLIENT span (GenAI conventions: `{operation} {model}`,
 * the model as sent upstream), with `traceparent` carried to the upstream. A failure before
 * the answer ends the span with its class (`error.type`: connect, timeout, status...), so
 * failover and fallbacks show as sibling attempts; a 2xx leaves it open for the attempt to
 * end when the body is done. Only called when tracing is on.
 */
export async function tracedPost(
  tracing: Tracing,
  info: AttemptTraceInfo,
  client: UpstreamClient,
  lease: Lease,
  request: { path: string; body: string; headers?: Readonly<Record<string, string>> },
  signal: AbortSignal,
): Promise<{ reply: UpstreamReply; span: Span | undefined }> {
  const { path, body, headers } = request;
  const operation = info.path === "/embeddings" ? "embeddings" : "chat";
  const span = tracing.startChild(`${operation} ${lease.target.upstreamModel}`, SpanKind.CLIENT);
  if (!span) return { reply: await client.post(path, body, signal, headers), span };
  if (span.isRecording()) {
    const cfg = lease.endpoint.config;
    const server = serverOf(cfg.url);
    span.setAttributes({
      "gen_ai.operation.name": operation,
      // A chat endpoint speaks OpenAI's wire protocol; its real provider (Ollama, vLLM...) is not known to the router.
      "gen_ai.provider.name": PROVIDERS[cfg.kind],
      "gen_ai.request.model": lease.target.upstreamModel,
      "server.address": server.address,
      "server.port": server.port,
      "http.request.method": "POST",
      "router.upstream": lease.endpoint.name,
      "router.model": info.model,
      "router.attempt": info.index,
      "router.fallback": info.model !== info.requested,
      "router.affinity": !!info.prefer && info.prefer === lease.endpoint.name,
      "router.panic_routed": lease.panic,
    });
  }
  try {
    const traceHeaders = tracing.headers(span);
    const reply = await client.post(path, body, signal, headers && traceHeaders ? { ...headers, ...traceHeaders } : (headers ?? traceHeaders));
    span.setAttribute("http.response.status_code", reply.status);
    return { reply, span };
  } catch (err) {
    if (err instanceof UpstreamFailure) {
      if (err.status !== undefined) span.setAttribute("http.response.status_code", err.status);
      span.setAttribute("router.failure", err.reason);
      failed(span, err, err.kind === "status" ? String(err.status) : err.kind);
    } else failed(span, err, signal.aborted ? "cancelled" : undefined);
    span.end();
    throw err;
  }
}

/** The attempt is over (body read, or given up): the span ends, marked failed when it did not end well. */
export function endAttemptSpan(span: Span, ok: boolean): void {
  if (!ok && span.isRecording()) failed(span, undefined, "incomplete");
  span.end();
}

/** An endpoint url's host and port, parsed once per url. */
const servers = new Map<string, { address: string; port: number }>();
function serverOf(raw: string): { address: string; port: number } {
  let s = servers.get(raw);
  if (!s) {
    const url = new URL(raw);
    s = { address: url.hostname, port: Number(url.port) || (url.protocol === "https:" ? 443 : 80) };
    if (servers.size > 1000) servers.clear(); // endpoints come and go with reloads: stay bounded
    servers.set(raw, s);
  }
  return s;
}
