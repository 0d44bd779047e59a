import { z } from "zod";
import { routerConfigSchema } from "./schema.js";

/**
 * The JSON Schema of router.yaml as ops write it (input side: durations as
 * "30s" strings or seconds, defaults optional), generated from the zod schema so
 * the two never drift. `config/router.schema.json` is this, checked by a test.
 */
export function routerJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(routerConfigSchema, { io: "input", unrepresentable: "any" }) as Record<string, unknown>;
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    $id: "https://github.com/responses-router/responses-router/config/router.schema.json",
    title: "responses-router config (router.yaml)",
    ...Object.fromEntries(Object.entries(schema).filter(([k]) => k !== "$schema")),
  };
}
