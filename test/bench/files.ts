/**
 * `npm run bench:files`: what the Files and Vector Stores room costs and how well it finds.
 * Runs the room's own parts (parse, the tokenizer thread, the LanceDB index, hybrid search)
 * in this process, with the demo backend's deterministic embeddings (src/demo/embeddings.ts,
 * called in-process: a mock embedder, so the figures are the router's side alone).
 *
 * 1. Retrieval quality: the corpus of test/fixtures/file-search (questions whose answer is in
 *    exactly one file, some asking for exact identifiers), recall@5 by file for vector-only,
 *    full-text-only and hybrid ranking.
 * 2. Ingestion throughput: synthetic documents parsed, chunked (800/400), embedded and indexed,
 *    in chunks per second.
 * 3. Search latency (p50/p95 over 100 queries, hybrid and vector-only) at 10k and 100k chunks,
 *    and the process's RSS after each.
 *
 * Flags: --sizes 10000,100000 --queries 100 --docs 200.
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
import { TRACING_OFF } from "../../src/tracing/index.js";

const { values: flags } = parseArgs({ options: { sizes: { type: "string" }, queries: { type: "string" }, docs: { type: "string" } } });
const SIZES = (flags.sizes ?? "10000,100000").split(",").map(Number);
const QUERIES = Number(flags.queries ?? 100);
const DOCS = Number(flags.docs ?? 200);

const embedder: Embedder = { embed: async (texts) => ({ vectors: texts.map(demoEmbedding), tokens: texts.reduce((n, t) => n + Math.ceil(t.length / 4), 0) }) };
const mb = () => Math.round(process.memoryUsage().rss / 1024 / 1024);
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const dir = mkdtempSync(join(tmpdir(), "rr-bench-files-"));
const index = new VectorIndex(join(dir, "index"));
const records = new MemoryFileStore();
const deps: SearchDeps = { records, index, embedder, metrics: createMetrics({ collectDefault: false }), log: createLogger("silent"), tracing: TRACING_OFF };

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
  const viaSearch = (ranker: string) => async (q: string) => (await searchStores(deps, { owner: "", vectorStoreIds: [vs], query: q, maxNumResults: 20, rankingOptions: { ranker } })).hits.map((h) => h.file_id);
  const fullText = async (q: string) => (await index.search(vs, { text: q, limit: 20 })).map((r) => r.file_id);
  return [
    `| vector only (\`ranker: none\`) | ${await recall(viaSearch("none"))} |`,
    `| full text only (BM25) | ${await recall(fullText)} |`,
    `| hybrid (default: RRF of both) | ${await recall(viaSearch("auto"))} |`,
  ];
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

async function ingestion(): Promise<string> {
  const vs = "vs_ingest";
  let chunks = 0;
  const started = performance.now();
  for (let d = 0; d < DOCS; d++) {
    const text = await parseFile(Buffer.from(syntheticText(d, 3000)), "text/plain");
    const pieces = await chunkText(text, AUTO_CHUNKING);
    const { vectors } = await embedder.embed(pieces.map((p) => p.text), new AbortController().signal);
    await index.addFile(vs, `file-${d}`, `doc-${d}.txt`, pieces.map((p, i) => ({ text: p.text, vector: vectors[i]! })), null);
    chunks += pieces.length;
  }
  const s = (performance.now() - started) / 1000;
  return `${DOCS} documents of 3000 words (${chunks} chunks of 800 tokens, 400 overlap): ${(chunks / s).toFixed(0)} chunks/s, ${(DOCS / s).toFixed(1)} documents/s (parse, tokenizer thread, embed in-process, LanceDB write), RSS ${mb()} MB`;
}

async function latency(size: number): Promise<string> {
  const vs = `vs_lat_${size}`;
  const perFile = 1000;
  for (let f = 0; f < size / perFile; f++) {
    const texts = Array.from({ length: perFile }, (_, i) => syntheticText(f * perFile + i, 60));
    await index.addFile(vs, `file-${f}`, `f${f}.txt`, texts.map((t) => ({ text: t, vector: demoEmbedding(t) })), null);
    await attach(vs, `file-${f}`);
  }
  const rows = await index.countRows(vs);
  const time = async (ranker: string) => {
    const ms: number[] = [];
    for (let i = 0; i < QUERIES; i++) {
      const t = performance.now();
      await searchStores(deps, { owner: "", vectorStoreIds: [vs], query: syntheticText(900_000 + i, 6), maxNumResults: 10, rankingOptions: { ranker } });
      ms.push(performance.now() - t);
    }
    return `p50 ${pct(ms, 50).toFixed(1)} ms, p95 ${pct(ms, 95).toFixed(1)} ms`;
  };
  return `| ${rows.toLocaleString("en")} | ${await time("auto")} | ${await time("none")} | ${mb()} MB |`;
}

async function main(): Promise<void> {
  const warm = performance.now();
  await chunkText("warm up", AUTO_CHUNKING);
  console.log(`node ${process.version}, ${process.platform}/${process.arch}; RSS at start ${mb()} MB; the tokenizer thread's start (o200k_base, once per process, off the event loop): ${((performance.now() - warm) / 1000).toFixed(1)} s`);
  console.log("\n### Retrieval quality: recall@5 (the answer's file among the first five files), demo embeddings\n");
  console.log(`${questions().length} questions over ${readdirSync(new URL("../fixtures/file-search/docs/", import.meta.url)).length} files, chunks of 100 tokens\n`);
  console.log("| ranking | recall@5 | recall@1 |\n| --- | --- | --- |");
  for (const line of await quality()) console.log(line);
  console.log("\n### Ingestion throughput (mock embedder)\n");
  console.log(await ingestion());
  console.log("\n### Search latency (one store, one query, 10 results, flat vector search + BM25 index)\n");
  console.log("| chunks | hybrid | vector only | RSS after |\n| --- | --- | --- | --- |");
  for (const size of SIZES) console.log(await latency(size));
  index.close();
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
