/**
 * `rewrite_query: true` on a vector store search: the natural-language query rewritten into the
 * terms a search should run, as OpenAI documents it ("rewrite the natural language query for
 * vector search"), and reported back in `search_query`.
 *
 * Deterministic, with no model call: question words, auxiliaries, pronouns, articles and
 * prepositions are dropped ("What does error E-PAY-0413 mean?" -> "error E-PAY-0413 mean"),
 * identifiers (anything with a digit, an inner `-`, `_`, `.`, `/` or `:`, or capitals after
 * the first letter) and quoted phrases are kept whole, and the rest keeps its order. A model
 * would rewrite better, but the only model file_search is given is an embedding model, and a
 * chat call per search would add its latency and cost to every search; this rewrite costs
 * nothing, never invents a term, and helps both BM25 (no filler words competing) and
 * embeddings (no question framing). A query with nothing left after it is kept as it was. Pure.
 */

const FILLER = new Set(
  (
    "a an the what which who whom whose when where why how is are was were be been being am do does did done doing have has had having " +
    "can could should would will shall may might must i me my we our us you your he she it its they them their this that these those " +
    "of to in on at by for from with about into over under as than then there here and or if so not no any some " +
    "please tell show give find explain know let get want need there's what's how's who's where's when's"
  ).split(" "),
);
/** After "how", these only frame the question ("how many", "how long"). */
const HOW_WORDS = new Set(["many", "much", "long", "often", "far", "old", "big", "large"]);

/** Whether a word is an identifier kept as written (a code, a path, a CamelCase name, a number). */
function isIdentifier(word: string): boolean {
  return /\d/.test(word) || /\w[-_./:]\w/.test(word) || /^.+[A-Z]/.test(word);
}

/** One query rewritten; the original when nothing would be left. */
export function rewriteQuery(query: string): string {
  const kept: string[] = [];
  // Quoted phrases first, whole; the rest word by word.
  const parts = query.match(/"[^"]+"|'[^']+'|\S+/g) ?? [];
  let afterHow = false;
  for (const raw of parts) {
    if (/^(["']).+\1$/.test(raw)) {
      kept.push(raw.slice(1, -1).trim());
      afterHow = false;
      continue;
    }
    const word = raw.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, "");
    const lower = word.toLowerCase();
    const framing = afterHow && HOW_WORDS.has(lower);
    afterHow = lower === "how";
    if (!word) continue;
    if (isIdentifier(word) || (!FILLER.has(lower) && !framing)) kept.push(word);
  }
  const out = kept.filter(Boolean).join(" ");
  return out || query.trim();
}
