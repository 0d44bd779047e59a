/**
 * The index's upkeep and the search's ranking options over the real parts (LanceDB on disk, the
 * demo backend's embeddings, the router's HTTP routes, the openai SDK): a file is found the moment
 * it is `completed` although its rows wait outside the indexes for a batched fold; a large store
 * gets its approximate vector index in the background and still finds what it found;
 * `ranking_options.hybrid_search` weighs the fusion; `rewrite_query` reports its rewrite.
 */
import { toFile } from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DemoBackend } from "../../src/demo/backend.js";
import type { Files } from "../../src/files/library.js";
import { demoBackend, filesConfig, tempStorage } from "../helpers/files.js";
import { startTestRouter, type TestRouter } from "../helpers/router.js";

const text = (name: string, body: string) => toFile(Buffer.from(body), name);
const FILLER = "The platform team keeps its services healthy with careful reviews, on-call rotations and runbooks. ";

describe("vector store search: batched index upkeep, the vector index, hybrid weights, rewrite_query", () => {
  let backend: DemoBackend;
  let router: TestRouter;
  let files: Files;
  const storage = tempStorage();

  beforeAll(async () => {
    backend = await demoBackend();
    // Four files indexed at once (their folds are shared); a 20-row store gets an HNSW index once idle (the test asks for it).
    router = await startTestRouter(
      { ...filesConfig(backend.url, storage.dir), tools: { file_search: { embedding_model: "emb", embedding_attempts: 2, indexing_concurrency: 4, vector_index_min_chunks: 20 } } },
      { files: { backoffMs: () => 0, upkeep: { idleBeforeVectorIndexMs: 600_000 } } },
    );
    files = router.runtime.files as unknown as Files;
  });
  afterAll(async () => {
    await files?.index.idle();
    await router?.close(500);
    await backend?.close();
    storage.cleanup();
  });

  it("LanceDB's BM25 misses rows written after its index until they are folded in (why a file is folded in before it is completed)", async () => {
    const lancedb = await import("@lancedb/lancedb");
    const db = await lancedb.connect(`${storage.dir}/control`);
    const table = await db.createTable("t", [{ id: "a", text: "The quorum flag QF-77 guards the ledger." }]);
    await table.createIndex("text", { config: lancedb.Index.fts() });
    // LanceDB 0.31 scans unindexed rows for BM25 only sometimes: with these two, neither is found.
    await table.add([
      { id: "b", text: "ledger quorum ledger quorum guards guards the ledger quorum." },
      { id: "c", text: "only the ledger here" },
    ]);
    const found = async () => (await table.search("ledger", "fts").select(["id", "_score"]).toArray()).map((r) => r.id as string).sort();
    expect(await found()).toEqual(["a"]);
    await table.optimize();
    expect(await found()).toEqual(["a", "b", "c"]);
    db.close();
  });

  it("every file of a batch indexed four at a time is found by BM25 alone the moment it is completed", async () => {
    const client = router.client;
    const vs = await client.vectorStores.create({ name: "fresh" });
    const names = Array.from({ length: 8 }, (_, i) => `notes-${i}.md`);
    const batch = await client.vectorStores.fileBatches.uploadAndPoll(vs.id, { files: await Promise.all(names.map((n, i) => text(n, `# Notes ${i}\n\n${FILLER.repeat(3)}Ticket TCK-${1000 + i} is open.`))) }, { pollIntervalMs: 20 });
    expect(batch.file_counts).toMatchObject({ completed: 8, failed: 0 });
    // Full text only: the demo vectors cannot find it for BM25.
    const bm25 = { hybrid_search: { embedding_weight: 0, text_weight: 1 } } as never;
    for (let i = 0; i < 8; i++) expect((await client.vectorStores.search(vs.id, { query: `TCK-${1000 + i}`, max_num_results: 1, ranking_options: bm25 })).data[0]?.filename).toBe(`notes-${i}.md`);
    expect(await files.index.indexState(vs.id)).toMatchObject({ unindexedRows: 0 });

    // One more file alone, searched right after uploadAndPoll.
    const last = await client.vectorStores.files.uploadAndPoll(vs.id, await text("pager.md", `# Pager\n\n${FILLER}Error ZX-9931-PAGER means the pager gateway dropped the page.`), { pollIntervalMs: 20 });
    expect(last.status).toBe("completed");
    expect((await client.vectorStores.search(vs.id, { query: "ZX-9931-PAGER", ranking_options: bm25 })).data[0]).toMatchObject({ file_id: last.id, filename: "pager.md" });
    // An attribute update rewrites the rows: still found by BM25 right after it.
    await client.vectorStores.files.update(last.id, { vector_store_id: vs.id, attributes: { team: "ops" } });
    expect((await client.vectorStores.search(vs.id, { query: "ZX-9931-PAGER", ranking_options: bm25, filters: { type: "eq", key: "team", value: "ops" } })).data[0]?.file_id).toBe(last.id);
  });

  it("a store past the threshold gets an HNSW vector index once idle; vector and hybrid search still find the file, with filters", async () => {
    const client = router.client;
    const vs = await client.vectorStores.create({ name: "large" });
    const body = (topic: string, n: number) => Array.from({ length: 60 }, (_, k) => `${topic} paragraph ${k}: ${topic} details number ${n * 100 + k}.`).join("\n");
    const ids: Record<string, string> = {};
    for (const [n, topic] of ["glacier", "volcano", "monsoon"].entries()) ids[topic] = (await client.files.create({ file: await text(`${topic}.md`, body(topic, n)), purpose: "assistants" })).id;
    const batch = await client.vectorStores.fileBatches.createAndPoll(vs.id, { file_ids: Object.values(ids), chunking_strategy: { type: "static", static: { max_chunk_size_tokens: 100, chunk_overlap_tokens: 0 } } }, { pollIntervalMs: 20 });
    expect(batch.file_counts.completed).toBe(3);
    await client.vectorStores.files.update(ids.volcano!, { vector_store_id: vs.id, attributes: { kind: "geo" } });

    const before = await files.index.indexState(vs.id);
    expect(before.rows).toBeGreaterThanOrEqual(20);
    expect(before.vectorIndex).toBe(false);
    await files.index.idle();
    expect(await files.index.indexState(vs.id)).toMatchObject({ rows: before.rows, unindexedRows: 0, vectorIndex: true });

    const vector = await client.vectorStores.search(vs.id, { query: "volcano details", ranking_options: { ranker: "none" }, max_num_results: 3 });
    expect(vector.data.map((d) => d.filename)).toEqual(["volcano.md", "volcano.md", "volcano.md"]);
    const hybrid = await client.vectorStores.search(vs.id, { query: "monsoon paragraph", max_num_results: 1 });
    expect(hybrid.data[0]!.filename).toBe("monsoon.md");
    const filtered = await client.vectorStores.search(vs.id, { query: "glacier details", filters: { type: "eq", key: "kind", value: "geo" }, ranking_options: { ranker: "none" } });
    expect(new Set(filtered.data.map((d) => d.filename))).toEqual(new Set(["volcano.md"]));
    // A file added after the build is folded into the HNSW index too and found.
    await client.vectorStores.files.uploadAndPoll(vs.id, await text("tundra.md", "tundra permafrost caribou tundra"), { pollIntervalMs: 20 });
    expect((await client.vectorStores.search(vs.id, { query: "tundra permafrost", ranking_options: { ranker: "none" }, max_num_results: 1 })).data[0]!.filename).toBe("tundra.md");
  });

  it("ranking_options.hybrid_search weighs the fusion; scores stay in [0, 1]; score_threshold applies; bad weights are 400s", async () => {
    const client = router.client;
    const vs = await client.vectorStores.create({ name: "weights" });
    // BM25 puts the file with the rare exact word first; the demo vectors favour the one sharing most words.
    const exact = await client.vectorStores.files.uploadAndPoll(vs.id, await text("exact.md", "The quorum flag QF-77 guards the ledger."), { pollIntervalMs: 20 });
    const near = await client.vectorStores.files.uploadAndPoll(vs.id, await text("near.md", "ledger quorum ledger quorum guards guards the ledger quorum."), { pollIntervalMs: 20 });
    const search = (hybrid_search: { embedding_weight: number; text_weight: number }, extra: Record<string, unknown> = {}) =>
      client.vectorStores.search(vs.id, { query: "QF-77 ledger quorum guards", ranking_options: { hybrid_search, ...extra } as never });

    const textOnly = await search({ embedding_weight: 0, text_weight: 1 });
    const embeddingOnly = await search({ embedding_weight: 1, text_weight: 0 });
    expect(textOnly.data[0]!.file_id).toBe(exact.id);
    expect(embeddingOnly.data[0]!.file_id).toBe(near.id);
    // One list alone: its first is 1, like a chunk both lists put first at equal weights.
    expect(textOnly.data[0]!.score).toBe(1);
    expect(embeddingOnly.data[0]!.score).toBe(1);
    // Leaning either way decides the order between the two.
    expect((await search({ embedding_weight: 1, text_weight: 4 })).data[0]!.file_id).toBe(exact.id);
    expect((await search({ embedding_weight: 4, text_weight: 1 })).data[0]!.file_id).toBe(near.id);
    for (const page of [textOnly, embeddingOnly, await search({ embedding_weight: 0.3, text_weight: 0.7 })]) for (const d of page.data) expect(d.score).toBeGreaterThan(0), expect(d.score).toBeLessThanOrEqual(1);
    // A threshold above the second's fused score keeps the first only.
    const weighted = await search({ embedding_weight: 1, text_weight: 4 });
    expect(weighted.data.length).toBe(2);
    const thresholded = await search({ embedding_weight: 1, text_weight: 4 }, { score_threshold: (weighted.data[0]!.score + weighted.data[1]!.score) / 2 });
    expect(thresholded.data.map((d) => d.file_id)).toEqual([exact.id]);

    await expect(search({ embedding_weight: 0, text_weight: 0 })).rejects.toMatchObject({ status: 400, param: "ranking_options.hybrid_search" });
    await expect(search({ embedding_weight: -1, text_weight: 1 })).rejects.toMatchObject({ status: 400, param: "ranking_options.hybrid_search.embedding_weight" });
    await expect(search({ text_weight: 1 } as never)).rejects.toMatchObject({ status: 400, code: "missing_required_parameter" });
  });

  it("rewrite_query searches the query's terms and reports them in search_query; without it the query is run as given", async () => {
    const client = router.client;
    const vs = await client.vectorStores.create({ name: "rewrite" });
    const file = await client.vectorStores.files.uploadAndPoll(vs.id, await text("payments.md", "Error E-PAY-0413 means the merchant certificate was rejected."), { pollIntervalMs: 20 });
    const asked = 'What does error E-PAY-0413 mean for the "merchant certificate"?';
    const rewritten = await client.vectorStores.search(vs.id, { query: asked, rewrite_query: true });
    expect(rewritten.data[0]!.file_id).toBe(file.id);
    const plain = await router.fetch(`/v1/vector_stores/${vs.id}/search`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ query: [asked, "How long is parental leave?"], rewrite_query: true }) });
    expect(((await plain.json()) as { search_query: string[] }).search_query).toEqual(["error E-PAY-0413 mean merchant certificate", "parental leave"]);
    const asIs = await router.fetch(`/v1/vector_stores/${vs.id}/search`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ query: asked }) });
    expect(((await asIs.json()) as { search_query: string[] }).search_query).toEqual([asked]);
  });
});
