import { describe, expect, it } from "vitest";
import { AUTO_CHUNKING, chunkText, readChunkingStrategy } from "../../src/files/ingest/chunk.js";

describe("chunking (o200k_base tokens, on the tokenizer thread)", () => {
  it("cuts static windows of max tokens that overlap by chunk_overlap_tokens", async () => {
    const words = Array.from({ length: 1000 }, (_, i) => `w${i}`).join(" ");
    const chunks = await chunkText(words, { type: "static", static: { max_chunk_size_tokens: 100, chunk_overlap_tokens: 50 } });
    expect(chunks.every((c) => c.tokens <= 100)).toBe(true);
    expect(chunks.length).toBeGreaterThan(10);
    // Neighbours share text: the second starts inside the first.
    const tail = chunks[0]!.text.split(" ").slice(-5).join(" ");
    expect(chunks[1]!.text).toContain(tail);
    expect(chunks.at(-1)!.text.endsWith("w999")).toBe(true);
  });

  it("auto is 800/400; a short text is one chunk; empty text none", async () => {
    expect(readChunkingStrategy({ type: "auto" })).toEqual(AUTO_CHUNKING);
    expect(readChunkingStrategy(undefined)).toEqual(AUTO_CHUNKING);
    expect(await chunkText("one short line", AUTO_CHUNKING)).toEqual([{ text: "one short line", tokens: 3 }]);
    expect(await chunkText("   ", AUTO_CHUNKING)).toEqual([]);
  });

  it("refuses what OpenAI refuses", () => {
    expect(() => readChunkingStrategy({ type: "static", static: { max_chunk_size_tokens: 99, chunk_overlap_tokens: 0 } })).toThrow(/max_chunk_size_tokens/);
    expect(() => readChunkingStrategy({ type: "static", static: { max_chunk_size_tokens: 200, chunk_overlap_tokens: 101 } })).toThrow(/chunk_overlap_tokens/);
    expect(() => readChunkingStrategy({ type: "fancy" })).toThrow(/type/);
  });
});
