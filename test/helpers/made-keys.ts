import OpenAI from "openai";
import type { TestRouter } from "./router.js";

/** The openai SDK on a router with a given key (no retries: each call is one request). */
export const sdkWith = (r: TestRouter, key: string) => new OpenAI({ baseURL: `${r.url}/v1`, apiKey: key, maxRetries: 0 });

/** The HTTP status an SDK call came to: 200, or its APIError's status (0: no HTTP answer). */
export const statusOf = (p: Promise<unknown>) => p.then(() => 200, (e: unknown) => (e instanceof OpenAI.APIError ? (e.status ?? 0) : 0));

/** Asks `r` with `key` until it answers 401 or `withinMs` has passed since `since`; the last status. */
export async function statusUntil401(r: TestRouter, key: string, since: number, withinMs = 1_000): Promise<number> {
  let status = 200;
  while (status !== 401 && Date.now() - since < withinMs) {
    status = await statusOf(sdkWith(r, key).models.list());
    if (status !== 401) await new Promise((done) => setTimeout(done, 10));
  }
  return status;
}
