import { describe, expect, it } from "vitest";
import { attributeColumn, checkFilter, filterSql } from "../../src/files/retrieval/filters.js";
import { cosineScore, reciprocalRankFusion } from "../../src/files/retrieval/fusion.js";
import { rewriteQuery } from "../../src/files/retrieval/rewrite.js";
import { checkSearch } from "../../src/files/retrieval/search.js";

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

  it("weighs each list: the heavier list's first wins, scores stay in [0, 1], a lone list's first scores 1", () => {
    const lists = [["v", "t"], ["t", "v"]];
    expect(reciprocalRankFusion(lists, (x) => x, [1, 1])[0]!.score).toBeCloseTo(reciprocalRankFusion(lists, (x) => x, [1, 1])[1]!.score, 9);
    expect(reciprocalRankFusion(lists, (x) => x, [3, 1]).map((r) => r.item)).toEqual(["v", "t"]);
    expect(reciprocalRankFusion(lists, (x) => x, [1, 3]).map((r) => r.item)).toEqual(["t", "v"]);
    for (const w of [[0.1, 5], [5, 0.1], [2, 2]]) for (const r of reciprocalRankFusion(lists, (x) => x, w)) expect(r.score).toBeGreaterThan(0), expect(r.score).toBeLessThanOrEqual(1);
    expect(reciprocalRankFusion([["only", "next"]], (x) => x, [0.25])[0]).toEqual({ item: "only", score: 1 });
    expect(reciprocalRankFusion([["a"], ["a"]], (x) => x, [2, 7])[0]!.score).toBe(1);
    expect(reciprocalRankFusion([["a"]], (x) => x, [0])).toEqual([]);
  });

  it("cosine distance maps to a similarity in [0, 1]", () => {
    expect(cosineScore(0)).toBe(1);
    expect(cosineScore(0.25)).toBe(0.75);
    expect(cosineScore(1.5)).toBe(0);
  });
});

describe("a search's ranking options and rewrite_query", () => {
  it("hybrid_search sets the fusion's weights (ranker none: the vector list alone); bad weights are 400s naming the field", () => {
    expect(checkSearch({ query: "q" }).weights).toEqual({ embedding: 1, text: 1 });
    expect(checkSearch({ query: "q", rankingOptions: { hybrid_search: { embedding_weight: 0.2, text_weight: 0.8 } } }).weights).toEqual({ embedding: 0.2, text: 0.8 });
    expect(checkSearch({ query: "q", rankingOptions: { ranker: "none", hybrid_search: { embedding_weight: 0, text_weight: 1 } } })).toMatchObject({ ranker: "vector", weights: { embedding: 1, text: 0 } });
    expect(() => checkSearch({ query: "q", rankingOptions: { hybrid_search: { embedding_weight: 0, text_weight: 0 } } })).toThrow(expect.objectContaining({ status: 400, param: "ranking_options.hybrid_search" }));
    expect(() => checkSearch({ query: "q", rankingOptions: { hybrid_search: { embedding_weight: Number.NaN, text_weight: 1 } } })).toThrow(expect.objectContaining({ param: "ranking_options.hybrid_search.embedding_weight" }));
  });

  it("rewrite_query keeps identifiers, quoted phrases and content words; drops the question's framing", () => {
    expect(rewriteQuery("What does error E-PAY-0413 mean?")).toBe("error E-PAY-0413 mean");
    expect(rewriteQuery("How many vacation days do employees get per year?")).toBe("vacation days employees per year");
    expect(rewriteQuery("How long is parental leave?")).toBe("parental leave");
    expect(rewriteQuery('Where is "the cost centre" for CC-4410 claims?')).toBe("the cost centre CC-4410 claims");
    expect(rewriteQuery("What pool size does PgBouncer use?")).toBe("pool size PgBouncer use");
    expect(rewriteQuery("certctl rotate --merchant")).toBe("certctl rotate merchant");
    expect(rewriteQuery("ff_checkout_")).toBe("ff_checkout");
    expect(rewriteQuery("what is it?")).toBe("what is it?");
    expect(checkSearch({ query: ["How long is parental leave?", "RL-429-QUOTA"], rewriteQuery: true }).queries).toEqual(["parental leave", "RL-429-QUOTA"]);
    expect(checkSearch({ query: "How long is parental leave?" }).queries).toEqual(["How long is parental leave?"]);
  });
});
