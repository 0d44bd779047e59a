import { describe, expect, it } from "vitest";
import { canonicalJson, keyedFields } from "../../src/wire/canonical-json.js";

describe("canonicalJson: the bytes cache keys hash", () => {
  it("sorts keys at every depth, so key order never changes the text", () => {
    const a = { model: "m", input: [{ role: "user", content: [{ type: "input_text", text: "hi" }] }], tools: [{ type: "function", name: "f", parameters: { type: "object", properties: { b: { type: "string" }, a: { type: "number" } } } }] };
    const b = { tools: [{ parameters: { properties: { a: { type: "number" }, b: { type: "string" } }, type: "object" }, name: "f", type: "function" }], input: [{ content: [{ text: "hi", type: "input_text" }], role: "user" }], model: "m" };
    const text = '{"input":[{"content":[{"text":"hi","type":"input_text"}],"role":"user"}],"model":"m","tools":[{"name":"f","parameters":{"properties":{"a":{"type":"number"},"b":{"type":"string"}},"type":"object"},"type":"function"}]}';
    expect(canonicalJson(a)).toBe(text);
    expect(canonicalJson(b)).toBe(text);
    expect(JSON.parse(text)).toEqual(a);
  });

  it("writes values as JSON.stringify does: undefined members left out, undefined elements null, strings escaped, numeric keys sorted as strings", () => {
    expect(canonicalJson({ b: undefined, a: null })).toBe('{"a":null}');
    expect(canonicalJson({ a: undefined })).toBe("{}");
    expect(canonicalJson([undefined, 1, "x"])).toBe('[null,1,"x"]');
    expect(canonicalJson({ a: [], b: {}, c: [[], [{}]] })).toBe('{"a":[],"b":{},"c":[[],[{}]]}');
    expect(canonicalJson({ "q\"k": 'line\n"quoted" \u2028 é' })).toBe(JSON.stringify({ "q\"k": 'line\n"quoted" \u2028 é' }));
    expect(canonicalJson({ b: 1, 10: 2, 2: 3 })).toBe('{"10":2,"2":3,"b":1}');
    expect(canonicalJson(null)).toBe("null");
    expect(canonicalJson(undefined)).toBe("null");
    expect(canonicalJson(1.5)).toBe("1.5");
    expect(canonicalJson(true)).toBe("true");
  });

  it("keyedFields leaves out the unkeyed fields and null or undefined values", () => {
    expect(keyedFields({ model: "m", stream: true, user: null, top_p: undefined, temperature: 0 }, new Set(["stream"]))).toEqual({ model: "m", temperature: 0 });
  });
});
