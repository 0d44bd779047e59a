/**
 * What src/upstream/ holds:
 * undici pool per endpoint, called through `pool.dispatch` with a handler of its own that lets go
 * of the call when it is over (`client.ts`; a 2xx body is an `UpstreamBody`, `body.ts`, fed by
 * undici's handler with no Node stream in between: what one socket read brought is pushed to its
 * consumer as one chunk once the read is over, and the consumer may pause it, or it is read
 * whole), failure classification, an upstream body's SSE frames (`sse.ts`: the parser is
 * `wire/sse-parser.ts`, fed by push; `readSseFrames` iterates it), failover across the pool and
 * down the model's fallbacks, `attempt.ts` (ONE upstream attempt from slot to release, used by
 * both route families), `mid-stream.ts` (the one classification of an error after the headers),
 * `check --probe`
 */
import { Pool, errors as undiciErrors, type Dispatcher } from "undici";
import type { RouterConfig } from "../config/load.js";
import { UpstreamBody, abortError, type BodySource } from "./body.js";
import { anthropicHeaders } from "../translate/anthropic/version.js";
import { anthropicErrorBody } from "../translate/anthropic/errors.js";
import { UpstreamFailure, isJsonErrorBody, parseRetryAfter, parseUpstreamErrorBody } from "./errors.js";
import { scrubSecret } from "../ops/secrets.js";

type EndpointConfig = RouterConfig["endpoints"][number];

/** A 2xx answer. No caller reads its headers, so they are not decoded. */
export interface UpstreamReply {
  status: number;
  body: UpstreamBody;
}

/**
 * One keep-alive connection pool per endpoint. Calls resolve once the upstream
 * answered 2xx headers; anything else rejects with an UpstreamFailure (status
 * errors carry the upstream's error body with the endpoint key scrubbed out).
 */
export class UpstreamClient {
  private readonly pool: Pool;
  private readonly basePath: string;
  private readonly headers: Record<string, string>;

  constructor(readonly config: EndpointConfig) {
    const url = new URL(config.url);
    this.basePath = url.pathname.replace(/\/+$/, "");
    // The Messages API lives under /v1 like the others; an anthropic url may be given with or without it.
    if (config.kind === "anthropic" && !this.basePath.endsWith("/v1")) this.basePath += "/v1";
    this.pool = new Pool(url.origin, {
      connect: { timeout: config.timeouts.connect },
      headersTimeout: config.timeouts.first_byte,
      bodyTimeout: config.timeouts.idle,
      keepAliveTimeout: 30_000,
      // Allow more sockets than the concurrency limit: retries and probes share the pool.
      connections: config.max_concurrency + 4,
    });
    this.headers = { "content-type": "application/json", accept: "application/json, text/event-stream", ...config.headers };
    if (config.kind === "anthropic") Object.assign(this.headers, anthropicHeaders(config));
    else if (config.api_key) this.headers.authorization = `Bearer ${config.api_key}`;
  }

  get name(): string {
    return this.config.name;
  }

  /** Whether a new config for the same endpoint name needs a new client (pool settings changed). */
  sameTransport(other: EndpointConfig): boolean {
    const a = this.config;
    return (
      a.url === other.url &&
      a.api_key === other.api_key &&
      a.kind === other.kind &&
      a.anthropic_version === other.anthropic_version &&
      JSON.stringify(a.anthropic_beta) === JSON.stringify(other.anthropic_beta) &&
      a.max_concurrency === other.max_concurrency &&
      JSON.stringify(a.timeouts) === JSON.stringify(other.timeouts) &&
      JSON.stringify(a.headers) === JSON.stringify(other.headers)
    );
  }

  post(path: string, body: string, signal?: AbortSignal, extraHeaders?: Readonly<Record<string, string>>): Promise<UpstreamReply> {
    return this.send("POST", path, body, signal, extraHeaders);
  }

