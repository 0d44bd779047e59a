import { describe, expect, it } from "vitest";
import { isRouterSealed, openSummary, Sealer, sealSummary, SEAL_PREFIX } from "../../src/wire/seal.js";
import { keptUserMessages, supersededByCompaction } from "../../src/translate/chat/compaction.js";

describe("seal", () => {
  const a = new Sealer("a-shared-secret-0123456789");

  it("round-trips, with a fresh nonce each time and the version prefix", () => {
    const x = a.seal("hello summary");
    const y = a.seal("hello summary");
    expect(x.startsWith(SEAL_PREFIX)).toBe(true);
    expect(x).not.toBe(y);
    expect(a.open(x)).toBe("hello summary");
    expect(x).not.toContain("hello");
  });

  it("opens another instance's value with the same secret, not with another", () => {
    const x = a.seal("s");
    expect(new Sealer("a-shared-secret-0123456789").open(x)).toBe("s");
    expect(new Sealer("another-secret-0123456789").open(x)).toBeNull();
    expect(Sealer.ephemeral().open(x)).toBeNull();
  });

  it("rejects any altered byte, a truncated value and foreign formats", () => {
    const x = a.seal("some text to protect");
    const body = Buffer.from(x.slice(SEAL_PREFIX.length), "base64url");
    for (let i = 0; i < body.length; i++) {
      const t = Buffer.from(body);
      t[i] = t[i]! ^ 1;
      expect(a.open(SEAL_PREFIX + t.toString("base64url"))).toBeNull();
    }
    expect(a.open(x.slice(0, 20))).toBeNull();
    expect(a.open("gAAAAABsomething")).toBeNull();
    expect(isRouterSealed("gAAAA")).toBe(false);
  });

  it("seals a versioned summary payload", () => {
    const x = sealSummary(a, "the summary");
    expect(openSummary(a, x)).toBe("the summary");
    expect(openSummary(a, a.seal("not json"))).toBeNull();
    expect(openSummary(a, 42)).toBeNull();
  });
});

describe("compaction: kept user messages and what a compaction item supersedes", () => {
  const user = (id: string, text: string) => ({ id, type: "message", role: "user", content: [{ type: "input_text", text }] });
  it("keeps the newest user messages within the budget, cutting the oldest kept one", () => {
    const items = [user("u1", "a".repeat(40)), { id: "m1", type: "message", role: "assistant", content: "x" }, user("u2", "b".repeat(40)), user("u3", "c".repeat(20))];
    const kept = keptUserMessages(items, 15); // 60 characters: u3 and u2 exactly
    expect(kept.map((m) => m.id)).toEqual(["u2", "u3"]);
    const cut = keptUserMessages(items, 12); // 48 characters: u3 whole (20), then the last 28 of u2
    expect(cut.map((m) => m.id)).toEqual(["u2", "u3"]);
    expect(cut[0]!.content).toEqual([{ type: "input_text", text: "b".repeat(28) }]);
    expect(cut[1]).toBe(items[3]);
  });

  it("drops assistant turns, calls and older compaction items before the last compaction item, keeping system and user messages", () => {
    const items = [
      { id: "d", type: "message", role: "developer", content: "rules" },
      user("u1", "q1"),
      { id: "a1", type: "message", role: "assistant", content: "a1" },
      { id: "fc", type: "function_call", call_id: "c", name: "f", arguments: "{}" },
      { id: "c0", type: "compaction", encrypted_content: "x" },
      user("u2", "q2"),
      { id: "c1", type: "compaction", encrypted_content: "y" },
      { id: "a2", type: "message", role: "assistant", content: "after" },
    ];
    expect([...supersededByCompaction(items, 1000)!]).toEqual([2, 3, 4]);
    expect(supersededByCompaction(items.slice(0, 4), 1000)).toBeNull();
  });
});
