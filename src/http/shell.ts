/**
 * What src/http/ holds:
 * the request shell every route runs inside (`shell.ts`: request id, log context and span, auth,
 * body limit, the error answer, the access line and metrics), auth, per-key admission (`key-
 * gate.ts`), body limit, drain, the OpenAI error rendering (`errors.ts`), SSE response writing to
 * the socket (`sse.ts`) with comment lines on a silent stream (`sse-keepalive.ts`: one timer per
 * app) and headers that leave on their own when no event comes to go with them (`headers-wait.ts`:
 * one timer for every stream), the client headers a `kind: openai` upstream receives (`forward-
 * headers.ts`: an allow-list, `OpenAI-Beta`); the hot JSON answers and errors are written to the
 * socket too (`json.ts`, `errors.ts`), as a Response under `app.request`; what a turn writes after
 * its first write waits for the turn's end (`turn-writes.ts`)
 */
import type { Transformer } from "node:stream/web";
import type { Context } from "hono";
import { ApiError, isKnownError } from "../ops/errors.js";
import { infoLine, withLogContext } from "../ops/log.js";
import { NO_KEY } from "../keys/policy.js";
import { NO_TOKENS, recordUsageOf } from "../keys/usage.js";
import { usageDeps, type Runtime } from "../runtime/runtime.js";
import { logIds, type Span } from "../tracing/index.js";
import { UpstreamFailure } from "../upstream/errors.js";
import { authenticate } from "./auth.js";
import { CONSOLE_ROUTES } from "./routes/console.js";
import { fastBodyLimit } from "./body-limit.js";
import { nodeOutgoing, type AppEnv, type RequestStats } from "./context.js";
import { sendError } from "./errors.js";
import { endRequestSpan } from "./request-span.js";
import { answered } from "./turn-writes.js";

const OPEN_ROUTES = { "/healthz": "health", "/readyz": "health", "/metrics": "metrics" } as const;

/** What every request goes through around its route's handler (or the 404). */
export interface RequestShell {
  /**
   * Runs `handle` for the request as the route `route` (its template, "unmatched" for a 404):
   * request id, the log context and trace span, the caller's key, the body limit under /v1/,
   * the answer to any error, then the access line, usage and metrics once the answer is out.
   */
  run(c: Context<AppEnv>, route: string, handle: () => Response | Promise<Response>): Promise<Response>;
  /** An error as the client's answer (OpenAI's shape; 499 when nobody is left to answer). */
  answerError(err: unknown, c: Context<AppEnv>): Response;
}

/**
 * The request shell. It wraps each route's handler (app.ts) instead of being hono middleware:
 * with one handler per route hono calls it directly, where each middleware would add a layer
 * of its compose (a dispatch and its promises, measured at ~5-10 us per request each).
 */
