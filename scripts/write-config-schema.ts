// Regenerates config/router.schema.json from src/config/schema.ts: npm run schema
import { writeFileSync } from "node:fs";
import { routerJsonSchema } from "../src/config/json-schema.js";

writeFileSync(new URL("../config/router.schema.json", import.meta.url), `${JSON.stringify(routerJsonSchema(), null, 2)}\n`);
console.log("wrote config/router.schema.json");
