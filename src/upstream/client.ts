import { Pool, errors as undiciErrors, type Dispatcher } from "undici";
import type { RouterConfig } from "../config/load.js";
import { UpstreamFailure, isJsonErrorBody, parseRetryAfter, parseUpstreamErrorBody, scrubSecret } from "./errors.js";

type EndpointConfig = RouterConfig["endpoints"][number];

export interface UpstreamReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Dispatcher.ResponseData["body"];
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
    this.pool = new Pool(url.origin, {
      connect: { timeout: config.timeouts.connect },
      headersTimeout: config.timeouts.first_byte,
      bodyTimeout: config.timeouts.idle,
      keepAliveTimeout: 30_000,
      // Allow more sockets than the concurrency limit: retries and probes share the pool.
      connections: config.max_concurrency + 4,
    });
    this.headers = { "content-type": "application/json", accept: "application/json, text/event-stream", ...config.headers };
    if (config.api_key) this.headers.authorization = `Bearer ${config.api_key}`;
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
      a.max_concurrency === other.max_concurrency &&
      JSON.stringify(a.timeouts) === JSON.stringify(other.timeouts) &&
      JSON.stringify(a.headers) === JSON.stringify(other.headers)
    );
  }

  async post(path: string, body: string, signal?: AbortSignal, extraHeaders?: Record<string, string>): Promise<UpstreamReply> {
    return this.send("POST", path, body, signal, extraHeaders);
  }

  /** POST to a path at the server's root rather than under the endpoint's `/v1` (llama.cpp's and vLLM's `/tokenize`). */
  async postAtRoot(path: string, body: string, signal?: AbortSignal): Promise<UpstreamReply> {
    return this.send("POST", path, body, signal, undefined, true);
  }

  async get(path: string, signal?: AbortSignal): Promise<UpstreamReply> {
    return this.send("GET", path, undefined, signal);
  }

  private async send(
    method: "GET" | "POST",
    path: string,
    body: string | undefined,
    signal?: AbortSignal,
    extraHeaders?: Record<string, string>,
    atRoot = false,
  ): Promise<UpstreamReply> {
    let res: Dispatcher.ResponseData;
    try {
      res = await this.pool.request({
        method,
        path: (atRoot ? this.basePath.replace(/\/v1$/, "") : this.basePath) + path,
        headers: extraHeaders ? { ...this.headers, ...extraHeaders } : this.headers,
        body,
        signal,
      });
    } catch (err) {
      // Our own abort (the client went away, whatever reason it carries) says nothing about the upstream.
      if (signal?.aborted) throw err;
      throw this.classify(err);
    }
    if (res.statusCode >= 200 && res.statusCode < 300) return { status: res.statusCode, headers: res.headers, body: res.body };
    let text = "";
    try {
      text = await res.body.text();
    } catch {
      // body lost: the status is enough
    }
    throw new UpstreamFailure(
      this.name,
      "status",
      `HTTP ${res.statusCode}`,
      res.statusCode,
      parseUpstreamErrorBody(text, res.statusCode, this.config.api_key),
      parseRetryAfter(res.headers["retry-after"]),
      { route: `${method} ${path}`, jsonBody: isJsonErrorBody(text.trimStart()) },
    );
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
