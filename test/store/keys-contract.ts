import { describe, expect, it } from "vitest";
import type { StoredKey, Stores } from "../../src/store/index.js";

let ids = 0;
export const storedKey = (name: string, extra: Partial<StoredKey> = {}): StoredKey => ({
  id: `key_${process.pid}_${++ids}`,
  hash: `${ids}`.padStart(64, "a"),
  redacted_value: "sk-...abcd",
  name,
  role: "user",
  expires_at: null,
  metadata: {},
  created_at: 1_700_000_000 + ids,
  ...extra,
});

/** The key store part of the store contract (called from contract.ts). */
export function describeKeysContract(open: () => Promise<Stores>): void {
  describe("keys", () => {
    it("creates, gets, lists in creation order, updates the policy fields and revokes", async () => {
      const { keys } = await open();
      const a = storedKey("team-a", { models: ["local"], limits: { requests_per_minute: 5 } });
      const b = storedKey("team-b", { role: "admin", metadata: { owner: "ops" } });
      expect(await keys.create(b)).toBe("created");
      expect(await keys.create(a)).toBe("created");
      expect(await keys.get(a.id)).toEqual(a);
      expect(await keys.get("key_nope")).toBeNull();
      expect((await keys.list()).map((k) => k.name)).toEqual(["team-a", "team-b"]);

      const updated = await keys.update(a.id, { limits: { tokens_per_minute: 100 }, models: null, expires_at: 1_900_000_000, metadata: { team: "a" } });
      expect(updated).toEqual({ ...a, models: undefined, limits: { tokens_per_minute: 100 }, expires_at: 1_900_000_000, metadata: { team: "a" } });
      expect(await keys.get(a.id)).toEqual(JSON.parse(JSON.stringify(updated)));
      expect((await keys.get(a.id))!.hash).toBe(a.hash);
      expect(await keys.update(a.id, { expires_at: null })).toMatchObject({ expires_at: null });
      expect(await keys.update("key_nope", { role: "admin" })).toBeNull();

      expect(await keys.revoke(a.id)).toBe(true);
      expect(await keys.revoke(a.id)).toBe(false);
      expect(await keys.get(a.id)).toBeNull();
      expect((await keys.list()).map((k) => k.id)).toEqual([b.id]);
    });

    it("keeps names unique until the key is revoked", async () => {
      const { keys } = await open();
      const first = storedKey("same");
      expect(await keys.create(first)).toBe("created");
      expect(await keys.create(storedKey("same"))).toBe("name_taken");
      expect((await keys.list()).length).toBe(1);
      await keys.revoke(first.id);
      expect(await keys.create(storedKey("same"))).toBe("created");
    });

    it("changes its version and tells watchers on every change", async () => {
      const { keys } = await open();
      let told = 0;
      const stop = keys.watch(() => told++);
      // The watcher is subscribed once a change reaches it (a loaded cluster takes longer than a fixed delay).
      for (let n = 0; told === 0; n++) {
        expect(n).toBeLessThan(100);
        await keys.create(storedKey(`warm-up-${n}`));
        await new Promise((r) => setTimeout(r, 50));
      }
      await new Promise((r) => setTimeout(r, 100)); // the warm-up's last messages arrive
      told = 0;
      const v0 = await keys.version();
      const k = storedKey("watched");
      await keys.create(k);
      const v1 = await keys.version();
      await keys.update(k.id, { role: "admin" });
      const v2 = await keys.version();
      await keys.revoke(k.id);
      const v3 = await keys.version();
      expect(new Set([v0, v1, v2, v3]).size).toBe(4);
      await expect.poll(() => told).toBe(3);
      stop();
      await keys.create(storedKey("unwatched"));
      await new Promise((r) => setTimeout(r, 50));
      expect(told).toBe(3);
    });

    it("concurrent creates of one name: exactly one wins", async () => {
      const { keys } = await open();
      const results = await Promise.all(Array.from({ length: 10 }, () => keys.create(storedKey("race"))));
      expect(results.filter((r) => r === "created").length).toBe(1);
    });
  });
}
