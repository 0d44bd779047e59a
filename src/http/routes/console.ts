import { existsSync, readdirSync, readFileSync } from "node:fs";
import { extname } from "node:path";
import { fileURLToPath } from "node:url";
import type { Context, Hono } from "hono";
import { ApiError, notFound } from "../../ops/errors.js";
import type { Runtime } from "../../runtime/runtime.js";
import type { AppEnv } from "../context.js";

/**
 * The web console at /ui/: static files that `npm run build` bundles into dist/ui/ (source in
 * ui/ at the repository's root), read once and served from memory. The pages load without a
 * key (the sign-in form is one of them); everything they show comes from the admin API, which
 * the browser calls with the admin key in the Authorization header: a request from another
 * origin cannot carry it (no cookie is involved, and no CORS header lets another origin read or
 * send one), so the API is not CSRF-able. The CSP allows this origin's script, style and
 * fetches only; no inline code, no frames. `server.admin_ui: false` answers 404 here.
 */
export const CONSOLE_ROUTES = new Set(["/ui", "/ui/", "/ui/:file"]);

const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";
const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
};

/** Where the built console is: beside the compiled router (dist/ui/), or dist/ui/ of the checkout when running from src/. */
export function consoleDir(): string | null {
  for (const rel of ["../../ui/", "../../../dist/ui/"]) {
    const dir = fileURLToPath(new URL(rel, import.meta.url));
    if (existsSync(`${dir}index.html`)) return dir;
  }
  return null;
}

function loadFiles(dir: string | null): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  if (!dir) return files;
  for (const name of readdirSync(dir)) if (TYPES[extname(name)]) files.set(name, readFileSync(dir + name));
  return files;
}

export function consoleRoutes(app: Hono<AppEnv>, rt: Runtime, dir: string | null = consoleDir()): void {
  let files: Map<string, Buffer> | null = null;
  const serve = (c: Context<AppEnv>, name: string) => {
    if (!rt.config.server.admin_ui) throw notFound(`Invalid URL (${c.req.method} ${c.req.path}): the console is off (server.admin_ui: false).`, null, "unknown_url");
    files ??= loadFiles(dir);
    if (files.size === 0) throw new ApiError(503, "The console is not built: run `npm run build` (it bundles ui/ into dist/ui/).", { type: "server_error", code: "console_not_built" });
    const body = files.get(name);
    if (!body) throw notFound(`Invalid URL (${c.req.method} ${c.req.path})`, null, "unknown_url");
    return c.body(new Uint8Array(body), 200, {
      "content-type": TYPES[extname(name)]!,
      "content-security-policy": CSP,
      "x-content-type-options": "nosniff",
      "x-frame-options": "DENY",
      "referrer-policy": "no-referrer",
      "cross-origin-opener-policy": "same-origin",
      "cross-origin-resource-policy": "same-origin",
      "cache-control": "no-cache",
    });
  };
  app.get("/ui", (c) => {
    if (!rt.config.server.admin_ui) return serve(c, "");
    return c.redirect("/ui/", 301);
  });
  app.get("/ui/", (c) => serve(c, "index.html"));
  app.get("/ui/:file", (c) => serve(c, c.req.param("file")));
}
