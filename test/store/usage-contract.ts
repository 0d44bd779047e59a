import { describe, expect, it } from "vitest";
import type { Stores } from "../../src/store/index.js";

const row = (day: string, key: string, model: string, requests: number, input_tokens: number, output_tokens: number) => ({ day, key, model, requests, input_tokens, output_tokens });

/** The usage store part of the store contract (called from contract.ts). */
export function describeUsageContract(open: () => Promise<Stores>): void {
  describe("usage", () => {
    it("adds up per day, key and model; queries a day range, one key or all, in order", async () => {
      const { usage } = await open();
      await usage.record(row("2026-06-01", "team-b", "local", 1, 5, 2));
      await usage.record(row("2026-06-01", "team-a", "local", 1, 5, 2));
      await usage.record(row("2026-06-01", "team-a", "local", 1, 10, 3));
      await usage.record(row("2026-06-01", "team-a", "gpt-4.1", 1, 3, 4));
      await usage.record(row("2026-06-02", "team-a", "local", 0, 7, 1)); // a background job's tokens, its request counted when created
      await usage.record(row("2026-06-04", "", "local", 1, 0, 0));
      expect(await usage.query({ from: "2026-06-01", to: "2026-06-04" })).toEqual([
        row("2026-06-01", "team-a", "gpt-4.1", 1, 3, 4),
        row("2026-06-01", "team-a", "local", 2, 15, 5),
        row("2026-06-01", "team-b", "local", 1, 5, 2),
        row("2026-06-02", "team-a", "local", 0, 7, 1),
        row("2026-06-04", "", "local", 1, 0, 0),
      ]);
      expect(await usage.query({ key: "team-a", from: "2026-06-02", to: "2026-06-03" })).toEqual([row("2026-06-02", "team-a", "local", 0, 7, 1)]);
      expect(await usage.query({ key: "nobody", from: "2026-06-01", to: "2026-06-04" })).toEqual([]);
      expect(await usage.query({ from: "2026-06-05", to: "2026-06-04" })).toEqual([]);
    });

    it("concurrent records lose nothing", async () => {
      const { usage } = await open();
      await Promise.all(Array.from({ length: 50 }, () => usage.record(row("2026-07-01", "k", "m", 1, 2, 3))));
      expect(await usage.query({ from: "2026-07-01", to: "2026-07-01" })).toEqual([row("2026-07-01", "k", "m", 50, 100, 150)]);
    });
  });
}
