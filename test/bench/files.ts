/**
 * `npm run bench:files`: what the Files and Vector Stores room costs and how well it finds.
 * Runs the room's own parts (parse, the tokenizer thread, the LanceDB index, hybrid search)
 * in this process, with the demo backend's deterministic embeddings (src/demo/embeddings.ts,
 * called in-process: a mock embedder, so the figures are the router's side alone).
 *
 * 1. Retrieval quality: the corpus of test/fixtures/file-search (questions whose answer is in
 *    exactly one file, some asking for exact identifiers, among distractor files that share
 *    their vocabulary), recall@5 and recall@1 by file for vector-only, full-text-only, hybrid,
 *    weighted hybrid and `rewrite_query`; then the same with the approximate vector index built.
 * 2. Ingestion throughput: synthetic documents parsed, chunked (800/400), embedded and indexed,
 *    into a store already holding 20k chunks, in chunks per second, with 1 and 4 files at once,
 *    each twice in one run: a fold of the rows into the indexes per file (as ingestion did) and
 *    folds shared by the files written meanwhile (as it does).
 * 3. Search latency (p50/p95 over 100 queries, hybrid and vector-only) at 10k and 100k chunks,
 *    exact, then with the HNSW index the upkeep builds past its threshold (its build time, and
 *    its recall@10 against the exact search), and the process's RSS after each.
 *
 * Flags: --sizes 10000,100000 --queries 100 --docs 200 --concurrency 1,4 --prefill 20000 --parts quality,ingestion,latency.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { demoEmbedding } from "../../src/demo/embeddings.js";
import { chunkText, AUTO_CHUNKING } from "../../src/files/ingest/chunk.js";
import type { Embedder } from "../../src/files/ingest/embed.js";
import { mimeOf, parseFile } from "../../src/files/ingest/parse.js";
import { searchStores, type SearchDeps } from "../../src/files/retrieval/search.js";
import { VectorIndex } from "../../src/files/retrieval/vector-index.js";
import { createLogger } from "../../src/ops/log.js";
import { createMetrics } from "../../src/ops/metrics.js";
import { MemoryFileStore } from "../../src/store/memory/files.js";
import type { RankingOptions } from "../../src/tools/file-search/library.js";
import { TRACING_OFF } from "../../src/tracing/index.js";

const { values: flags } = parseArgs({ options: { sizes: { type: "string" }, queries: { type: "string" }, docs: { type: "string" }, concurrency: { type: "string" }, prefill: { type: "string" }, parts: { type: "string" } } });
/** Which parts run: quality, ingestion, latency (all by default). */
const PARTS = new Set((flags.parts ?? "quality,ingestion,latency").split(","));
/** Files indexed at once in the ingestion runs (the router's `indexing_concurrency`, default 2). */
const CONCURRENCY = (flags.concurrency ?? "1,4").split(",").map(Number);
/** Chunks in the store before the ingestion runs write to it. */
const PREFILL = Number(flags.prefill ?? 20_000);
const SIZES = (flags.sizes ?? "10000,100000").split(",").map(Number);
const QUERIES = Number(flags.queries ?? 100);
const DOCS = Number(flags.docs ?? 200);

const embedder: Embedder = { embed: async (texts) => ({ vectors: texts.map(demoEmbedding), tokens: texts.reduce((n, t) => n + Math.ceil(t.length / 4), 0) }) };
const mb = () => Math.round(process.memoryUsage().rss / 1024 / 1024);
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const dir = mkdtempSync(join(tmpdir(), "rr-bench-files-"));
const index = new VectorIndex(join(dir, "index"));
/** The same directory with the vector index built from the first row (the quality corpus is small). */
const indexedAlways = new VectorIndex(join(dir, "index"), { vectorIndexMinRows: 0 });
const records = new MemoryFileStore();
const searchDeps: SearchDeps = { records, index, embedder, metrics: createMetrics({ collectDefault: false }), log: createLogger("silent"), tracing: TRACING_OFF };

