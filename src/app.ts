import type { Transformer } from "node:stream/web";
import { Hono, type Context, type Next } from "hono";
import { ApiError, isKnownError, notFound } from "./ops/errors.js";
import { authenticate } from "./http/auth.js";
import { fastBodyLimit } from "./http/body-limit.js";
import { nodeOutgoing, type AppEnv, type RequestStats } from "./http/context.js";
import { sendError } from "./http/errors.js";
import { chatRoutes } from "./http/routes/chat.js";
import { conversationsRoutes } from "./http/routes/conversations.js";
import { usageRoutes } from "./http/routes/admin.js";
import { compactRoutes } from "./http/routes/compact.js";
import { inputTokensRoutes } from "./http/routes/input-tokens.js";
import { opsRoutes } from "./http/routes/ops.js";
import { modelsRoutes } from "./http/routes/models.js";
import { responsesRoutes } from "./http/routes/responses.js";
import { CompactService } from "./responses/compaction/compact-service.js";
import { ConversationsService } from "./responses/conversations/conversations.js";
import { InputTokensService } from "./responses/items/input-tokens.js";
import { ResponsesService } from "./responses/service.js";
import { UpstreamFailure } from "./upstream/errors.js";
import { NO_KEY } from "./keys/policy.js";
import { NO_TOKENS, recordUsageOf } from "./keys/usage.js";
import { usageDeps, type Runtime } from "./runtime/runtime.js";
import { infoLine, withLogContext } from "./ops/log.js";
import { logIds } from "./tracing/index.js";
import { endRequestSpan } from "./http/request-span.js";

const OPEN_ROUTES = { "/healthz": "health", "/readyz": "health", "/metrics": "metrics" } as const;

