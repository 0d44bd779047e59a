import type { Hono } from "hono";
import type { ConversationsService } from "../../responses/conversations/conversations.js";
import type { AppEnv } from "../context.js";
import { includeQuery, readJsonBody } from "../context.js";

/** /v1/conversations routes (the Conversations API): parse, call the service, serialise. */
export function conversationsRoutes(app: Hono<AppEnv>, service: ConversationsService): void {
  app.post("/v1/conversations", async (c) => c.json(await service.create(await readJsonBody(c, true), c.get("owner"))));
  app.get("/v1/conversations/:id", async (c) => c.json(await service.retrieve(c.req.param("id"), c.get("owner"))));
  app.post("/v1/conversations/:id", async (c) => c.json(await service.update(c.req.param("id"), await readJsonBody(c), c.get("owner"))));
  app.delete("/v1/conversations/:id", async (c) => c.json(await service.remove(c.req.param("id"), c.get("owner"))));

  app.post("/v1/conversations/:id/items", async (c) => c.json(await service.addItems(c.req.param("id"), await readJsonBody(c), c.get("owner"), includeQuery(c))));
  app.get("/v1/conversations/:id/items", async (c) =>
    c.json(
      await service.listItems(c.req.param("id"), c.get("owner"), {
        after: c.req.query("after"),
        limit: c.req.query("limit"),
        order: c.req.query("order"),
        include: includeQuery(c),
      }),
    ),
  );
  app.get("/v1/conversations/:id/items/:item_id", async (c) => c.json(await service.getItem(c.req.param("id"), c.req.param("item_id"), c.get("owner"), includeQuery(c))));
  app.delete("/v1/conversations/:id/items/:item_id", async (c) => c.json(await service.deleteItem(c.req.param("id"), c.req.param("item_id"), c.get("owner"))));
}
