/**
 * The demo backend's embeddings: deterministic vectors made by hashing a text's words and word
 * pairs into DEMO_EMBEDDING_DIM signed buckets (feature hashing), L2-normalised. Texts that
 * share words are near each other; nothing else is understood. Not a model: enough to show
 * file_search end to end and to measure the hybrid ranking (test/bench/files.ts) against a
 * weak embedder, which is what it must survive.
 */
export const DEMO_EMBEDDING_DIM = 256;
export const DEMO_EMBEDDING_MODEL = "demo-embedding";

const STOP = new Set(["the", "a", "an", "of", "to", "in", "and", "or", "is", "are", "was", "for", "on", "with", "what", "which", "how", "does", "do", "it", "by", "at", "be", "as", "that", "this"]);

/** FNV-1a of the feature: its bucket, and its sign from a higher bit. */
function bucket(feature: string): [number, number] {
  let h = 0x811c9dc5;
  for (let i = 0; i < feature.length; i++) h = Math.imul(h ^ feature.charCodeAt(i), 0x01000193);
  h >>>= 0;
  return [h % DEMO_EMBEDDING_DIM, (h >>> 16) & 1 ? 1 : -1];
}

export function demoEmbedding(text: string): number[] {
  const v = new Array<number>(DEMO_EMBEDDING_DIM).fill(0);
  const words = (text.toLowerCase().match(/[\p{L}\p{N}_-]+/gu) ?? []).filter((w) => !STOP.has(w));
  const add = (feature: string, weight: number) => {
    const [i, sign] = bucket(feature);
    v[i]! += sign * weight;
  };
  words.forEach((w, i) => {
    add(w, 1);
    if (i > 0) add(`${words[i - 1]} ${w}`, 0.5);
  });
  let sum = 0;
  for (const x of v) sum += x * x;
  const norm = Math.sqrt(sum) || 1;
  return v.map((x) => x / norm);
}

/** The answer of POST /v1/embeddings, as OpenAI lays it out. */
export function demoEmbeddingsAnswer(input: unknown, model: string): Record<string, unknown> {
  const texts = typeof input === "string" ? [input] : Array.isArray(input) ? input.map(String) : [];
  const tokens = texts.reduce((n, t) => n + Math.max(1, Math.ceil(t.length / 4)), 0);
  return {
    object: "list",
    data: texts.map((t, index) => ({ object: "embedding", index, embedding: demoEmbedding(t) })),
    model,
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  };
}
