// Regenerates config/router.schema.json and docs/configuration.md from src/config/schema.ts:
// npm run schema (or npm run docs; both write both, so neither can go stale alone).
import { writeFileSync } from "node:fs";
import { routerJsonSchema } from "../src/config/json-schema.js";
import { configReferenceMarkdown } from "../src/config/reference.js";

writeFileSync(new URL("../config/router.schema.json", import.meta.url), `${JSON.stringify(routerJsonSchema(), null, 2)}\n`);
writeFileSync(new URL("../docs/configuration.md", import.meta.url), configReferenceMarkdown());
console.log("wrote config/router.schema.json and docs/configuration.md");
