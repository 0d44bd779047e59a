/**
 * What src/tracing/ holds:
 * OpenTelemetry: `index.ts` the small API the rest calls (request, upstream-attempt, store and job
 * spans, W3C trace-context in and out; `TRACING_OFF` when not configured, a no-op), `enabled.ts`
 * whether tracing is on (without the SDK), `setup.ts` the SDK (tracer provider, sampler, OTLP/HTTP
 * exporter) from `tracing:` and the `OTEL_*` variables, imported only when it is on
 */
/**
 * Where the spans are opened:
 * Traces (`tracing/`, when configured): the request shell (`http/shell.ts`) opens the request's
 * SERVER span (`http/request-span.ts` ends it with what the request came to) and runs the request
 * inside it; everything below finds it through `rt.tracing` without being passed anything:
 * `upstream/attempt-trace.ts` wraps each call of an `UpstreamAttempt` in a CLIENT span and sends
 * its `traceparent`; `responses/create/trace.ts` adds the plan's and the outcome's GenAI
 * attributes; the tool loop opens an INTERNAL span per round (the round's upstream CLIENT span
 * under it) and a CLIENT span per tool listing or call (`tool-loop/mcp-runner.ts`); store calls a
 * request waits on go through `rt.tracing.store`; a background job's record keeps the request's
 * trace context (`BackgroundPayload.trace`) and the job runs under a CONSUMER span linked to it.
 * Off, `rt.tracing` is `TRACING_OFF` and each of those is one `on` check. A response over another
 * transport gets its span the same way: `startRequest` then `within`.
 */
/**
 * The router's spans, behind a tiny API the rest of the code calls. `TRACING_OFF` (tracing
 * not configured) answers every call with `undefined` or the work itself after one check:
 * no context, span or attribute object is made. Call sites that would build attributes
 * test `tracing.on` (or the span they got) first.
 *
 * Spans: one SERVER span per request or transport message (`startRequest` + `within`),
 * one CLIENT span per upstream attempt (upstream/attempt-trace.ts), CLIENT spans for the
 * store calls a request waits on (`store`), and a CONSUMER span per background job, linked
 * to the request that queued it through the trace context kept in the job record
 * (`carrier` when queueing, `startJob` when running).
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span, type TextMapGetter, type TextMapPropagator, type TextMapSetter, type Tracer } from "@opentelemetry/api";

export type { Attributes, Span };
export { SpanKind, SpanStatusCode };

/** The W3C trace context of a span, as headers: what a job record keeps to link its job to the request. */
export interface TraceCarrier {
  traceparent: string;
  tracestate?: string;
}

/** What the SDK set-up hands over: the tracer and a way to flush and stop the exporter. */
export interface TracingBackend {
  tracer: Tracer;
  /**
   * W3C trace context in and out. The SDK's set-up brings it: @opentelemetry/core, where it
   * lives, loads ~400 KB of semantic-convention constants a router without tracing never reads.
   */
  propagator: TextMapPropagator;
  /** Let prompt and completion text into spans (`tracing.capture_content`). */
  captureContent: boolean;
  /** `db.system.name` of store spans ("redis", or "memory" for the in-process store). */
  storeSystem: string;
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

const HEADER_GETTER: TextMapGetter<(name: string) => string | undefined> = {
  get: (read, key) => read(key),
  keys: () => ["traceparent", "tracestate"],
};
const RECORD_GETTER: TextMapGetter<Record<string, string | undefined>> = {
  get: (carrier, key) => carrier[key],
  keys: (carrier) => Object.keys(carrier),
};
const SETTER: TextMapSetter<Record<string, string>> = {
  set: (carrier, key, value) => {
    carrier[key] = value;
  },
};

export class Tracing {
  /** The span work runs under, per async flow; only used when tracing is on. */
  private readonly scope = new AsyncLocalStorage<Context>();
  private readonly tracer: Tracer | null;
  private readonly propagator: TextMapPropagator | null;

  constructor(private readonly backend: TracingBackend | null) {
    this.tracer = backend?.tracer ?? null;
    this.propagator = backend?.propagator ?? null;
  }

  get on(): boolean {
    return this.tracer !== null;
  }

  get captureContent(): boolean {
    return this.backend?.captureContent === true;
  }