  /** POST to a path at the server's root rather than under the endpoint's `/v1` (llama.cpp's and vLLM's `/tokenize`). */
  postAtRoot(path: string, body: string, signal?: AbortSignal): Promise<UpstreamReply> {
    return this.send("POST", path, body, signal, undefined, true);
  }

  get(path: string, signal?: AbortSignal): Promise<UpstreamReply> {
    return this.send("GET", path, undefined, signal);
  }

  private send(
    method: "GET" | "POST",
    path: string,
    body: string | undefined,
    signal?: AbortSignal,
    extraHeaders?: Readonly<Record<string, string>>,
    atRoot = false,
  ): Promise<UpstreamReply> {
    return new Promise((resolve, reject) => {
      const call = new UpstreamCall(this, `${method} ${path}`, signal, resolve, reject);
      this.pool.dispatch(
        {
          method,
          path: (atRoot ? this.basePath.replace(/\/v1$/, "") : this.basePath) + path,
          headers: extraHeaders ? { ...this.headers, ...extraHeaders } : this.headers,
          body,
        },
        call,
      );
    });
  }

  /** Maps a transport error to an UpstreamFailure (aborts pass through untouched). */
  classify(err: unknown): unknown {
    if (err instanceof UpstreamFailure) return err;
    const e = err as Error & { code?: string };
    if (e?.name === "AbortError" || e?.code === "UND_ERR_ABORTED") return err;
    const msg = scrubSecret(e?.message ?? String(err), this.config.api_key);
    if (
      err instanceof undiciErrors.HeadersTimeoutError ||
      err instanceof undiciErrors.BodyTimeoutError ||
      e?.code === "UND_ERR_HEADERS_TIMEOUT" ||
      e?.code === "UND_ERR_BODY_TIMEOUT"
    ) {
      return new UpstreamFailure(this.name, "timeout", msg);
    }
    if (err instanceof undiciErrors.ConnectTimeoutError || e?.code === "UND_ERR_CONNECT_TIMEOUT") {
      return new UpstreamFailure(this.name, "timeout", `connect timeout: ${msg}`, undefined, undefined, undefined, { unreached: true });
    }
    return new UpstreamFailure(this.name, "connect", e?.code ? `${e.code}` : msg);
  }

  close(): Promise<void> {
    return this.pool.close();
  }

  destroy(): Promise<void> {
    return this.pool.destroy();
  }
}

/**
 * One call's undici dispatch handler (the legacy callbacks: undici 7 calls them as they are,
 * while a controller-style handler is wrapped and has its headers parsed on every response).
 * It resolves on 2xx headers with an UpstreamBody the handler then feeds; a non-2xx answer is
 * read whole into an UpstreamFailure; a transport error is classified; the caller's abort
 * passes through as its reason, before the headers as a rejection, after them as the body's error.
 */
class UpstreamCall implements Dispatcher.DispatchHandler, BodySource {
  private abortCall: ((err: Error) => void) | null = null;
  private resumeRead: (() => void) | null = null;
  /** Set once the caller aborted before the call had started. */
  private reason: Error | null = null;
  private body: UpstreamBody | null = null;
  /** A non-2xx answer: its status, raw headers and body so far. */
  private failed: { status: number; rawHeaders: Buffer[]; chunks: Buffer[] } | null = null;
  private signal: AbortSignal | undefined;
  private onAbort: (() => void) | null = null;
  private resolve: ((reply: UpstreamReply) => void) | null;
  private reject: ((err: unknown) => void) | null;

  constructor(
    private readonly client: UpstreamClient,
    private readonly route: string,
    signal: AbortSignal | undefined,
    resolve: (reply: UpstreamReply) => void,
    reject: (err: unknown) => void,
  ) {
    this.signal = signal;
    this.resolve = resolve;
    this.reject = reject;
    if (!signal) return;
    if (signal.aborted) {
      this.reason = abortError(signal.reason);
      return;
    }
    this.onAbort = () => {
      if (this.body) this.body.abort(signal.reason);
      else if (this.abortCall) this.abortCall(abortError(signal.reason));
      else this.reason = abortError(signal.reason);
    };
    signal.addEventListener("abort", this.onAbort, { once: true });
  }

