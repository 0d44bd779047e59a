import type { Context } from "hono";
import { bodyLimit } from "hono/body-limit";

/**
 * hono's bodyLimit with a fast path: a request that declares its Content-Length (and no
 * Transfer-Encoding) is judged by that header alone, exactly as bodyLimit judges it,
 * without touching `c.req.raw.body`. bodyLimit always reads `raw.body` first, which makes
 * @hono/node-server build a full web Request with a ReadableStream over the socket (the
 * largest single cost of a small request in the benchmarks); untouched, `c.req.text()`
 * reads the body straight from the IncomingMessage. Chunked bodies go to bodyLimit. `onError`
 * throws the answer; `next` is the rest of the request (the route's handler).
 */
export function fastBodyLimit(opts: { maxSize: number; onError: (c: Context) => never }): <T>(c: Context, next: () => T | Promise<T>) => Promise<T> {
  const streamed = bodyLimit(opts) as unknown as <T>(c: Context, next: () => T | Promise<T>) => Promise<T>;
  return async <T>(c: Context, next: () => T | Promise<T>): Promise<T> => {
    const method = c.req.method;
    if (method === "GET" || method === "HEAD") return next();
    const length = c.req.header("content-length");
    if (length !== undefined && c.req.header("transfer-encoding") === undefined) {
      return Number.parseInt(length, 10) > opts.maxSize ? opts.onError(c) : next();
    }
    return streamed(c, next);
  };
}
