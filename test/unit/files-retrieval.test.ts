import { describe, expect, it } from "vitest";
import { attributeColumn, checkFilter, filterSql } from "../../src/files/retrieval/filters.js";
import { cosineScore, reciprocalRankFusion } from "../../src/files/retrieval/fusion.js";

describe("attribute filters as a LanceDB where-clause", () => {
  const year = attributeColumn("year", 1);
  const region = attributeColumn("region", "x");
  const columns = new Set([year, region]);

  it("names a column per key and value type, safe for any key", () => {
    expect(year).toBe(`a_${Buffer.from("year").toString("hex")}_n`);
    expect(attributeColumn("it's; DROP", true)).toMatch(/^a_[0-9a-f]+_b$/);
  });

  it("translates comparisons and compounds; quotes strings", () => {
    expect(filterSql(checkFilter({ type: "gte", key: "year", value: 2024 })!, columns)).toBe(`${year} >= 2024.0`);
    expect(filterSql(checkFilter({ type: "eq", key: "region", value: "o'hare" })!, columns)).toBe(`${region} = 'o''hare'`);
    expect(filterSql(checkFilter({ type: "ne", key: "region", value: "eu" })!, columns)).toBe(`(${region} IS NULL OR ${region} <> 'eu')`);
    expect(filterSql(checkFilter({ type: "and", filters: [{ type: "lt", key: "year", value: 2.5 }, { type: "in", key: "region", value: ["eu", "us"] }] })!, columns)).toBe(`(${year} < 2.5 AND (${region} IN ('eu', 'us')))`);
    expect(filterSql(checkFilter({ type: "nin", key: "region", value: ["eu"] })!, columns)).toBe(`(NOT COALESCE((${region} IN ('eu')), FALSE))`);
  });

  it("a key no file has matches nothing (ne and nin: everything)", () => {
    expect(filterSql(checkFilter({ type: "eq", key: "nope", value: "x" })!, columns)).toBe("FALSE");
    expect(filterSql(checkFilter({ type: "ne", key: "nope", value: "x" })!, columns)).toBe("TRUE");
    expect(filterSql(checkFilter({ type: "or", filters: [{ type: "eq", key: "nope", value: 1 }, { type: "eq", key: "year", value: 1 }] })!, columns)).toBe(`(FALSE OR ${year} = 1.0)`);
  });

  it("refuses malformed filters with a 400 naming the part", () => {
    expect(() => checkFilter({ type: "eq", key: "k" })).toThrow(expect.objectContaining({ status: 400, param: "filters.value" }));
    expect(() => checkFilter({ type: "and", filters: [] })).toThrow(expect.objectContaining({ param: "filters.filters" }));
    expect(() => checkFilter({ type: "between", key: "k", value: 1 })).toThrow(expect.objectContaining({ param: "filters.type" }));
    expect(() => checkFilter({ type: "in", key: "k", value: [] })).toThrow(expect.objectContaining({ param: "filters.value" }));
  });
});

describe("reciprocal-rank fusion", () => {
  it("scores in [0, 1]: 1 for first in every list, about 0.5 for first in one", () => {
    const fused = reciprocalRankFusion([["a", "b", "c"], ["a", "c"]], (x) => x);
    expect(fused[0]).toEqual({ item: "a", score: 1 });
    expect(fused.map((r) => r.item)).toEqual(["a", "c", "b"]);
    const single = reciprocalRankFusion([["x"], ["y"]], (s) => s);
    expect(single[0]!.score).toBeCloseTo(0.5, 5);
    for (const r of fused) expect(r.score).toBeGreaterThan(0), expect(r.score).toBeLessThanOrEqual(1);
  });

  it("cosine distance maps to a similarity in [0, 1]", () => {
    expect(cosineScore(0)).toBe(1);
    expect(cosineScore(0.25)).toBe(0.75);
    expect(cosineScore(1.5)).toBe(0);
  });
});
