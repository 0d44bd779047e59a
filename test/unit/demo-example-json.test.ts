import { describe, expect, it } from "vitest";
import { z } from "zod";
import { zodTextFormat } from "openai/helpers/zod";
import { exampleFor } from "../../src/demo/example-json.js";
import { answerFor } from "../../src/demo/backend.js";

describe("the demo backend's example JSON", () => {
  it("satisfies the schema the openai SDK sends for a zod type (nested objects, enums, nullable, arrays, bounds)", () => {
    const Step = z.object({ explanation: z.string(), output: z.string() });
    const Answer = z.object({
      steps: z.array(Step).min(2),
      final_answer: z.string().min(8),
      confidence: z.number().min(0).max(1),
      attempts: z.number().int().gt(3),
      kind: z.enum(["math", "other"]),
      note: z.string().nullable(),
      when: z.iso.datetime(),
      flags: z.object({ checked: z.boolean(), source: z.literal("demo") }),
    });
    const format = zodTextFormat(Answer, "answer");
    const value = exampleFor(format.schema);
    expect(Answer.parse(value)).toMatchObject({ kind: "math", flags: { checked: true, source: "demo" } });
    expect((value as { steps: unknown[] }).steps).toHaveLength(2);
    expect((value as { attempts: number }).attempts).toBe(4);
  });

  it("follows $ref into $defs and picks the non-null branch of anyOf, as pydantic writes them", () => {
    const schema = {
      $defs: { City: { type: "object", properties: { name: { type: "string" }, population: { anyOf: [{ type: "integer", minimum: 10 }, { type: "null" }] } }, required: ["name", "population"], additionalProperties: false } },
      type: "object",
      properties: { cities: { type: "array", items: { $ref: "#/$defs/City" } }, capital: { $ref: "#/$defs/City" } },
      required: ["cities", "capital"],
      additionalProperties: false,
    };
    expect(exampleFor(schema)).toEqual({ cities: [{ name: "demo", population: 10 }], capital: { name: "demo", population: 10 } });
  });

  it("ends a recursive schema instead of recursing forever", () => {
    const schema = { type: "object", properties: { name: { type: "string" }, children: { type: "array", items: { $ref: "#" } } }, required: ["name", "children"] };
    const value = exampleFor(schema) as { name: string; children: unknown[] };
    expect(value.name).toBe("demo");
    let depth = 0;
    for (let node = value; node.children.length > 0; node = node.children[0] as typeof value) depth++;
    expect(depth).toBeLessThan(10);
  });

  it("answers a json_schema request with that JSON, and still calls a tool first when one is offered", () => {
    const schema = { type: "object", properties: { city: { type: "string" }, days: { type: "integer", minimum: 1, maximum: 7 } }, required: ["city", "days"], additionalProperties: false };
    const user = [{ role: "user", content: "Plan a trip" }];
    const json = answerFor({ messages: user, response_format: { type: "json_schema", json_schema: { schema } } });
    expect(json).toEqual({ kind: "text", text: '{"city":"demo","days":1}', json: true });
    const tool = { type: "function", function: { name: "lookup", parameters: { type: "object", properties: { place: { type: "object", properties: { lat: { type: "number" } }, required: ["lat"] } }, required: ["place"] } } };
    expect(answerFor({ messages: user, tools: [tool], response_format: { type: "json_schema", json_schema: { schema } } })).toEqual({ kind: "tool", name: "lookup", args: '{"place":{"lat":1}}' });
    const afterTool = [...user, { role: "assistant", tool_calls: [] }, { role: "tool", content: "sunny" }];
    expect(answerFor({ messages: afterTool, tools: [tool], response_format: { type: "json_schema", json_schema: { schema } } })).toMatchObject({ kind: "text", json: true });
    expect(JSON.parse((answerFor({ messages: user, response_format: { type: "json_object" } }) as { text: string }).text)).toMatchObject({ you_said: "Plan a trip" });
  });
});
