import { describe, expect, it } from "vitest";
import { OutputSchemas, type JsonValidator } from "../../src/tools/mcp/output-schemas.js";

/** A compiler that counts what it is given: its validator accepts objects with every `required` key. */
function counting() {
  const compiled: unknown[] = [];
  const compile = (schema: Record<string, unknown>): JsonValidator => {
    compiled.push(schema);
    const required = (schema.required as string[] | undefined) ?? [];
    return (input) => (required.every((k) => k in (input as object)) ? { valid: true } : { valid: false, errorMessage: `needs ${required.join(", ")}` });
  };
  return { compiled, compile };
}

const weather = () => ({ type: "object", properties: { celsius: { type: "number" } }, required: ["celsius"] });

describe("a session's tool output schemas", () => {
  it("a schema listed again (new objects, same text) is compiled once, however many listings", () => {
    const { compiled, compile } = counting();
    const s = new OutputSchemas(compile);
    for (let i = 0; i < 100; i++) {
      s.clear();
      s.add("weather", weather());
      s.add("echo", undefined);
    }
    expect(compiled).toHaveLength(1);
    expect(s.get("weather")!({ celsius: 3 })).toEqual({ valid: true });
    expect(s.get("weather")!({})).toMatchObject({ valid: false, errorMessage: "needs celsius" });
    expect(s.get("echo")).toBeUndefined();
  });

  it("a changed schema is compiled again; a tool no longer listed, or listed without one, has none", () => {
    const { compiled, compile } = counting();
    const s = new OutputSchemas(compile);
    s.clear();
    s.add("weather", weather());
    s.add("gone", weather());
    s.clear();
    s.add("weather", { ...weather(), required: ["celsius", "city"] });
    expect(compiled).toHaveLength(3);
    expect(s.get("weather")!({ celsius: 1 })).toMatchObject({ valid: false });
    expect(s.get("gone")).toBeUndefined();
    s.clear();
    s.add("weather", null);
    s.add("weather2", [1]);
    expect(s.get("weather")).toBeUndefined();
    expect(s.get("weather2")).toBeUndefined();
  });

  it("a schema dropped for a listing and listed again later is compiled again (only the last listing's are kept)", () => {
    const { compiled, compile } = counting();
    const s = new OutputSchemas(compile);
    s.clear();
    s.add("weather", weather());
    s.clear();
    s.clear();
    s.add("weather", weather());
    expect(compiled).toHaveLength(2);
  });
});
