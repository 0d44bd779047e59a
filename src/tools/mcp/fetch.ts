/**
 * The `fetch` the MCP Streamable HTTP transport is given: undici's request API, answered as a
 * WHATWG Response. Node's global fetch cost most of a hosted tool round's MCP traffic (its
 * Request, header lists and body streams), and it removes the abort listener it puts on the
 * transport's session-long signal only when the request is garbage-collected: on a pooled
 * session those listeners piled up, and each new one was checked against all of them.
 * undici's request removes its listener when the call ends.
 *
 * What the transport relies on is kept: redirects are never followed (the SDK follows
 * same-origin ones itself), an abort rejects with the signal's reason, and a failure to
 * reach the server is a TypeError("fetch failed") with the cause, as fetch reports it. An
 * event stream's body streams; any other body is read whole (the SDK reads it whole too).
 */
import { Readable } from "node:stream";
import { Agent, request, type Dispatcher } from "undici";

let agent: Agent | undefined;

/** One keep-alive agent for every MCP server (made on first use; undici unrefs idle sockets, so it never holds the process open). */
function mcpAgent(): Agent {
  return (agent ??= new Agent({ keepAliveTimeout: 30_000 }));
}

/** Bodies a Response must not have. */
const NULL_BODY = new Set([204, 205, 304]);

export async function mcpFetch(input: string | URL | Request, init: RequestInit = {}): Promise<Response> {
  const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
  const signal = init.signal ?? undefined;
  const method = (init.method ?? "GET").toUpperCase() as Dispatcher.HttpMethod;
  let res: Dispatcher.ResponseData;
  try {
    res = await request(url, { method, headers: plainHeaders(init.headers), body: bodyOf(init.body), signal, dispatcher: mcpAgent() });
  } catch (err) {
    throw failure(err, signal);
  }
  const headers = new Headers();
  for (const name in res.headers) {
    const value = res.headers[name];
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else if (value !== undefined) headers.append(name, value);
  }
  if (NULL_BODY.has(res.statusCode) || method === "HEAD") {
    res.body.resume();
    return new Response(null, { status: res.statusCode, headers });
  }
  const type = headers.get("content-type") ?? "";
  if (type.toLowerCase().startsWith("text/event-stream")) {
    return new Response(Readable.toWeb(res.body) as ReadableStream<Uint8Array>, { status: res.statusCode, headers });
  }
  let text: string;
  try {
    text = await res.body.text();
  } catch (err) {
    throw failure(err, signal);
  }
  return new Response(text, { status: res.statusCode, headers });
}

/** What fetch rejects with: the signal's reason after an abort, else TypeError("fetch failed") with the cause. */
function failure(err: unknown, signal: AbortSignal | undefined): unknown {
  return signal?.aborted ? signal.reason : new TypeError("fetch failed", { cause: err });
}

function plainHeaders(h: RequestInit["headers"]): Record<string, string> | undefined {
  if (!h) return undefined;
  if (h instanceof Headers) return Object.fromEntries(h);
  if (Array.isArray(h)) return Object.fromEntries(h);
  return h as Record<string, string>;
}

function bodyOf(body: RequestInit["body"]): string | Uint8Array | undefined {
  if (body === null || body === undefined) return undefined;
  if (typeof body === "string" || body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  if (body instanceof URLSearchParams) return body.toString();
  throw new TypeError("mcpFetch: unsupported body type");
}