async function attach(vs: string, fileId: string): Promise<void> {
  await records.putStoreFile({
    file: { id: fileId, object: "vector_store.file", created_at: 0, vector_store_id: vs, status: "completed", usage_bytes: 0, last_error: null, attributes: {}, chunking_strategy: AUTO_CHUNKING },
    owner: "",
    batch_id: null,
  });
}

function questions(): Array<{ q: string; file: string; kind: string }> {
  return JSON.parse(readFileSync(new URL("../fixtures/file-search/questions.json", import.meta.url), "utf8")) as Array<{ q: string; file: string; kind: string }>;
}
const loadQuestions = questions;

async function quality(): Promise<string[]> {
  const base = new URL("../fixtures/file-search/", import.meta.url);
  const questions = loadQuestions();
  const vs = "vs_quality";
  const deps = { ...searchDeps, index };
  for (const name of readdirSync(new URL("docs/", base))) {
    const bytes = readFileSync(new URL(`docs/${name}`, base));
    const text = await parseFile(bytes, mimeOf(name, undefined)!);
    // Small chunks, so a file is several chunks and the ranking has to find the right one.
    const chunks = await chunkText(text, { type: "static", static: { max_chunk_size_tokens: 100, chunk_overlap_tokens: 30 } });
    await index.addFile(vs, name, name, chunks.map((c) => ({ text: c.text, vector: demoEmbedding(c.text) })), null);
    await attach(vs, name);
  }
  const recall = async (rank: (q: string) => Promise<string[]>) => {
    const at5 = { all: 0, identifier: 0, natural: 0 };
    let at1 = 0;
    for (const { q, file, kind } of questions) {
      const files = [...new Set(await rank(q))].slice(0, 5);
      if (files.includes(file)) (at5.all++, at5[kind as "identifier" | "natural"]++);
      if (files[0] === file) at1++;
    }
    const n = (kind: string) => questions.filter((x) => x.kind === kind).length;
    return `${(at5.all / questions.length).toFixed(2)} (identifiers ${at5.identifier}/${n("identifier")}, questions ${at5.natural}/${n("natural")}) | ${(at1 / questions.length).toFixed(2)}`;
  };
  const viaSearch =
    (rankingOptions: RankingOptions, rewriteQuery = false) =>
    async (q: string) =>
      (await searchStores(deps, { owner: "", vectorStoreIds: [vs], query: q, maxNumResults: 20, rankingOptions, rewriteQuery })).hits.map((h) => h.file_id);
  const fullText = async (q: string) => (await index.search(vs, { text: q, limit: 20 })).map((r) => r.file_id);
  const rows = [
    `| vector only (\`ranker: none\`) | ${await recall(viaSearch({ ranker: "none" }))} |`,
    `| full text only (BM25) | ${await recall(fullText)} |`,
    `| hybrid (default: RRF of both, equal weights) | ${await recall(viaSearch({ ranker: "auto" }))} |`,
    `| hybrid, \`hybrid_search\` 1 : 3 (embedding : text) | ${await recall(viaSearch({ hybrid_search: { embedding_weight: 1, text_weight: 3 } }))} |`,
    `| hybrid, \`hybrid_search\` 3 : 1 | ${await recall(viaSearch({ hybrid_search: { embedding_weight: 3, text_weight: 1 } }))} |`,
    `| hybrid + \`rewrite_query\` | ${await recall(viaSearch({ ranker: "auto" }, true))} |`,
  ];
  // The same store with its approximate (HNSW) vector index: recall is not to drop.
  await indexedAlways.addFile(vs, "probe", "probe.txt", [{ text: "probe", vector: demoEmbedding("probe") }], null);
  await indexedAlways.removeFile(vs, "probe");
  await indexedAlways.idle();
  const state = await indexedAlways.indexState(vs);
  deps.index = indexedAlways;
  rows.push(`| vector only, HNSW index (${state.vectorIndex ? "built" : "NOT built"}) | ${await recall(viaSearch({ ranker: "none" }))} |`);
  rows.push(`| hybrid, HNSW index | ${await recall(viaSearch({ ranker: "auto" }))} |`);
  return rows;
}

