import { describe, expect, it } from "vitest";
import { BoundedLru } from "../../src/store/memory/lru.js";

describe("BoundedLru (the memory store's responses, conversations and item indexes)", () => {
  it("evicts the least recently used entry; a read makes an entry recent", () => {
    const lru = new BoundedLru({ maxEntries: 3, maxBytes: 1_000 });
    lru.set("a", "1", 60_000);
    lru.set("b", "2", 60_000);
    lru.set("c", "3", 60_000);
    expect(lru.get("a")).toBe("1"); // b is now the oldest
    lru.set("d", "4", 60_000);
    expect(lru.get("b")).toBeNull();
    expect([lru.get("a"), lru.get("c"), lru.get("d")]).toEqual(["1", "3", "4"]);
    expect(lru.size).toBe(3);
  });

  it("keeps within maxBytes, oldest first, but never drops the entry just written", () => {
    const lru = new BoundedLru({ maxEntries: 100, maxBytes: 10 });
    lru.set("a", "xxxx", 60_000);
    lru.set("b", "yyyy", 60_000);
    lru.set("c", "zzzz", 60_000); // 12 bytes: a goes
    expect([lru.get("a"), lru.get("b"), lru.get("c")]).toEqual([null, "yyyy", "zzzz"]);
    expect(lru.totalBytes).toBe(8);
    lru.set("big", "0123456789ABCDEF", 60_000); // alone over the limit: everything else goes, it stays
    expect([lru.get("b"), lru.get("c"), lru.get("big")]).toEqual([null, null, "0123456789ABCDEF"]);
    expect(lru.totalBytes).toBe(16);
  });

  it("drops expired entries from the oldest end, and an expired entry reads as missing", () => {
    let now = 0;
    const lru = new BoundedLru({ maxEntries: 100, maxBytes: 1_000 }, () => now);
    lru.set("short", "1", 10);
    lru.set("long", "2", 1_000);
    now = 20;
    lru.set("new", "3", 1_000); // the expired oldest goes on this write
    expect(lru.size).toBe(2);
    expect(lru.delete("long")).toBe(true);
    lru.set("x", "4", 5);
    now = 30;
    expect(lru.get("x")).toBeNull();
    expect(lru.delete("new")).toBe(true);
    expect(lru.size).toBe(0);
    expect(lru.totalBytes).toBe(0);
  });

  it("rewriting a key replaces its value and bytes; clear empties it", () => {
    const lru = new BoundedLru({ maxEntries: 2, maxBytes: 1_000 });
    lru.set("a", "1", 60_000);
    lru.set("b", "2", 60_000);
    lru.set("a", "111", 60_000); // a is now the newest
    lru.set("c", "3", 60_000); // b goes
    expect([lru.get("a"), lru.get("b"), lru.get("c")]).toEqual(["111", null, "3"]);
    expect(lru.totalBytes).toBe(4);
    lru.clear();
    expect([lru.size, lru.totalBytes, lru.get("a")]).toEqual([0, 0, null]);
    lru.set("d", "4", 60_000);
    expect(lru.get("d")).toBe("4");
  });

  it("over a long run of writes, reads and deletes keeps exactly what a plain recency list keeps", () => {
    const max = 50;
    const lru = new BoundedLru({ maxEntries: max, maxBytes: 1_000_000 });
    let order: string[] = []; // oldest first
    let seed = 7;
    const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    for (let i = 0; i < 20_000; i++) {
      const key = `k${rand(120)}`;
      const op = rand(10);
      if (op < 5) {
        lru.set(key, `v${i}`, 60_000);
        order = [...order.filter((k) => k !== key), key];
        if (order.length > max) order.shift();
      } else if (op < 9) {
        const hit = lru.get(key) !== null;
        expect(hit).toBe(order.includes(key));
        if (hit) order = [...order.filter((k) => k !== key), key];
      } else {
        lru.delete(key);
        order = order.filter((k) => k !== key);
      }
    }
    expect(lru.size).toBe(order.length);
    // Read oldest first, every kept key is there (and the recency order stays the model's).
    for (const key of order) expect(lru.get(key)).not.toBeNull();
    for (let k = 0; k < 120; k++) if (!order.includes(`k${k}`)) expect(lru.get(`k${k}`)).toBeNull();
    // Filled up with newer entries, each further write evicts the model's oldest next.
    for (let f = order.length; f < max; f++) lru.set(`filler-${f}`, "x", 60_000);
    order.forEach((key, i) => {
      lru.set(`fresh-${i}`, "x", 60_000);
      expect(lru.get(key)).toBeNull();
    });
    expect(lru.size).toBe(max);
  });
});
