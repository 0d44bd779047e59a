/**
 * What the top of src/ holds:
 * the only files at the top: the entry; arguments, logger, config watch and signals (`start`,
 * `check`); the server with its runtime and stores; the Hono app built from its parts (no globals:
 * tests build several)
 */
import { Hono, type Context, type Next } from "hono";
import { notFound } from "./ops/errors.js";
import type { AppEnv } from "./http/context.js";
import { sendError } from "./http/errors.js";
import { requestShell } from "./http/shell.js";
import { SseKeepalive } from "./http/sse-keepalive.js";
import { chatRoutes } from "./http/routes/chat.js";
import { conversationsRoutes } from "./http/routes/conversations.js";
import { usageRoutes } from "./http/routes/admin.js";
import { adminKeysRoutes } from "./http/routes/admin-keys.js";
import { adminConsoleRoutes } from "./http/routes/admin-console.js";
import { consoleRoutes } from "./http/routes/console.js";
import { compactRoutes } from "./http/routes/compact.js";
import { inputTokensRoutes } from "./http/routes/input-tokens.js";
import { opsRoutes } from "./http/routes/ops.js";
import { modelsRoutes } from "./http/routes/models.js";
import { responsesRoutes } from "./http/routes/responses.js";
import { filesRoutes } from "./http/routes/files.js";
import { vectorStoresRoutes } from "./http/routes/vector-stores.js";
import type { Files } from "./files/library.js";
import { CompactService } from "./responses/compaction/compact-service.js";
import { ConversationsService } from "./responses/conversations/conversations.js";
import { InputTokensService } from "./responses/items/input-tokens.js";
import { ResponsesService } from "./responses/service.js";
import type { Runtime } from "./runtime/runtime.js";

/** Builds the HTTP app from a Runtime. No globals: tests build as many as they like. Without `files`, /v1/files and /v1/vector_stores are not served. */
export function buildApp(rt: Runtime, files: Files | null = null): { app: Hono<AppEnv>; service: ResponsesService } {
  const app = new Hono<AppEnv>();
  const service = new ResponsesService(rt);
  const shell = requestShell(rt);
  const keepalive = new SseKeepalive(() => rt.config.server.sse_keepalive);

  // The routes are declared on their own app, then each is mounted here inside the request
  // shell: one handler per route, which hono runs without its middleware chain.
  const routes = new Hono<AppEnv>();
  inputTokensRoutes(routes, new InputTokensService(rt), rt);
  compactRoutes(routes, new CompactService(rt), rt);
  responsesRoutes(routes, service, rt, keepalive);
  conversationsRoutes(routes, new ConversationsService(rt));
  chatRoutes(routes, rt, keepalive);
  opsRoutes(routes, rt);
  modelsRoutes(routes, rt);
  usageRoutes(routes, rt);
  if (files) {
    filesRoutes(routes, files.files);
    vectorStoresRoutes(routes, files.vectorStores);
  }
  adminKeysRoutes(routes, rt);
  adminConsoleRoutes(routes, rt);
  consoleRoutes(routes, rt);
  const mounted = new Set<string>();
  for (const r of routes.routes) {
    // One handler per route: a second (route-level middleware) would run the shell twice.
    const id = `${r.method} ${r.path}`;
    if (mounted.has(id)) throw new Error(`route ${id} has more than one handler: give it one`);
    mounted.add(id);
    const handler = r.handler as (c: Context<AppEnv>, next: Next) => Response | Promise<Response>;
    app.on(r.method, r.path, (c, next) => shell.run(c, r.path, () => handler(c, next)));
  }

  app.notFound((c) => shell.run(c as Context<AppEnv>, "unmatched", () => sendError(c, notFound(`Invalid URL (${c.req.method} ${c.req.path})`, null, "unknown_url"))));
  // What escapes the shell (nothing it knows of) still gets an OpenAI-shaped answer.
  app.onError((err, c) => shell.answerError(err, c));
  return { app, service };
}
