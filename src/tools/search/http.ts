import { request } from "undici";
import { parseDuration } from "../../config/duration.js";
import { scrubSecret } from "../../ops/secrets.js";
import { SearchError } from "./types.js";

/** tools.web_search.timeout's default, also used for a config built in code without one. */
export const DEFAULT_TIMEOUT_MS = 15_000;

/** A provider's answer is a page of results: anything larger is refused rather than buffered. */
const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

export interface ProviderCall {
  provider: string;
  url: URL;
  method: "GET" | "POST";
  headers: Record<string, string>;
  body?: string;
  /** Milliseconds as the parsed config has it (a duration string or a missing value is taken too: configs built in code). */
  timeoutMs: number | string | undefined;
  /** The provider's key: scrubbed out of every error message. */
  secret: string | undefined;
  signal: AbortSignal;
}

/**
 * One call to a search provider, its JSON answer parsed. Every failure is a SearchError with a
 * message fit for a client (the provider's host, never its URL's credentials or key), except the
 * caller's abort, which rejects with the signal's own reason.
 */
export async function callProvider(call: ProviderCall): Promise<unknown> {
  const { provider, secret } = call;
  const ms = timeoutMs(call.timeoutMs);
  const timeout = AbortSignal.timeout(ms);
  const signal = AbortSignal.any([call.signal, timeout]);
  const { url, headers } = withoutUserinfo(call.url, call.headers);
  try {
    const res = await request(url, { method: call.method, headers, body: call.body, signal });
    const text = await readCapped(res.body, provider);
    if (res.statusCode < 200 || res.statusCode >= 300) {
      const detail = errorDetail(text);
      throw new SearchError(provider, "status", scrubSecret(`web search provider ${provider} answered HTTP ${res.statusCode}${detail ? `: ${detail}` : ""}`, secret), res.statusCode);
    }
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new SearchError(provider, "invalid", `web search provider ${provider} answered with something that is not JSON`);
    }
  } catch (err) {
    if (err instanceof SearchError) throw err;
    if (call.signal.aborted) throw call.signal.reason;
    if (timeout.aborted) throw new SearchError(provider, "timeout", `web search provider ${provider} did not answer within ${ms} ms`);
    const e = err as Error & { code?: string };
    // An AggregateError (every address of the host refused) has a code and an empty message.
    const message = e?.message || (e?.code ? "" : String(err));
    const why = e?.code && !message.includes(e.code) ? [e.code, message].filter(Boolean).join(": ") : message;
    throw new SearchError(provider, "network", scrubSecret(`web search provider ${provider} (${url.host}) could not be reached: ${why}`, secret));
  }
}

function timeoutMs(value: number | string | undefined): number {
  const ms = typeof value === "string" ? parseDuration(value) : value;
  return typeof ms === "number" && Number.isFinite(ms) && ms > 0 ? ms : DEFAULT_TIMEOUT_MS;
}

/** `http://user:pass@host` in a configured URL becomes Basic auth (unless the provider sets its own). */
function withoutUserinfo(url: URL, headers: Record<string, string>): { url: URL; headers: Record<string, string> } {
  if (!url.username && !url.password) return { url, headers };
  const clean = new URL(url);
  clean.username = "";
  clean.password = "";
  if (headers.authorization) return { url: clean, headers };
  const basic = Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString("base64");
  return { url: clean, headers: { ...headers, authorization: `Basic ${basic}` } };
}

async function readCapped(body: AsyncIterable<Buffer> & { destroy(): unknown }, provider: string): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > MAX_ANSWER_BYTES) {
      body.destroy();
      throw new SearchError(provider, "invalid", `web search provider ${provider} answered more than ${MAX_ANSWER_BYTES} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** The provider's own error message, if its error body has one (the shapes of SearXNG, Brave and Tavily), else short plain text. */
function errorDetail(text: string): string {
  let found: unknown;
  try {
    const body = JSON.parse(text) as any;
    found = body?.error?.detail ?? body?.error?.message ?? body?.detail?.error ?? body?.detail ?? body?.message ?? body?.error;
  } catch {
    found = text.trimStart().startsWith("<") ? "" : text;
  }
  if (found === undefined || found === null) return "";
  const s = (typeof found === "string" ? found : JSON.stringify(found)).replace(/\s+/g, " ").trim();
  return s.length > 300 ? `${s.slice(0, 300)}...` : s;
}

/** The endpoint under a configured base URL, unless the URL already names it. */
export function endpointUrl(base: string, path: string): URL {
  const url = new URL(base);
  const dir = url.pathname.replace(/\/+$/, "");
  if (!dir.endsWith(path)) url.pathname = dir + path;
  return url;
}

/**
 * Runs a search with the user's location, and once more without it when the provider refuses
 * the request (400/422): a location parameter the provider does not take must not cost the
 * search. `located` says whether the first call carried any location at all.
 */
export async function withLocationFallback<T>(located: boolean, run: (withLocation: boolean) => Promise<T>): Promise<T> {
  try {
    return await run(true);
  } catch (err) {
    if (located && err instanceof SearchError && (err.status === 400 || err.status === 422)) return run(false);
    throw err;
  }
}
