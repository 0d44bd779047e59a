import type { Context, Hono } from "hono";
import type { FilesApi } from "../../files/files-api.js";
import type { AppEnv } from "../context.js";

/** Headers busboy reads (content-type with its boundary, content-length). */
function uploadHeaders(c: Context<AppEnv>): Record<string, string> {
  const out: Record<string, string> = {};
  c.req.raw.headers.forEach((value, name) => (out[name] = value));
  return out;
}

const owner = (c: Context<AppEnv>) => c.get("owner") ?? "";

/** /v1/files (the Files API): parse, call the room, serialise. The upload is streamed (not under server.max_body_bytes: files.max_bytes). */
export function filesRoutes(app: Hono<AppEnv>, files: FilesApi): void {
  app.post("/v1/files", async (c) => c.json(await files.upload(owner(c), uploadHeaders(c), c.req.raw.body)));
  app.get("/v1/files", async (c) => c.json(await files.list(owner(c), c.req.query())));
  app.get("/v1/files/:id", async (c) => c.json(await files.retrieve(owner(c), c.req.param("id"))));
  app.delete("/v1/files/:id", async (c) => c.json(await files.delete(owner(c), c.req.param("id"))));
  app.get("/v1/files/:id/content", async (c) => {
    const { bytes, mime, filename } = await files.content(owner(c), c.req.param("id"));
    return new Response(new Uint8Array(bytes), { headers: { "content-type": mime, "content-length": String(bytes.length), "content-disposition": `attachment; filename="${filename.replace(/["\\\r\n]/g, "_")}"` } });
  });
}
