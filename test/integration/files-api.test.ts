import OpenAI, { toFile } from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DemoBackend } from "../../src/demo/backend.js";
import { demoBackend, filesConfig, tempStorage, tinyPdf } from "../helpers/files.js";
import { startTestRouter, type TestRouter } from "../helpers/router.js";

/** The Files and Vector Stores API through the real openai SDK, over the demo backend's embeddings. */
describe("Files and Vector Stores API (memory store)", () => {
  let backend: DemoBackend;
  let router: TestRouter;
  let client: OpenAI;
  let other: OpenAI;
  const storage = tempStorage();

  beforeAll(async () => {
    backend = await demoBackend();
    router = await startTestRouter(
      { ...filesConfig(backend.url, storage.dir, { files: { storage: storage.dir, max_bytes: 64 * 1024 } }), server: { api_keys: [{ name: "team-a", key: "key-a" }, { name: "team-b", key: "key-b" }] } },
      { apiKey: "key-a", files: { backoffMs: () => 0 } },
    );
    client = router.client;
    other = new OpenAI({ baseURL: `${router.url}/v1`, apiKey: "key-b", maxRetries: 0 });
  });
  afterAll(async () => {
    await router?.close(500);
    await backend?.close();
    storage.cleanup();
  });

  const text = (name: string, body: string) => toFile(Buffer.from(body), name);

  it("uploads, lists, retrieves, downloads user_data, refuses assistants downloads, deletes", async () => {
    const data = await client.files.create({ file: await text("notes.txt", "hello user data"), purpose: "user_data" });
    expect(data).toMatchObject({ object: "file", bytes: 15, filename: "notes.txt", purpose: "user_data", status: "processed" });
    expect(data.id).toMatch(/^file-/);
    const asst = await client.files.create({ file: await text("a.md", "# title"), purpose: "assistants", expires_after: { anchor: "created_at", seconds: 3600 } });
    expect(asst.expires_at).toBe(asst.created_at + 3600);
    expect(await (await client.files.content(data.id)).text()).toBe("hello user data");
    await expect(client.files.content(asst.id)).rejects.toMatchObject({ status: 400 });
    expect((await client.files.retrieve(data.id)).filename).toBe("notes.txt");
    const listed = await client.files.list({ purpose: "user_data" });
    expect(listed.data.map((f) => f.id)).toContain(data.id);
    expect(listed.data.map((f) => f.id)).not.toContain(asst.id);
    // Another key sees none of it.
    await expect(other.files.retrieve(data.id)).rejects.toMatchObject({ status: 404 });
    await expect(other.files.delete(data.id)).rejects.toMatchObject({ status: 404 });
    expect((await other.files.list()).data).toEqual([]);
    expect(await client.files.delete(data.id)).toEqual({ id: data.id, object: "file", deleted: true });
    await expect(client.files.retrieve(data.id)).rejects.toMatchObject({ status: 404 });
  });

  it("refuses bad uploads: a type file_search cannot read for assistants, an empty file, no purpose, over files.max_bytes", async () => {
    await expect(client.files.create({ file: await toFile(Buffer.from([1, 2, 3]), "blob.bin", { type: "application/octet-stream" }), purpose: "assistants" })).rejects.toMatchObject({ status: 400, code: "unsupported_file" });
    // The same bytes for user_data are fine.
    expect((await client.files.create({ file: await toFile(Buffer.from([1, 2, 3]), "blob.bin"), purpose: "user_data" })).bytes).toBe(3);
    await expect(client.files.create({ file: await text("empty.txt", ""), purpose: "assistants" })).rejects.toMatchObject({ status: 400 });
    const form = new FormData();
    form.append("file", new Blob(["x"]), "x.txt");
    const noPurpose = await router.fetch("/v1/files", { method: "POST", headers: { authorization: "Bearer key-a" }, body: form });
    expect(noPurpose.status).toBe(400);
    expect(((await noPurpose.json()) as { error: unknown }).error).toMatchObject({ param: "purpose", type: "invalid_request_error" });
    await expect(client.files.create({ file: await text("big.txt", "y".repeat(64 * 1024 + 1)), purpose: "assistants" })).rejects.toMatchObject({ status: 413 });
  });

  it("uploadAndPoll indexes a file; search finds an exact identifier; attributes filter in the index", async () => {
    const vs = await client.vectorStores.create({ name: "docs", metadata: { team: "a" } });
    expect(vs).toMatchObject({ object: "vector_store", name: "docs", status: "completed", file_counts: { total: 0 }, usage_bytes: 0 });
    const a = await client.vectorStores.files.uploadAndPoll(vs.id, await text("billing.md", "# Billing\nRefunds are processed within 14 days. Error code ERR-BILL-4471 means the card was declined."), { pollIntervalMs: 50 });
    expect(a).toMatchObject({ object: "vector_store.file", status: "completed", last_error: null, vector_store_id: vs.id });
    expect(a.usage_bytes).toBeGreaterThan(0);
    const b = await client.vectorStores.files.uploadAndPoll(vs.id, await text("shipping.md", "# Shipping\nParcels leave the warehouse in Rotterdam every Tuesday by truck."), { pollIntervalMs: 50 });
    await client.vectorStores.files.update(b.id, { vector_store_id: vs.id, attributes: { region: "eu", year: 2024 } });
    await client.vectorStores.files.update(a.id, { vector_store_id: vs.id, attributes: { region: "us", year: 2023 } });

    const store = await client.vectorStores.retrieve(vs.id);
    expect(store.file_counts).toEqual({ in_progress: 0, completed: 2, failed: 0, cancelled: 0, total: 2 });
    expect(store.usage_bytes).toBe(a.usage_bytes + b.usage_bytes);

    const page = await client.vectorStores.search(vs.id, { query: "ERR-BILL-4471" });
    expect(page.data[0]).toMatchObject({ file_id: a.id, filename: "billing.md", attributes: { region: "us", year: 2023 } });
    expect(page.data[0]!.content[0]!.text).toContain("ERR-BILL-4471");
    for (const hit of page.data) expect(hit.score).toBeGreaterThanOrEqual(0), expect(hit.score).toBeLessThanOrEqual(1);

    const eu = await client.vectorStores.search(vs.id, { query: "ERR-BILL-4471 refunds", filters: { type: "eq", key: "region", value: "eu" } });
    expect(eu.data.map((h) => h.file_id)).toEqual([b.id]);
    const recent = await client.vectorStores.search(vs.id, { query: "parcels", filters: { type: "and", filters: [{ type: "gte", key: "year", value: 2024 }, { type: "in", key: "region", value: ["eu", "asia"] }] } });
    expect(recent.data.map((h) => h.file_id)).toEqual([b.id]);
    const none = await client.vectorStores.search(vs.id, { query: "parcels", filters: { type: "eq", key: "missing", value: "x" } });
    expect(none.data).toEqual([]);
    const vectorOnly = await client.vectorStores.search(vs.id, { query: "warehouse Rotterdam Tuesday", ranking_options: { ranker: "none" }, max_num_results: 1 });
    expect(vectorOnly.data.map((h) => h.file_id)).toEqual([b.id]);
    const strict = await client.vectorStores.search(vs.id, { query: "ERR-BILL-4471", ranking_options: { score_threshold: 0.99 } });
    expect(strict.data.every((h) => h.score >= 0.99)).toBe(true);

    const content = await client.vectorStores.files.content(a.id, { vector_store_id: vs.id });
    expect(content.data.map((c) => c.text).join("")).toContain("Refunds are processed");
    const completed = await client.vectorStores.files.list(vs.id, { filter: "completed" });
    expect(completed.data.map((f) => f.id).sort()).toEqual([a.id, b.id].sort());

    // Another key: the store is not found, nor can it search it.
    await expect(other.vectorStores.retrieve(vs.id)).rejects.toMatchObject({ status: 404 });
    await expect(other.vectorStores.search(vs.id, { query: "x" })).rejects.toMatchObject({ status: 404 });

    // A deleted file leaves every index that held it.
    await client.files.delete(a.id);
    const after = await client.vectorStores.search(vs.id, { query: "ERR-BILL-4471" });
    expect(after.data.map((h) => h.file_id)).not.toContain(a.id);
    await expect(client.vectorStores.files.retrieve(a.id, { vector_store_id: vs.id })).rejects.toMatchObject({ status: 404 });
    expect((await client.vectorStores.retrieve(vs.id)).file_counts.total).toBe(1);
    expect(await client.vectorStores.delete(vs.id)).toEqual({ id: vs.id, object: "vector_store.deleted", deleted: true });
  });

  it("fileBatches.uploadAndPoll indexes HTML, JSON, code and PDF files", async () => {
    const vs = await client.vectorStores.create({ name: "mixed", chunking_strategy: { type: "static", static: { max_chunk_size_tokens: 100, chunk_overlap_tokens: 20 } } });
    const files = [
      await toFile(Buffer.from("<html><head><script>var hidden = 'SCRIPT-ONLY';</script></head><body><h1>Onboarding</h1><p>Badge number QX-7731 opens door four.</p></body></html>"), "page.html"),
      await toFile(Buffer.from(JSON.stringify({ service: "ledger", port: 7443 })), "config.json"),
      await toFile(Buffer.from("def rotate_keys():\n    return 'KEYROT-55'\n"), "keys.py"),
      await toFile(tinyPdf("The PDF says the vault code is VAULT-9081."), "vault.pdf", { type: "application/pdf" }),
    ];
    const batch = await client.vectorStores.fileBatches.uploadAndPoll(vs.id, { files }, { pollIntervalMs: 50 });
    expect(batch).toMatchObject({ object: "vector_store.files_batch", status: "completed", vector_store_id: vs.id, file_counts: { completed: 4, failed: 0, total: 4 } });
    const listed = await client.vectorStores.fileBatches.listFiles(batch.id, { vector_store_id: vs.id });
    expect(listed.data).toHaveLength(4);
    for (const [query, filename] of [["QX-7731", "page.html"], ["ledger 7443", "config.json"], ["KEYROT-55", "keys.py"], ["VAULT-9081", "vault.pdf"]] as const) {
      const page = await client.vectorStores.search(vs.id, { query, max_num_results: 2 });
      expect(page.data[0]?.filename, query).toBe(filename);
    }
    const html = await client.vectorStores.search(vs.id, { query: "SCRIPT-ONLY hidden", max_num_results: 5 });
    expect(html.data.some((h) => h.content[0]!.text.includes("SCRIPT-ONLY"))).toBe(false);
  });

  it("answers OpenAI's 404s and 400s: unknown store, unknown file attached, a search without a query", async () => {
    await expect(client.vectorStores.retrieve("vs_nope")).rejects.toMatchObject({ status: 404 });
    await expect(client.vectorStores.create({ file_ids: ["file-nope"] })).rejects.toMatchObject({ status: 404, param: "file_ids[0]" });
    const vs = await client.vectorStores.create({});
    await expect(client.vectorStores.files.create(vs.id, { file_id: "file-nope" })).rejects.toMatchObject({ status: 404 });
    await expect(client.vectorStores.search(vs.id, {} as never)).rejects.toMatchObject({ status: 400, param: "query" });
    await expect(client.vectorStores.search(vs.id, { query: "" })).rejects.toMatchObject({ status: 400 });
    await expect(client.vectorStores.search(vs.id, { query: "x", filters: { type: "eq", key: "k" } as never })).rejects.toMatchObject({ status: 400 });
    await expect(client.vectorStores.create({ chunking_strategy: { type: "static", static: { max_chunk_size_tokens: 50, chunk_overlap_tokens: 0 } } })).rejects.toMatchObject({ status: 400 });
    // Another key's file cannot be attached.
    const mine = await other.files.create({ file: await text("b.txt", "team b"), purpose: "assistants" });
    await expect(client.vectorStores.files.create(vs.id, { file_id: mine.id })).rejects.toMatchObject({ status: 404 });
    const search = await client.vectorStores.search(vs.id, { query: "anything" });
    expect(search.data).toEqual([]);
  });

  it("a file that cannot be parsed, or whose embedding model is down, ends failed with last_error", async () => {
    const vs = await client.vectorStores.create({ name: "bad" });
    const broken = await client.vectorStores.files.uploadAndPoll(vs.id, await toFile(Buffer.from("%PDF-1.4 not really"), "broken.pdf"), { pollIntervalMs: 50 });
    expect(broken).toMatchObject({ status: "failed", last_error: { code: "invalid_file" } });
    const badText = await client.vectorStores.files.uploadAndPoll(vs.id, await toFile(Buffer.from([0xff, 0xfe, 0x00, 0xd8]), "latin.txt"), { pollIntervalMs: 50 });
    expect(badText).toMatchObject({ status: "failed", last_error: { code: "invalid_file" } });
    expect((await client.vectorStores.retrieve(vs.id)).file_counts).toMatchObject({ failed: 2, in_progress: 0 });

    router.runtime.applyConfig({ ...router.runtime.config, tools: { ...router.runtime.config.tools, file_search: { ...router.runtime.config.tools.file_search, embedding_model: "dead-emb" } } });
    try {
      const down = await client.vectorStores.files.uploadAndPoll(vs.id, await text("ok.txt", "perfectly fine text"), { pollIntervalMs: 50 });
      expect(down).toMatchObject({ status: "failed", last_error: { code: "server_error" } });
      expect(down.last_error!.message).toMatch(/embedding model/);
      // A hybrid search still answers (from full text); a vector-only one is a 503.
      const hybrid = await client.vectorStores.search(vs.id, { query: "perfectly" });
      expect(hybrid.data).toEqual([]);
      const vectorOnly = await client.vectorStores.search(vs.id, { query: "fine", ranking_options: { ranker: "none" } }).catch((err: { status: number }) => err);
      expect([502, 503]).toContain((vectorOnly as { status: number }).status);
    } finally {
      router.runtime.applyConfig({ ...router.runtime.config, tools: { ...router.runtime.config.tools, file_search: { ...router.runtime.config.tools.file_search, embedding_model: "emb" } } });
    }
  });

  it("serves the FileLibrary contract the responses path uses", async () => {
    const lib = router.runtime.files!;
    const f = await client.files.create({ file: await text("input.txt", "for input_file"), purpose: "user_data" });
    expect(await lib.readFile("team-a", f.id)).toMatchObject({ id: f.id, filename: "input.txt", mime: "text/plain", bytes: Buffer.from("for input_file") });
    await expect(lib.readFile("team-b", f.id)).rejects.toMatchObject({ status: 404 });
    const vs = await client.vectorStores.create({ file_ids: [(await client.files.create({ file: await text("k.txt", "the launch code is ZX-1"), purpose: "assistants" })).id] });
    await expect(lib.assertVectorStores("team-b", [vs.id])).rejects.toMatchObject({ status: 404 });
    await lib.assertVectorStores("team-a", [vs.id]);
    for (let i = 0; i < 100 && (await client.vectorStores.retrieve(vs.id)).status !== "completed"; i++) await new Promise((r) => setTimeout(r, 50));
    const out = await lib.search({ owner: "team-a", vectorStoreIds: [vs.id], query: "ZX-1" });
    expect(out.queries).toEqual(["ZX-1"]);
    expect(out.embeddingTokens).toBeGreaterThan(0);
    expect(out.hits[0]).toMatchObject({ filename: "k.txt", vector_store_id: vs.id });
  });

  it("counts files, bytes, chunks, failures and search latency in /metrics", async () => {
    const text = await (await router.fetch("/metrics")).text();
    const value = (re: RegExp) => Number(text.match(re)?.[1] ?? "NaN");
    expect(value(/^responses_router_files_uploaded_total\{purpose="assistants"\} (\d+)/m)).toBeGreaterThan(3);
    expect(value(/^responses_router_file_bytes_uploaded_total\{purpose="user_data"\} (\d+)/m)).toBeGreaterThan(10);
    expect(value(/^responses_router_vector_store_files_indexed_total\{outcome="completed"\} (\d+)/m)).toBeGreaterThan(5);
    expect(value(/^responses_router_vector_store_chunks_indexed_total (\d+)/m)).toBeGreaterThan(5);
    expect(value(/^responses_router_vector_store_indexing_failures_total\{code="invalid_file"\} (\d+)/m)).toBe(2);
    expect(value(/^responses_router_vector_store_indexing_failures_total\{code="server_error"\} (\d+)/m)).toBe(1);
    expect(value(/^responses_router_file_search_duration_seconds_count\{ranker="hybrid"\} (\d+)/m)).toBeGreaterThan(5);
    expect(value(/^responses_router_embedding_tokens_total\{use="query"\} (\d+)/m)).toBeGreaterThan(0);
  });
});