/** Builds the HTTP app from a Runtime. No globals: tests build as many as they like. */
export function buildApp(rt: Runtime): { app: Hono<AppEnv>; service: ResponsesService } {
  const app = new Hono<AppEnv>();
  const service = new ResponsesService(rt);
  // The access line's fields are fixed (no key, api_key or authorization among them), so the
  // redaction pass, about half of a line's cost, has nothing to do: a child logger without it.
  const accessLog = rt.log.child({}, { redact: [] });
  const accessLine = infoLine(accessLog, "request");
  // A child keeps the level it was made with: follow the router's (logging.level on reload).
  rt.log.on("level-change", (level, _value, _prev, _prevValue, logger) => {
    if (logger === rt.log) accessLog.level = level;
  });

  const answerError = (err: unknown, c: Context<AppEnv>): Response => {
    // An upstream failure names the endpoint last tried: count the answer under it.
    if (err instanceof UpstreamFailure) c.get("stats").endpoint ||= err.endpoint;
    if (clientGone(c)) {
      // Nobody is left to answer: an everyday event, not a router fault. 499 as nginx counts it.
      rt.log.info({ route: c.req.routePath, model: c.get("stats").model || undefined }, "client disconnected before the answer");
      return new Response(null, { status: 499 });
    }
    if (!isKnownError(err)) rt.log.error({ err: { name: (err as Error).name, message: (err as Error).message, stack: (err as Error).stack } }, "unhandled error");
    return sendError(c, err);
  };
  const limitBody = fastBodyLimit({
    maxSize: rt.config.server.max_body_bytes,
    onError: () => {
      throw new ApiError(413, `The request body is larger than the router's limit of ${rt.config.server.max_body_bytes} bytes.`, {
        type: "invalid_request_error",
        code: "request_too_large",
      });
    },
  });
  // The caller's key, then (under /v1/) the body limit. Their errors are answered as a route's
  // are, inside the request's accounting below.
  const admit = async (c: Context<AppEnv>, next: Next): Promise<void> => {
    try {
      const kind = OPEN_ROUTES[c.req.path as keyof typeof OPEN_ROUTES];
      const open = kind === "health" ? rt.config.server.public_health : kind === "metrics" ? rt.config.server.public_metrics : false;
      const key = open ? null : authenticate(rt.config, c.req.header("authorization"));
      c.set("apiKey", key);
      c.set("owner", key?.name ?? null);
      if (c.req.path.startsWith("/v1/")) await limitBody(c, next);
      else await next();
    } catch (err) {
      c.res = answerError(err, c);
    }
  };

  // The one middleware: every request (routes, 404s, errors) passes here once. Each further
  // middleware would be another layer of hono's compose on every request (~5 us each, measured).
  app.use("*", async (c, next) => {
    const started = performance.now();
    const requestId = c.req.header("x-request-id")?.slice(0, 200) || rt.ids("req");
    c.set("requestId", requestId);
    const stats: RequestStats = { route: "", model: "", endpoint: "" };
    c.set("stats", stats);
    // On the ServerResponse, merged into whatever writeHead comes (node-server's or sseResponse's):
    // `c.res.headers.set` turns the lightweight Response's plain header object into a web Headers.
    const outgoing = nodeOutgoing(c);
    outgoing?.setHeader("x-request-id", requestId);
    // Traced: the request's SERVER span, child of the client's traceparent, parent of every span started while handling it.
    const span = rt.tracing.on ? rt.tracing.startRequest(c.req.method, (name) => c.req.header(name), { "http.request.method": c.req.method, "url.path": c.req.path, "router.request_id": requestId }) : undefined;
    // Every line logged while handling the request (upstream attempts included) carries its id (and its trace's).
    if (span) await rt.tracing.within(span, () => withLogContext({ requestId, ...logIds(span) }, () => admit(c, next)));
    else await withLogContext({ requestId }, () => admit(c, next));
    if (!outgoing) c.res.headers.set("x-request-id", requestId);
    stats.route = c.req.routePath && !c.req.routePath.includes("*") ? c.req.routePath : "unmatched";
    // Answers written to the ServerResponse itself (streams, the hot JSON answers, errors) carry
    // their status there; the others are still a Response node-server writes after this.
    const status = outgoing?.headersSent ? outgoing.statusCode : c.res.status;
    const finish = () => {
      const key = c.get("owner") ?? NO_KEY;
      const tokens = stats.tokens ?? NO_TOKENS;
      stats.gate?.settleOutcome(stats.tokens, status < 400);
      // Usage counts answered requests (a 404 for another key's model, a 429 are not charged).
      if (stats.metered && stats.model && status < 400) recordUsageOf(usageDeps(rt), key, stats.servedModel ?? stats.model, 1, tokens);
      if (span) endRequestSpan(span, c.req.method, stats, status, c.get("owner"));
      const seconds = (performance.now() - started) / 1000;
      rt.metrics.requests.inc({ route: stats.route, model: stats.model, upstream: stats.endpoint, status: String(status), key });
      if (stats.route === "/v1/responses" && c.req.method === "POST") rt.metrics.responses.inc({ transport: "http", model: stats.model, status: String(status) });
      rt.metrics.requestDuration.observe({ route: stats.route, model: stats.model, upstream: stats.endpoint }, seconds);
      if (stats.upstreamMs !== undefined) rt.metrics.overhead.observe({ route: stats.route }, Math.max(0, seconds - stats.upstreamMs / 1000));
      if (stats.route in OPEN_ROUTES) return;
      const fields = { requestId, method: c.req.method, route: stats.route, model: stats.model || undefined, servedModel: stats.servedModel, endpoint: stats.endpoint || undefined, status, ms: Math.round(seconds * 1000) };
      accessLine(span ? { ...fields, ...logIds(span) } : fields);
    };
    // Under @hono/node-server, account when the socket response closes (after its last
    // byte, or when the client went away): the access log line and the metrics are then
    // off the request's critical path, and a stream needs no TransformStream on every chunk.
    // A client that left while we worked closed it already: account now, the event is gone.
    if (outgoing) outgoing.closed ? finish() : outgoing.once("close", finish);
    else if (c.res.headers.get("content-type")?.startsWith("text/event-stream") && c.res.body) {
      c.res = new Response(c.res.body.pipeThrough(onEnd(finish)), c.res);
    } else finish();
  });

  inputTokensRoutes(app, new InputTokensService(rt), rt);
  compactRoutes(app, new CompactService(rt), rt);
  responsesRoutes(app, service, rt);
  conversationsRoutes(app, new ConversationsService(rt));
  chatRoutes(app, rt);
  opsRoutes(app, rt);
  modelsRoutes(app, rt);
  usageRoutes(app, rt);

  app.notFound((c) => sendError(c, notFound(`Invalid URL (${c.req.method} ${c.req.path})`, null, "unknown_url")));
  app.onError(answerError);
  return { app, service };
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
