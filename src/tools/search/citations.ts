import type { ResponseOutputText } from "openai/resources/responses/responses";
import type { SearchResult } from "./types.js";

type URLCitation = ResponseOutputText.URLCitation;

/** A markdown link whose target is a URL: `[label](url)`, one level of parentheses allowed in the URL (Wikipedia's). */
const MARKDOWN_LINK = /\[([^\[\]]*)\]\((https?:\/\/(?:[^\s()]|\([^\s()]*\))+)\)/g;
const BARE_URL = /https?:\/\/(?:[^\s<>"'`\[\]()]|\([^\s()]*\))+/g;
/** `[1]`, `[2, 3]`: result numbers as resultsForModel numbers them (a markdown link is not one). */
const NUMBER_MARKER = /\[(\d{1,3}(?:\s*,\s*\d{1,3})*)\](?!\()/g;
/** Markdown code: a fenced block (to its end, or the text's) or an inline span; `items[1]` there is code, not a citation. */
const CODE = /```[\s\S]*?(?:```|$)|`[^`\n]*`/g;

/**
 * The `url_citation` annotations of an answer: one for each place the text cites a result, by its
 * URL (bare, or as a markdown link's target: the annotation then spans the whole link) or by a
 * `[n]` marker naming result n (outside markdown code). The span is [start_index, end_index) in characters (Unicode code
 * points); the title is the result's. Sorted by position; URLs that match no result are not cited.
 */
export function urlCitations(text: string, results: SearchResult[]): URLCitation[] {
  if (results.length === 0 || text.length === 0) return [];
  const byUrl = new Map<string, SearchResult>();
  for (const r of results) if (!byUrl.has(urlKey(r.url))) byUrl.set(urlKey(r.url), r);
  const found: { start: number; end: number; result: SearchResult }[] = [];
  const taken: [number, number][] = [];
  const free = (start: number, end: number) => taken.every(([s, e]) => end <= s || start >= e);

  for (const m of text.matchAll(MARKDOWN_LINK)) {
    const result = byUrl.get(urlKey(m[2]!));
    if (!result) continue;
    const start = m.index;
    const end = start + m[0].length;
    found.push({ start, end, result });
    taken.push([start, end]);
  }
  for (const m of text.matchAll(BARE_URL)) {
    const url = trimTrailingPunctuation(m[0]);
    const start = m.index;
    const end = start + url.length;
    const result = byUrl.get(urlKey(url));
    if (!result || !free(start, end)) continue;
    found.push({ start, end, result });
    taken.push([start, end]);
  }
  for (const m of numberMarkers(text)) {
    if (!free(m.start, m.end)) continue;
    for (const n of m.numbers) {
      const result = results[n - 1];
      if (n >= 1 && result) found.push({ start: m.start, end: m.end, result });
    }
  }

  found.sort((a, b) => a.start - b.start);
  const index = codePointIndex(text);
  return found.map(({ start, end, result }) => ({
    type: "url_citation",
    url: result.url,
    title: result.title,
    start_index: index(start),
    end_index: index(end),
  }));
}

/**
 * The `[n]` / `[n, m]` markers of a text that cite results by number (outside markdown code; a
 * markdown link's `[label](url)` is not one), as UTF-16 spans [start, end) with the numbers they name.
 */
export function numberMarkers(text: string): { start: number; end: number; numbers: number[] }[] {
  if (!text.includes("[")) return [];
  const code = text.includes("`") ? [...text.matchAll(CODE)].map((m): [number, number] => [m.index, m.index + m[0].length]) : [];
  const out: { start: number; end: number; numbers: number[] }[] = [];
  for (const m of text.matchAll(NUMBER_MARKER)) {
    const start = m.index;
    const end = start + m[0].length;
    if (code.some(([s, e]) => start < e && end > s)) continue;
    out.push({ start, end, numbers: m[1]!.split(",").map((s) => Number(s.trim())) });
  }
  return out;
}

/** Sentence punctuation after a URL is not part of it; a closing parenthesis is, when the URL opened one. */
function trimTrailingPunctuation(url: string): string {
  let end = url.length;
  while (end > 0 && ".,;:!?'\"*_".includes(url[end - 1]!)) end--;
  return url.slice(0, end);
}

/** How two spellings of one URL compare: host case, a trailing slash and a fragment do not matter. */
function urlKey(url: string): string {
  try {
    const u = new URL(url);
    u.hash = "";
    return u.href.replace(/\/$/, "");
  } catch {
    return url.replace(/#.*$/, "").replace(/\/$/, "");
  }
}

/** UTF-16 offsets to code point offsets; the identity while the text has no astral characters. */
export function codePointIndex(text: string): (utf16: number) => number {
  if (!/[\uD800-\uDBFF]/.test(text)) return (i) => i;
  return (i) => {
    let n = 0;
    for (let k = 0; k < i; k++) {
      const c = text.charCodeAt(k);
      if (c >= 0xd800 && c <= 0xdbff && k + 1 < i) k++;
      n++;
    }
    return n;
  };
}
