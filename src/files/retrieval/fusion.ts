/**
 * Hybrid ranking: the vector and the full-text (BM25) result lists fused by reciprocal rank
 * (RRF: each list gives a chunk weight / (K + rank)), which needs no calibration between cosine
 * distances and BM25 scores. The weights are `ranking_options.hybrid_search`'s
 * `embedding_weight` and `text_weight` (1 and 1 by default). The sum is divided by its largest
 * possible value (first in every list), so a score is in [0, 1]: 1 for a chunk both rankings
 * put first, about 0.5 for one only one of them found first at equal weights. Vector-only
 * scores (`ranker: none`) are the cosine similarity clamped to [0, 1]. Pure.
 */

/** RRF's rank constant (the value of the original paper and of most engines). */
export const RRF_K = 60;

export interface Ranked<T> {
  item: T;
  score: number;
}

/** Fuses ranked lists of items identified by `idOf`, best first; `weights[i]` (default 1) weighs list i. */
export function reciprocalRankFusion<T>(lists: T[][], idOf: (item: T) => string, weights: number[] = []): Array<Ranked<T>> {
  const weightOf = (i: number) => weights[i] ?? 1;
  const best = lists.reduce((sum, _, i) => sum + weightOf(i), 0) / (RRF_K + 1);
  if (!(best > 0)) return [];
  const scores = new Map<string, Ranked<T>>();
  for (const [i, list] of lists.entries()) {
    list.forEach((item, rank) => {
      const id = idOf(item);
      const add = weightOf(i) / (RRF_K + rank + 1);
      const seen = scores.get(id);
      if (seen) seen.score += add;
      else scores.set(id, { item, score: add });
    });
  }
  return [...scores.values()].map((r) => ({ item: r.item, score: Math.min(1, r.score / best) })).sort((a, b) => b.score - a.score);
}

/** A cosine distance (0..2) as a similarity score in [0, 1]. */
export function cosineScore(distance: number): number {
  return Math.max(0, Math.min(1, 1 - distance));
}