  onConnect(abort: (err?: Error) => void): void {
    if (this.reason) abort(this.reason);
    else this.abortCall = abort;
  }

  onHeaders(status: number, rawHeaders: Buffer[], resume: () => void): boolean {
    if (status < 200) return true; // 1xx: the answer follows
    if (status < 300) {
      this.resumeRead = resume;
      this.body = new UpstreamBody(this);
      this.resolve!({ status, body: this.body });
    } else {
      this.failed = { status, rawHeaders, chunks: [] };
    }
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.body) return this.body.push(chunk);
    this.failed?.chunks.push(chunk);
    return true;
  }

  onComplete(): void {
    if (this.body) this.body.complete();
    else if (this.failed) this.rejectStatus(Buffer.concat(this.failed.chunks).toString("utf8"));
  }

  onError(err: Error): void {
    if (this.body) this.body.fail(err);
    // A non-2xx answer whose body was lost: the status is enough.
    else if (this.failed) this.rejectStatus("");
    else if (this.reject) {
      // Our own abort (the client went away, whatever reason it carries) says nothing about the upstream.
      this.rejectWith(this.signal?.aborted ? err : this.client.classify(err));
    }
  }

  // BodySource: what the body asks of the call.
  resume(): void {
    this.resumeRead?.();
  }

  abort(err: Error): void {
    this.abortCall!(err);
  }

  finished(): void {
    this.letGo();
  }

  private rejectStatus(text: string): void {
    const { status, rawHeaders } = this.failed!;
    const cfg = this.client.config;
    const body = parseUpstreamErrorBody(text, status, cfg.api_key);
    this.rejectWith(
      new UpstreamFailure(cfg.name, "status", `HTTP ${status}`, status, cfg.kind === "anthropic" ? anthropicErrorBody(body, status) : body, parseRetryAfter(rawHeader(rawHeaders, "retry-after")), {
        route: this.route,
        jsonBody: isJsonErrorBody(text.trimStart()),
        rateLimitHeaders: status === 429 ? rateLimitHeaders(rawHeaders) : undefined,
      }),
    );
  }

  /** The call ends in `err`: the caller's promise rejects with it, after the call let go. */
  private rejectWith(err: unknown): void {
    const reject = this.reject;
    this.letGo();
    reject?.(err);
  }

  /**
   * The call is over: it stops listening to the caller's signal and lets go of what it reached
   * (the body, the promise of the reply and whoever awaits it). undici may keep its handler,
   * this object, after the call, and from the old generation a kept handler would keep all of
   * that alive through every young-generation collection (ops/slots.ts tells the same story).
   * `abortCall` stays: a body released before its end aborts the call afterwards.
   */
  private letGo(): void {
    if (this.onAbort) this.signal!.removeEventListener("abort", this.onAbort);
    this.signal = undefined;
    this.onAbort = null;
    this.body = null;
    this.failed = null;
    this.resolve = null;
    this.reject = null;
    this.resumeRead = null;
  }
}

const RATE_LIMIT_HEADER = /^(x-ratelimit-|anthropic-ratelimit-)/;

/** The rate-limit headers of a raw undici list (lower-case names), or undefined when there are none. */
function rateLimitHeaders(raw: Buffer[]): Record<string, string> | undefined {
  let out: Record<string, string> | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toString("latin1").toLowerCase();
    if (RATE_LIMIT_HEADER.test(name)) (out ??= {})[name] = raw[i + 1]!.toString("latin1");
  }
  return out;
}

/** A header of a raw undici list (name, value, name, value...), lower-case name, the first one if repeated. */
function rawHeader(raw: Buffer[], name: string): string | undefined {
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i]!.length === name.length && raw[i]!.toString("latin1").toLowerCase() === name) return raw[i + 1]!.toString("latin1");
  }
  return undefined;
}