  /**
   * A SERVER span for a request (or a response over another transport), child of the trace
   * the client sent in `traceparent`/`tracestate` when they are valid, else a new trace.
   * `header` reads one request header by lower-case name.
   */
  startRequest(name: string, header: (name: string) => string | undefined, attributes?: Attributes): Span | undefined {
    if (!this.tracer) return undefined;
    const parent = this.propagator!.extract(ROOT_CONTEXT, header, HEADER_GETTER);
    return this.tracer.startSpan(name, { kind: SpanKind.SERVER, attributes }, parent);
  }

  /** Runs `fn` with `span` as the parent of every span started inside it, however deep. */
  within<T>(span: Span, fn: () => T): T {
    return this.scope.run(trace.setSpan(ROOT_CONTEXT, span), fn);
  }

  /** The recording span the caller runs under (request or job), to add attributes to; undefined when off or unsampled. */
  current(): Span | undefined {
    if (!this.tracer) return undefined;
    const ctx = this.scope.getStore();
    const span = ctx && trace.getSpan(ctx);
    return span?.isRecording() ? span : undefined;
  }

  /** A child of the current span (an upstream call, a store call); undefined when off or outside any request. */
  startChild(name: string, kind: SpanKind, attributes?: Attributes): Span | undefined {
    if (!this.tracer) return undefined;
    const ctx = this.scope.getStore();
    if (!ctx) return undefined;
    return this.tracer.startSpan(name, { kind, attributes }, ctx);
  }

  /** The `traceparent`/`tracestate` headers that carry `span` to the next hop (an upstream). */
  headers(span: Span): Record<string, string> {
    const out: Record<string, string> = {};
    this.propagator?.inject(trace.setSpan(ROOT_CONTEXT, span), out, SETTER);
    return out;
  }

  /** The current span's trace context, for a record another process picks up (a background job). */
  carrier(): TraceCarrier | undefined {
    if (!this.tracer) return undefined;
    const ctx = this.scope.getStore();
    if (!ctx) return undefined;
    const out: Record<string, string> = {};
    this.propagator!.inject(ctx, out, SETTER);
    return out.traceparent ? (out as unknown as TraceCarrier) : undefined;
  }

  /**
   * A CONSUMER span for a background job: the root of its own trace (the job runs later,
   * maybe on another instance), LINKED to the request that queued it (`carrier`).
   */
  startJob(name: string, carrier: TraceCarrier | undefined, attributes?: Attributes): Span | undefined {
    if (!this.tracer) return undefined;
    const queued = carrier ? trace.getSpanContext(this.propagator!.extract(ROOT_CONTEXT, carrier as unknown as Record<string, string>, RECORD_GETTER)) : undefined;
    return this.tracer.startSpan(name, { kind: SpanKind.CONSUMER, attributes, links: queued ? [{ context: queued }] : undefined, root: true });
  }

  /**
   * A store call the current request waits on, as a CLIENT span `store <op>` (history load,
   * save, conversation append). Off, or outside a request: just `fn()`.
   */
  store<T>(op: string, fn: () => Promise<T>): Promise<T> {
    const span = this.tracer ? this.startChild(`store ${op}`, SpanKind.CLIENT) : undefined;
    if (!span) return fn();
    if (span.isRecording()) span.setAttributes({ "db.system.name": this.backend!.storeSystem, "db.operation.name": op });
    return fn().then(
      (value) => {
        span.end();
        return value;
      },
      (err: unknown) => {
        failed(span, err);
        span.end();
        throw err;
      },
    );
  }

  /** Sends the spans still buffered (tests, shutdown). */
  flush(): Promise<void> {
    return this.backend?.flush() ?? Promise.resolve();
  }

  /** Flushes and stops the exporter. */
  shutdown(): Promise<void> {
    return this.backend?.shutdown() ?? Promise.resolve();
  }
}

/** Tracing not configured: every call is a no-op. */
export const TRACING_OFF = new Tracing(null);

/** Marks a span failed: `error.type` (the failure class or the error's name) and a status message. Messages never carry secrets (upstream errors are scrubbed). */
export function failed(span: Span, err: unknown, type?: string): void {
  if (!span.isRecording()) return;
  const e = err as { name?: string; message?: string } | undefined;
  span.setAttribute("error.type", type ?? e?.name ?? "error");
  span.setStatus({ code: SpanStatusCode.ERROR, message: err === undefined ? undefined : (e?.message ?? String(err)) });
}

/** The ids every log line of a traced request carries. */
export function logIds(span: Span): { trace_id: string; span_id: string } {
  const ctx = span.spanContext();
  return { trace_id: ctx.traceId, span_id: ctx.spanId };
}
