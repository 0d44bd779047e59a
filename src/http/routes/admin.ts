import type { Context, Hono } from "hono";
import { ApiError, invalidRequest } from "../../ops/errors.js";
import { isAdmin } from "../../keys/policy.js";
import { parseDay } from "../../keys/usage.js";
import type { Runtime } from "../../runtime/runtime.js";
import type { UsageRow } from "../../store/usage.js";
import type { AppEnv } from "../context.js";

/**
 * 403 for a valid key that is not an admin. OpenAI answers a key without the scope with its
 * "insufficient permissions" message; we send it as 403 permission_error (the SDKs'
 * PermissionDeniedError), not 401, which clients read as "this key is wrong".
 */
export function requireAdmin(c: Context<AppEnv>, rt: Runtime, scope: string): void {
  if (isAdmin(rt.config, c.get("apiKey"))) return;
  throw new ApiError(403, `You have insufficient permissions for this operation. Missing scope: ${scope}. Only api keys with role: admin may read it.`, {
    type: "permission_error",
    code: "insufficient_permissions",
  });
}

const MAX_DAYS = 366;

/** GET /v1/usage?key=&from=&to=: per-key, per-model requests and tokens by UTC day, for admin keys. */
export function usageRoutes(app: Hono<AppEnv>, rt: Runtime): void {
  app.get("/v1/usage", async (c) => {
    requireAdmin(c, rt, "usage.read");
    const today = new Date(rt.now()).toISOString().slice(0, 10);
    const to = day(c.req.query("to") ?? today, "to");
    const from = day(c.req.query("from") ?? shiftDays(to, -29), "from");
    if (from > to) throw invalidRequest(`'from' (${from}) is after 'to' (${to}).`, "from", "invalid_value");
    if (Date.parse(to) - Date.parse(from) >= MAX_DAYS * 86_400_000) throw invalidRequest(`Ask for at most ${MAX_DAYS} days at a time.`, "from", "invalid_value");
    const key = c.req.query("key");
    const rows = await rt.stores.usage.query({ key: key === undefined ? undefined : key, from, to }).catch((err: unknown) => {
      rt.metrics.storeErrors.inc({ store: "usage", op: "query" });
      throw new ApiError(503, `The router's usage store is unavailable: ${(err as Error).message}`, { type: "server_error", code: "store_unavailable" });
    });
    return c.json({ object: "list", from, to, key: key ?? null, data: rows.map(entry), totals: totals(rows) });
  });
}

function day(value: string, param: string): string {
  const d = parseDay(value);
  if (!d) throw invalidRequest(`Invalid '${param}': expected a UTC date as YYYY-MM-DD, got '${value}'.`, param, "invalid_value");
  return d;
}

function shiftDays(d: string, n: number): string {
  return new Date(Date.parse(`${d}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);
}

function entry(r: UsageRow) {
  return { object: "usage.day", date: r.day, key: r.key, model: r.model, requests: r.requests, input_tokens: r.input_tokens, output_tokens: r.output_tokens, total_tokens: r.input_tokens + r.output_tokens };
}

/** Sums per key and model over the whole range. */
function totals(rows: UsageRow[]) {
  const sums = new Map<string, ReturnType<typeof entry>>();
  for (const r of rows) {
    const id = `${r.key}\u0000${r.model}`;
    const s = sums.get(id);
    if (!s) sums.set(id, { ...entry(r), object: "usage.total", date: "" });
    else {
      s.requests += r.requests;
      s.input_tokens += r.input_tokens;
      s.output_tokens += r.output_tokens;
      s.total_tokens += r.input_tokens + r.output_tokens;
    }
  }
  return [...sums.values()].map(({ date: _date, ...rest }) => rest).sort((a, b) => (a.key === b.key ? (a.model < b.model ? -1 : 1) : a.key < b.key ? -1 : 1));
}