export function requestShell(rt: Runtime): RequestShell {
  // The access line's fields are fixed (no key, api_key or authorization among them), so the
  // redaction pass, about half of a line's cost, has nothing to do: a child logger without it.
  const accessLog = rt.log.child({}, { redact: [] });
  const accessLine = infoLine(accessLog, "request");
  // A child keeps the level it was made with: follow the router's (logging.level on reload).
  rt.log.on("level-change", (level, _value, _prev, _prevValue, logger) => {
    if (logger === rt.log) accessLog.level = level;
  });

  const answerError = (err: unknown, c: Context<AppEnv>): Response => {
    const stats = c.get("stats");
    // An upstream failure names the endpoint last tried: count the answer under it.
    if (err instanceof UpstreamFailure && stats) stats.endpoint ||= err.endpoint;
    if (clientGone(c)) {
      // Nobody is left to answer: an everyday event, not a router fault. 499 as nginx counts it.
      rt.log.info({ route: stats?.route, model: stats?.model || undefined }, "client disconnected before the answer");
      return new Response(null, { status: 499 });
    }
    if (!isKnownError(err)) rt.log.error({ err: { name: (err as Error).name, message: (err as Error).message, stack: (err as Error).stack } }, "unhandled error");
    return sendError(c, err);
  };

  // server.max_body_bytes as the config says now (a reload changes it): the limit is rebuilt when it does.
  const limitOf = (size: number) => ({ size, run: fastBodyLimit({ maxSize: size, onError: () => tooLarge(size) }) });
  let limit = limitOf(rt.config.server.max_body_bytes);
  const limitBody = (c: Context<AppEnv>, handle: () => Response | Promise<Response>): Promise<Response> => {
    if (rt.config.server.max_body_bytes !== limit.size) limit = limitOf(rt.config.server.max_body_bytes);
    return limit.run(c, handle);
  };

  // The caller's key, then (under /v1/) the body limit, then the handler; any error is answered here.
  const admit = async (c: Context<AppEnv>, route: string, handle: () => Response | Promise<Response>): Promise<Response> => {
    try {
      const kind = OPEN_ROUTES[c.req.path as keyof typeof OPEN_ROUTES];
      // The console's pages load without a key (they ask for one); its data comes from the admin API.
      const open = kind === "health" ? rt.config.server.public_health : kind === "metrics" ? rt.config.server.public_metrics : CONSOLE_ROUTES.has(route);
      let key = open ? null : authenticate(rt.config, c.req.header("authorization"), rt.keyRing);
      if (key instanceof Promise) key = await key;
      c.set("apiKey", key);
      c.set("owner", key?.name ?? null);
      return await (c.req.path.startsWith("/v1/") && !streamedUpload(c) ? limitBody(c, handle) : handle());
    } catch (err) {
      return answerError(err, c);
    }
  };

  const run = async (c: Context<AppEnv>, route: string, handle: () => Response | Promise<Response>): Promise<Response> => {
    const started = performance.now();
    const requestId = c.req.header("x-request-id")?.slice(0, 200) || rt.ids("req");
    c.set("requestId", requestId);
    const stats: RequestStats = { route, model: "", endpoint: "" };
    c.set("stats", stats);
    // On the ServerResponse, merged into whatever writeHead comes (node-server's or sseResponse's).
    const outgoing = nodeOutgoing(c);
    outgoing?.setHeader("x-request-id", requestId);
    // Traced: the request's SERVER span, child of the client's traceparent, parent of every span started while handling it.
    const span = rt.tracing.on ? rt.tracing.startRequest(c.req.method, (name) => c.req.header(name), { "http.request.method": c.req.method, "url.path": c.req.path, "router.request_id": requestId }) : undefined;
    // Every line logged while handling the request (upstream attempts included) carries its id (and its trace's).
    let res = span
      ? await rt.tracing.within(span, () => withLogContext({ requestId, ...logIds(span) }, () => admit(c, route, handle)))
      : await withLogContext({ requestId }, () => admit(c, route, handle));
    if (!outgoing) {
      // Under `app.request` (tests): the header goes on the Response itself, as hono hands it
      // back from `c.res` (which merges what the handler set with `c.header`).
      c.res = res;
      res = c.res;
      res.headers.set("x-request-id", requestId);
    }
    // Answers written to the ServerResponse itself (streams, the hot JSON answers, errors) carry
    // their status there; the others are a Response node-server writes after this.
    const status = outgoing && answered(outgoing) ? outgoing.statusCode : res.status;
    const finish = accounting({ started, requestId, method: c.req.method, owner: c.get("owner"), stats, status, span });
    // Under @hono/node-server, account when the socket response closes (after its last
    // byte, or when the client went away): the access log line and the metrics are then
    // off the request's critical path, and a stream needs no TransformStream on every chunk.
    // A client that left while we worked closed it already: account now, the event is gone.
    // `on`: close comes once (node guards it); `once` would add a wrapper closure per request.
    if (outgoing) outgoing.closed ? finish() : outgoing.on("close", finish);
    else if (res.headers.get("content-type")?.startsWith("text/event-stream") && res.body) {
      res = new Response(res.body.pipeThrough(onEnd(finish)), res);
    } else finish();
    return res;
  };

  /**
   * The request's accounting once its answer is out (usage, span, metrics, access line). Made
   * here, not in `run`: a closure there would share run's scope, which holds the hono Context
   * (the request, its body text) and the handler, alive for as long as a stream stays open.
   */
  const accounting = (done: Finished) => (): void => {
    const { stats, status, span, owner } = done;
    const key = owner ?? NO_KEY;
    const tokens = stats.tokens ?? NO_TOKENS;
    stats.gate?.settleOutcome(stats.tokens, status < 400);
    // Usage counts answered requests (a 404 for another key's model, a 429 are not charged).
    if (stats.metered && stats.model && status < 400) recordUsageOf(usageDeps(rt), key, stats.servedModel ?? stats.model, 1, tokens);
    if (span) endRequestSpan(span, done.method, stats, status, owner);
    const seconds = (performance.now() - done.started) / 1000;
    if (stats.metered) {
      // The console's requests page.
      rt.recent.record(done.requestId, done.method, stats.route, stats.servedModel ?? stats.model, key, status, seconds * 1000, tokens.input, tokens.output, stats.responseId ?? "", stats.background === true, span ? span.spanContext().traceId : "");
    }
    rt.metrics.requests.inc({ route: stats.route, model: stats.model, upstream: stats.endpoint, status: String(status), key });
    if (stats.route === "/v1/responses" && done.method === "POST") rt.metrics.responses.inc({ transport: "http", model: stats.model, status: String(status) });
    rt.metrics.requestDuration.observe({ route: stats.route, model: stats.model, upstream: stats.endpoint }, seconds);
    if (stats.upstreamMs !== undefined) rt.metrics.overhead.observe({ route: stats.route }, Math.max(0, seconds - stats.upstreamMs / 1000));
    if (stats.route in OPEN_ROUTES) return;
    const fields = { requestId: done.requestId, method: done.method, route: stats.route, model: stats.model || undefined, servedModel: stats.servedModel, endpoint: stats.endpoint || undefined, status, ms: Math.round(seconds * 1000) };
    accessLine(span ? { ...fields, ...logIds(span) } : fields);
  };

  return { run, answerError };
}

/** What a request's accounting reads once its answer is out. */
interface Finished {
  started: number;
  requestId: string;
  method: string;
  owner: string | null;
  stats: RequestStats;
  status: number;
  span: Span | undefined;
}

/** `POST /v1/files`: the upload streams to disk under its own limit (files.max_bytes), not server.max_body_bytes. */
function streamedUpload(c: Context<AppEnv>): boolean {
  return c.req.method === "POST" && c.req.path === "/v1/files";
}

function tooLarge(size: number): never {
  throw new ApiError(413, `The request body is larger than the router's limit of ${size} bytes.`, { type: "invalid_request_error", code: "request_too_large" });
}

/** True when the client went away before its answer (socket closed, or the request's signal aborted). */
function clientGone(c: Context<AppEnv>): boolean {
  const outgoing = nodeOutgoing(c);
  if (outgoing) return outgoing.closed && !outgoing.writableFinished;
  return c.req.raw.signal.aborted;
}

/** A pass-through stream that calls `fn` once when the body ends or is cancelled. */
function onEnd(fn: () => void): TransformStream<Uint8Array, Uint8Array> {
  let done = false;
  const once = () => {
    if (!done) {
      done = true;
      fn();
    }
  };
  return new TransformStream({ flush: once, cancel: once } as Transformer<Uint8Array, Uint8Array>);
}
