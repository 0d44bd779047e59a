import type { Hono } from "hono";
import type { InputTokensService } from "../../responses/items/input-tokens.js";
import type { Runtime } from "../../runtime/runtime.js";
import type { AppEnv } from "../context.js";
import { ClientLink, labelModel, readJsonBody } from "../context.js";

/** POST /v1/responses/input_tokens; the header `x-router-token-count` says how it was counted. */
export function inputTokensRoutes(app: Hono<AppEnv>, service: InputTokensService, rt: Runtime): void {
  app.post("/v1/responses/input_tokens", async (c) => {
    const body = await readJsonBody(c);
    const stats = c.get("stats");
    labelModel(stats, rt.config.models, body);
    const link = new ClientLink(c);
    try {
      const out = await service.count(body, { owner: c.get("owner"), key: c.get("apiKey") ?? null, signal: link.signal });
      stats.endpoint = out.endpoint;
      c.header("x-router-token-count", out.source);
      return c.json(out.result);
    } finally {
      link.detach();
    }
  });
}
