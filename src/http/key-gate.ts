import type { Context } from "hono";
import { admit, estimateTokens, keyLimits } from "../keys/limits.js";
import type { KeyLimits } from "../store/limiter.js";
import { limiterDeps, type Runtime } from "../runtime/runtime.js";
import { nodeOutgoing, type AppEnv } from "./context.js";
import type { ApiKey } from "../keys/policy.js";

/**
 * Admits an inference request against its key's limits (429 when one refuses it) and sets
 * the x-ratelimit-* headers on the answer. The gate is settled when the request is over
 * (app.ts), with the tokens the upstream reported. Keys without limits cost nothing here:
 * undefined comes back instead of a promise (`const admitting = admitKey(...); if (admitting) await admitting`).
 */
export function admitKey(c: Context<AppEnv>, rt: Runtime, body: unknown): Promise<void> | undefined {
  c.get("stats").metered = true;
  const key = c.get("apiKey");
  const limits = keyLimits(key);
  // Nothing to wait for: the caller goes on in the same turn.
  if (!key || !limits) return undefined;
  return admitLimited(c, rt, key, limits, body);
}

async function admitLimited(c: Context<AppEnv>, rt: Runtime, key: ApiKey, limits: KeyLimits, body: unknown): Promise<void> {
  const reserve = estimateTokens(Number(c.req.header("content-length")) || 0, body);
  const { gate, headers } = await admit(limiterDeps(rt), key, limits, rt.ids("req"), reserve);
  c.get("stats").gate = gate;
  const outgoing = nodeOutgoing(c);
  for (const name in headers) {
    if (outgoing) outgoing.setHeader(name, headers[name]!);
    else c.header(name, headers[name]);
  }
}
