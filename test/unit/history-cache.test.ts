import { describe, expect, it } from "vitest";
import { HistoryCache, heldInput } from "../../src/store/history-cache.js";
import type { Item } from "../../src/wire/types.js";

const msg = (id: string, text = "x".repeat(90)): Item => ({ id, type: "message", role: "user", content: text });
const bytes = (items: Item[]) => JSON.stringify(items).length - 2;

/** Holds a linear chain of `n` turns (one input, one output each) and returns the ids. */
function holdChain(cache: HistoryCache, tag: string, n: number): string[] {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const id = `resp_${tag}_${i}`;
    const added = [msg(`in_${tag}_${i}`), msg(`out_${tag}_${i}`)];
    cache.hold(tag, cache.held(tag), ids.at(-1) ?? null, added, { id, meta: `m${i}`, inputs: 1, outputs: 1 }, bytes(added), "0");
    ids.push(id);
  }
  return ids;
}

describe("history cache", () => {
  it("a linear chain appends to one array (no copy per turn) and every record it names reads its own prefix", () => {
    const cache = new HistoryCache(1_000_000);
    holdChain(cache, "a", 3);
    const before = cache.held("a")!;
    cache.hold("a", before, "resp_a_2", [msg("in_a_3"), msg("out_a_3")], { id: "resp_a_3", meta: "m3", inputs: 1, outputs: 1 }, 200, "0");
    const after = cache.held("a")!;
    expect(after.items).toBe(before.items);
    expect(after.items.map((i) => i.id)).toEqual(["in_a_0", "out_a_0", "in_a_1", "out_a_1", "in_a_2", "out_a_2", "in_a_3", "out_a_3"]);
    const second = after.links.find((l) => l.id === "resp_a_1")!;
    expect(heldInput(after, second)).toEqual({ input: [msg("in_a_0"), msg("out_a_0"), msg("in_a_1")], output: [msg("out_a_1")] });
  });

  it("a fork copies the prefix it builds on; an earlier snapshot still reads what it named", () => {
    const cache = new HistoryCache(1_000_000);
    const ids = holdChain(cache, "a", 4);
    const snapshot = cache.held("a")!;
    cache.hold("a", snapshot, ids[1]!, [msg("fork_in"), msg("fork_out")], { id: "resp_fork", meta: "f", inputs: 1, outputs: 1 }, 200, "0");
    const forked = cache.held("a")!;
    expect(forked.items).not.toBe(snapshot.items);
    expect(forked.items.map((i) => i.id)).toEqual(["in_a_0", "out_a_0", "in_a_1", "out_a_1", "fork_in", "fork_out"]);
    expect(forked.links.map((l) => l.id)).toEqual([ids[0], ids[1], "resp_fork"]);
    expect(heldInput(snapshot, snapshot.links[3]!).input.map((i) => i.id)).toEqual(["in_a_0", "out_a_0", "in_a_1", "out_a_1", "in_a_2", "out_a_2", "in_a_3"]);
    // A record the snapshot does not name is not held.
    cache.hold("a", forked, "resp_unknown", [msg("z")], { id: "resp_z", meta: "z", inputs: 1, outputs: 0 }, 100, "0");
    expect(cache.held("a")!.links.at(-1)!.id).toBe("resp_fork");
  });

  it("counts the JSON bytes it holds and drops the least recently used chains past its bound; items are frozen", () => {
    const cache = new HistoryCache(6_000);
    holdChain(cache, "a", 10);
    expect(cache.totalBytes).toBe(cache.held("a")!.links.at(-1)!.bytes);
    expect(cache.totalBytes).toBe(10 * bytes([msg("in_a_0"), msg("out_a_0")]));
    holdChain(cache, "b", 10);
    cache.held("a"); // a is the most recent
    holdChain(cache, "c", 10);
    expect(cache.totalBytes).toBeLessThanOrEqual(6_000);
    expect(cache.held("b")).toBeNull();
    expect(cache.held("a")).not.toBeNull();
    expect(Object.isFrozen(cache.held("a")!.items[0])).toBe(true);
    // A chain larger than the bound is not held at all.
    holdChain(cache, "d", 40);
    expect(cache.held("d")).toBeNull();
    expect(cache.totalBytes).toBeLessThanOrEqual(6_000);
  });

  it("names at most 8 records of a chain: the newest", () => {
    const cache = new HistoryCache(1_000_000);
    const ids = holdChain(cache, "a", 20);
    expect(cache.held("a")!.links.map((l) => l.id)).toEqual(ids.slice(-8));
  });
});
