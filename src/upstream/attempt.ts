import type { ModelTarget, RouterConfig } from "../config/load.js";
import type { Metrics } from "../ops/metrics.js";
import type { Endpoint, Lease } from "../routing/pool.js";
import type { UpstreamClient, UpstreamReply } from "./client.js";
import { UpstreamFailure } from "./errors.js";
import { callWithFailover, type FailoverContext } from "./failover.js";
import { callWithFallbacks } from "./fallback.js";
import type { Span, Tracing } from "../tracing/index.js";
import { endAttemptSpan, tracedPost } from "./attempt-trace.js";

/** What an attempt needs of the router instance (the Runtime provides it). */
export interface AttemptHost {
  readonly metrics: Metrics;
  failover(model: string, targets: ModelTarget[], routing: RouterConfig["routing"], signal: AbortSignal, path?: string, prefer?: string | null): FailoverContext;
  fellBack(requested: string, from: string, to: string, err: unknown): void;
  client(endpoint: string): UpstreamClient;
  readonly tracing: Tracing;
}

/** One model to try: the one asked for first, then its fallbacks (models.ts `fallbackSteps`). */
export interface AttemptStep {
  model: string;
  targets: ModelTarget[];
}

/** What is sent: the route under the endpoint's url and the JSON body, plus whatever the sender needs to read the answer. */
export interface PreparedRequest {
  path: string;
  /** The JSON text sent. The attempt empties it once the call is made (see `open`): read it before. */
  body: string;
  /** Headers sent besides the endpoint's own (client headers a native upstream receives). */
  headers?: Readonly<Record<string, string>>;
}

export interface AttemptSpec<S extends AttemptStep, R extends PreparedRequest> {
  /** The model the client asked for: the label of every metric the attempt counts. */
  model: string;
  steps: S[];
  routing: RouterConfig["routing"];
  signal: AbortSignal;
  /** The upstream route, named in retry logs (proxied routes). */
  path?: string;
  /** The endpoint the first step prefers (conversation affinity); a fallback's pool has its own. */
  prefer?: string | null;
  /** The request for the endpoint the pool chose, in the form its kind speaks (called once per endpoint tried). */
  prepare(lease: Lease, step: S): R;
}

/**
 * One upstream call of a client request, from taking a slot to giving it back, for both
 * route families (/v1/responses and the chat/embeddings proxy). `open` takes a slot,
 * sends, fails over within the pool and then down the model's fallbacks (issue-10
 * failure classes and health verdicts live in failover.ts) and resolves on 2xx headers.
 * The holder then reads the body and calls `end` exactly once however it ends (later
 * calls do nothing): that frees the slot and counts the upstream's duration. The
 * health verdict on what happens after the headers (`readJson`, `streamBroke`) is here
 * too, so the two families cannot judge an endpoint differently.
 */
export class UpstreamAttempt<S extends AttemptStep = AttemptStep, R extends PreparedRequest = PreparedRequest> {
  private ended = false;
  private firstSeen = false;

  private constructor(
    private readonly host: AttemptHost,
    /** The model the client asked for. */
    readonly model: string,
    /** The model that serves it: the one asked for, or a fallback. */
    readonly step: S,
    readonly lease: Lease,
    readonly reply: UpstreamReply,
    /** What was sent to the endpoint that answered (`prepare`'s result for it). */
    readonly request: R,
    /** performance.now() when the attempt began (before the slot). */
    readonly started: number,
    /** The CLIENT span of the call that answered (tracing on), ended with the attempt. */
    readonly span: Span | undefined,
  ) {}

  /**
   * Picks an endpoint (with failover) and sends. When the whole pool fails before the first
   * byte, the model's fallbacks are tried in order. Errors before the 2xx headers reach the
   * caller as exceptions (an HTTP error for the client); no slot is then held.
   */
  static async open<S extends AttemptStep, R extends PreparedRequest>(host: AttemptHost, spec: AttemptSpec<S, R>): Promise<UpstreamAttempt<S, R>> {
    const started = performance.now();
    const first = spec.steps[0];
    // Endpoints are tried one after another, so the last request prepared is the one that got the answer.
    let request!: R;
    // Traced: each call gets its own span (siblings under the request's); the last one is the answer's.
    let span: Span | undefined;
    let tried = 0;
    const { result, step } = await callWithFallbacks(
      spec.steps,
      spec.signal,
      (s) =>
        callWithFailover(host.failover(s.model, s.targets, spec.routing, spec.signal, spec.path, s === first ? spec.prefer : undefined), (client, lease) => {
          request = spec.prepare(lease, s);
          if (!host.tracing.on) return client.post(request.path, request.body, spec.signal, request.headers);
          const info = { path: spec.path, requested: spec.model, model: s.model, prefer: s === first ? spec.prefer : undefined, index: tried++ };
          return tracedPost(host.tracing, info, client, lease, request, spec.signal).then((r) => {
            span = r.span;
            return r.reply;
          });
        }),
      (from, to, err) => host.fellBack(spec.model, from.model, to.model, err),
    );
    // undici holds its own copy of the body until the call ends (for a stream, as long as it
    // stays open): the prepared text, as large as the request's whole history, is let go of.
    request.body = "";
    if (result.failedOver > 0) host.metrics.failovers.inc({ model: spec.model });
    host.metrics.queueWait.observe({ model: spec.model }, result.lease.waitedMs / 1000);
    return new UpstreamAttempt(host, spec.model, step, result.lease, result.reply, request, started, span);
  }

  get endpoint(): Endpoint {
    return this.lease.endpoint;
  }

  /** Time to first token is not this attempt's to count (a later round of one response). */
  firstTokenSeen(): void {
    this.firstSeen = true;
  }

  /** The first chunk (chat) or delta (native) arrived: time to first token, counted once. */
  firstToken(): void {
    if (this.firstSeen) return;
    this.firstSeen = true;
    this.host.metrics.timeToFirstToken.observe({ model: this.model, upstream: this.lease.endpoint.name }, (performance.now() - this.started) / 1000);
  }

  /** Reads a JSON answer whole. A lost body is classified; a body that is not JSON counts against the endpoint. */
  async readJson(): Promise<{ text: string; json: unknown }> {
    let text: string;
    try {
      text = await this.reply.body.text();
    } catch (err) {
      throw this.host.client(this.lease.endpoint.name).classify(err);
    }
    try {
      return { text, json: JSON.parse(text) };
    } catch {
      this.lease.endpoint.health.recordFailure("invalid JSON body");
      throw new UpstreamFailure(this.lease.endpoint.name, "protocol", "the body was not JSON");
    }
  }

  /**
   * The stream broke after the headers (not the client going away): counts against the endpoint,
   * unless it is an in-band error the server sent about the request (not an endpoint fault).
   */
  streamBroke(err: unknown): void {
    if (!(err instanceof UpstreamFailure) || err.endpointFault) this.lease.endpoint.health.recordFailure(`stream broke: ${(err as Error)?.message ?? err}`);
  }

  /** Frees the slot and counts the duration, once; returns the ms since the attempt began. */
  end(ok: boolean): number {
    const ms = performance.now() - this.started;
    if (this.ended) return ms;
    this.ended = true;
    this.lease.release();
    this.host.metrics.upstreamDuration.observe({ upstream: this.lease.endpoint.name, outcome: ok ? "ok" : "error" }, ms / 1000);
    if (this.span) endAttemptSpan(this.span, ok);
    return ms;
  }
}
