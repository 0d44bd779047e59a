import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { configReferenceMarkdown, undescribedKeys } from "../../src/config/reference.js";

describe("docs/configuration.md, generated from the schema", () => {
  it("is the page the schema renders today (run `npm run docs` after changing src/config/schema.ts)", () => {
    const committed = readFileSync(new URL("../../docs/configuration.md", import.meta.url), "utf8");
    expect(committed).toBe(configReferenceMarkdown());
  });

  it("every key has a .describe() text, so the page explains every key", () => {
    expect(undescribedKeys()).toEqual([]);
  });

  it("shows a key's default as written in router.yaml, durations included", () => {
    const page = configReferenceMarkdown();
    expect(page).toContain("| `endpoints[].timeouts.first_byte` | duration | `5m` |");
    expect(page).toContain("| `storage.ttl` | duration | `30d` |");
    expect(page).toContain("| `endpoints[].kind` | `openai` \\| `chat` \\| `anthropic` | required |");
    expect(page).toContain("| `models.<name>.endpoints[].upstream_model` | string | unset |");
  });
});