const WORDS = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu cluster replica backup latency budget invoice refund ticket deploy canary rollback metric alert runbook schema index shard token vector search policy leave badge office".split(" ");
function syntheticText(seed: number, words: number): string {
  let x = seed * 2654435761;
  const out: string[] = [];
  for (let i = 0; i < words; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    out.push(WORDS[x % WORDS.length]! + (x % 7 === 0 ? `-${x % 1000}` : ""));
  }
  return out.join(" ");
}

/**
 * Ingests DOCS documents, `concurrency` at a time (the router's `indexing_concurrency`), each as
 * the indexing job does: parse, chunk, embed, write, and wait for its rows to be folded into the
 * indexes. `batched`: the upkeep's shared folds (a fold per group of files); otherwise a fold per
 * file, as ingestion did before.
 */
async function ingestion(batched: boolean, concurrency: number): Promise<string> {
  const vs = `vs_ingest_${batched ? "batched" : "each"}_${concurrency}`;
  const index = new VectorIndex(join(dir, "index"), { batchFolds: batched, vectorIndexMinRows: Number.MAX_SAFE_INTEGER });
  // A store that already holds PREFILL chunks: a fold's cost grows with the store.
  for (let f = 0; f < PREFILL / 1000; f++) {
    const texts = Array.from({ length: 1000 }, (_, i) => syntheticText(500_000 + f * 1000 + i, 60));
    await index.addFile(vs, `prefill-${f}`, `prefill-${f}.txt`, texts.map((t) => ({ text: t, vector: demoEmbedding(t) })), null);
  }
  let chunks = 0;
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    for (let d = next++; d < DOCS; d = next++) {
      const text = await parseFile(Buffer.from(syntheticText(d, 3000)), "text/plain");
      const pieces = await chunkText(text, AUTO_CHUNKING);
      const { vectors } = await embedder.embed(pieces.map((p) => p.text), new AbortController().signal);
      await index.addFile(vs, `file-${d}`, `doc-${d}.txt`, pieces.map((p, i) => ({ text: p.text, vector: vectors[i]! })), null);
      chunks += pieces.length;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const s = (performance.now() - started) / 1000;
  const { unindexedRows } = await index.indexState(vs);
  index.close();
  return `| ${batched ? "shared folds (after)" : "a fold per file (before)"} | ${concurrency} | ${PREFILL.toLocaleString("en")} + ${DOCS} / ${chunks} | ${(chunks / s).toFixed(0)} chunks/s (${(DOCS / s).toFixed(1)} documents/s) | ${unindexedRows} | ${mb()} MB |`;
}

async function latency(size: number): Promise<string[]> {
  const vs = `vs_lat_${size}`;
  const perFile = 1000;
  // Written through an index whose upkeep folds but builds no vector index, measured exact first.
  const exactOnly = new VectorIndex(join(dir, "index"), { vectorIndexMinRows: Number.MAX_SAFE_INTEGER });
  const write = async (f: number) => {
    const texts = Array.from({ length: perFile }, (_, i) => syntheticText(f * perFile + i, 60));
    await exactOnly.addFile(vs, `file-${f}`, `f${f}.txt`, texts.map((t) => ({ text: t, vector: demoEmbedding(t) })), null);
    await attach(vs, `file-${f}`);
  };
  // Four files at once, so their folds are shared.
  for (let f = 0; f < size / perFile; f += 4) await Promise.all([f, f + 1, f + 2, f + 3].filter((x) => x < size / perFile).map(write));
  await exactOnly.idle();
  const rows = await index.countRows(vs);
  const deps = { ...searchDeps, index };
  const query = (i: number) => syntheticText(900_000 + i, 6);
  const time = async (ranker: string) => {
    const ms: number[] = [];
    for (let i = 0; i < QUERIES; i++) {
      const t = performance.now();
      await searchStores(deps, { owner: "", vectorStoreIds: [vs], query: query(i), maxNumResults: 10, rankingOptions: { ranker } });
      ms.push(performance.now() - t);
    }
    return `${pct(ms, 50).toFixed(1)} / ${pct(ms, 95).toFixed(1)} ms`;
  };
  const top10 = async () => Promise.all(Array.from({ length: QUERIES }, async (_, i) => index.search(vs, { vector: demoEmbedding(query(i)), limit: 10 })));
  const out = [`| ${rows.toLocaleString("en")} | exact (flat) | ${await time("auto")} | ${await time("none")} | | ${mb()} MB |`];
  const exact = await top10();
  // What the upkeep does once the store passes its threshold: the HNSW build, then the same queries.
  const building = new VectorIndex(join(dir, "index"), { vectorIndexMinRows: 0 });
  const started = performance.now();
  await building.addFile(vs, "probe", "probe.txt", [{ text: "probe", vector: demoEmbedding("probe") }], null);
  await building.removeFile(vs, "probe");
  await building.idle();
  const built = (performance.now() - started) / 1000;
  const approx = await top10();
  // Recall against the exact top 10; the demo vectors of these synthetic texts tie a lot, so a
  // result as near as the exact 10th counts too (the tie-aware figure).
  let same = 0;
  let asNear = 0;
  approx.forEach((got, i) => {
    const want = exact[i]!;
    const ids = new Set(want.map((r) => r.id));
    const tenth = want[want.length - 1]?._distance ?? 0;
    for (const r of got) {
      if (ids.has(r.id)) same++;
      if ((r._distance ?? 2) <= tenth + 1e-6) asNear++;
    }
  });
  const n = QUERIES * 10;
  const state = await index.indexState(vs);
  out.push(
    `| ${rows.toLocaleString("en")} | HNSW (${state.vectorIndex ? `built in ${built.toFixed(0)} s` : "NOT built"}; recall@10 vs exact ${(same / n).toFixed(2)}, tie-aware ${(asNear / n).toFixed(2)}) | ${await time("auto")} | ${await time("none")} | | ${mb()} MB |`,
  );
  exactOnly.close();
  building.close();
  return out;
}

async function main(): Promise<void> {
  const warm = performance.now();
  await chunkText("warm up", AUTO_CHUNKING);
  console.log(`node ${process.version}, ${process.platform}/${process.arch}; RSS at start ${mb()} MB; the tokenizer thread's start (o200k_base, once per process, off the event loop): ${((performance.now() - warm) / 1000).toFixed(1)} s`);
  if (PARTS.has("quality")) {
    console.log("\n### Retrieval quality: recall@5 (the answer's file among the first five files) and recall@1, demo embeddings\n");
    console.log(`${questions().length} questions over ${readdirSync(new URL("../fixtures/file-search/docs/", import.meta.url)).length} files, chunks of 100 tokens\n`);
    console.log("| ranking | recall@5 | recall@1 |\n| --- | --- | --- |");
    for (const line of await quality()) console.log(line);
  }
  if (PARTS.has("ingestion")) {
    console.log("\n### Ingestion throughput (mock embedder), the same documents twice\n");
    console.log("| folds | files at once | chunks in the store + documents / their chunks | throughput | unindexed rows after | RSS |\n| --- | --- | --- | --- | --- | --- |");
    for (const concurrency of CONCURRENCY) for (const batched of [false, true]) console.log(await ingestion(batched, concurrency));
  }
  if (PARTS.has("latency")) {
    console.log("\n### Search latency (one store, one query, 10 results, BM25 index), p50 / p95\n");
    console.log("| chunks | vector search | hybrid | vector only | | RSS after |\n| --- | --- | --- | --- | --- | --- |");
    for (const size of SIZES) for (const line of await latency(size)) console.log(line);
  }
  index.close();
  indexedAlways.close();
  rmSync(dir, { recursive: true, force: true });
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    rmSync(dir, { recursive: true, force: true });
    process.exit(1);
  },
);
