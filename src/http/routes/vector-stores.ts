import type { Context, Hono } from "hono";
import type { VectorStoresApi } from "../../files/vector-stores.js";
import type { AppEnv } from "../context.js";
import { readJsonBody } from "../context.js";

const owner = (c: Context<AppEnv>) => c.get("owner") ?? "";
const body = async (c: Context<AppEnv>, allowEmpty = false) => ((await readJsonBody(c, allowEmpty)) ?? {}) as Record<string, unknown>;

/** /v1/vector_stores (the Vector Stores API: stores, their files, file batches, search): parse, call the room, serialise. */
export function vectorStoresRoutes(app: Hono<AppEnv>, stores: VectorStoresApi): void {
  app.post("/v1/vector_stores", async (c) => c.json(await stores.create(owner(c), await body(c, true))));
  app.get("/v1/vector_stores", async (c) => c.json(await stores.list(owner(c), c.req.query())));
  app.get("/v1/vector_stores/:id", async (c) => c.json(await stores.retrieve(owner(c), c.req.param("id"))));
  app.post("/v1/vector_stores/:id", async (c) => c.json(await stores.modify(owner(c), c.req.param("id"), await body(c))));
  app.delete("/v1/vector_stores/:id", async (c) => c.json(await stores.delete(owner(c), c.req.param("id"))));
  app.post("/v1/vector_stores/:id/search", async (c) => c.json(await stores.searchPage(owner(c), c.req.param("id"), await body(c))));

  app.post("/v1/vector_stores/:id/files", async (c) => c.json(await stores.createFile(owner(c), c.req.param("id"), await body(c))));
  app.get("/v1/vector_stores/:id/files", async (c) => c.json(await stores.listFiles(owner(c), c.req.param("id"), c.req.query())));
  app.get("/v1/vector_stores/:id/files/:file_id", async (c) => c.json(await stores.retrieveFile(owner(c), c.req.param("id"), c.req.param("file_id"))));
  app.post("/v1/vector_stores/:id/files/:file_id", async (c) => c.json(await stores.updateFile(owner(c), c.req.param("id"), c.req.param("file_id"), await body(c))));
  app.delete("/v1/vector_stores/:id/files/:file_id", async (c) => c.json(await stores.deleteFile(owner(c), c.req.param("id"), c.req.param("file_id"))));
  app.get("/v1/vector_stores/:id/files/:file_id/content", async (c) => c.json(await stores.fileContent(owner(c), c.req.param("id"), c.req.param("file_id"))));

  app.post("/v1/vector_stores/:id/file_batches", async (c) => c.json(await stores.createBatch(owner(c), c.req.param("id"), await body(c))));
  app.get("/v1/vector_stores/:id/file_batches/:batch_id", async (c) => c.json(await stores.retrieveBatch(owner(c), c.req.param("id"), c.req.param("batch_id"))));
  app.post("/v1/vector_stores/:id/file_batches/:batch_id/cancel", async (c) => c.json(await stores.cancelBatch(owner(c), c.req.param("id"), c.req.param("batch_id"))));
  app.get("/v1/vector_stores/:id/file_batches/:batch_id/files", async (c) => c.json(await stores.listBatchFiles(owner(c), c.req.param("id"), c.req.param("batch_id"), c.req.query())));
}
