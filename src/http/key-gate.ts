import type { Context } from "hono";
import { admit, estimateTokens, keyLimits } from "../keys/limits.js";
import { limiterDeps, type Runtime } from "../runtime/runtime.js";
import { nodeOutgoing, type AppEnv } from "./context.js";

/**
 * Admits an inference request against its key's limits (429 when one refuses it) and sets
 * the x-ratelimit-* headers on the answer. The gate is settled when the request is over
 * (app.ts), with the tokens the upstream reported. Keys without limits cost nothing here.
 */
export async function admitKey(c: Context<AppEnv>, rt: Runtime, body: unknown): Promise<void> {
  c.get("stats").metered = true;
  const key = c.get("apiKey");
  const limits = keyLimits(key);
  if (!key || !limits) return;
  const reserve = estimateTokens(Number(c.req.header("content-length")) || 0, body);
  const { gate, headers } = await admit(limiterDeps(rt), key, limits, rt.ids("req"), reserve);
  c.get("stats").gate = gate;
  const outgoing = nodeOutgoing(c);
  for (const name in headers) {
    if (outgoing) outgoing.setHeader(name, headers[name]!);
    else c.header(name, headers[name]);
  }
}
