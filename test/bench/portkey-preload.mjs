// Preload (node --import) for the peer gateway, @portkey-ai/gateway, run by the benchmarks.
//
// 1. Loopback only: its server listens with a port and no host (every interface). A
//    listen() given only a port binds 127.0.0.1 instead.
// 2. Its streaming path is broken as installed here: it wraps the upstream fetch() Response
//    with `new Response(stream, upstreamResponse)`, and @hono/node-server 1.19's lightweight
//    Response then hands back the upstream's *immutable* Headers, so Portkey's own
//    `headers.append(...)` throws "immutable" and every stream answers 500. The fix here
//    re-wraps streamed (text/event-stream) fetch responses with mutable headers: one
//    Response + Headers copy per streamed request, nothing for JSON ones.
import net from "node:net";

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === "number" || (typeof args[0] === "string" && /^\d+$/.test(args[0]))) {
    const cb = args.find((a) => typeof a === "function");
    return listen.call(this, { port: Number(args[0]), host: "127.0.0.1" }, cb);
  }
  if (args[0] && typeof args[0] === "object" && !("path" in args[0]) && !args[0].host) {
    return listen.call(this, { ...args[0], host: "127.0.0.1" }, ...args.slice(1));
  }
  return listen.apply(this, args);
};

const NativeResponse = globalThis.Response;
const nativeFetch = globalThis.fetch;
globalThis.fetch = async (...args) => {
  const res = await nativeFetch(...args);
  if (!res.headers.get("content-type")?.startsWith("text/event-stream")) return res;
  return new NativeResponse(res.body, { status: res.status, statusText: res.statusText, headers: new Headers(res.headers) });
};
