/**
 * `expires_after` of files (`anchor: created_at`, seconds) and vector stores (`anchor:
 * last_active_at`, days), over the router's own Files on the memory store and on Redis, with
 * the openai SDK as the client and the Files room's clock injected (`files.clock`) so a test can
 * move days on at once:
 * - `expires_at` as OpenAI reports it, moved on by each use of a store;
 * - an expired file is gone (404 on every read, out of lists, searches and stores) and its
 *   chunks are out of every index; an expired store reports `expired` and refuses search, the
 *   file_search tool and new files with OpenAI's 400, and stays listed;
 * - enforced on read, and by the periodic sweep for what nobody reads.
 */
import OpenAI, { toFile } from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DemoBackend } from "../../src/demo/backend.js";
import type { Files } from "../../src/files/library.js";
import { demoBackend, filesConfigWithChat, tempStorage } from "../helpers/files.js";
import { chatCompletion, startMockUpstream, type MockUpstream } from "../helpers/mock-upstream.js";
import { startRedis, type RedisServerHandle } from "../helpers/redis-server.js";
import { startTestRouter, type TestRouter } from "../helpers/router.js";
import { waitUntil } from "../helpers/wait.js";

const DAY = 86_400;

describe.each(["memory", "redis"] as const)("expires_after (%s store)", (kind) => {
  let redis: RedisServerHandle | undefined;
  let backend: DemoBackend;
  let llm: MockUpstream;
  let router: TestRouter;
  let client: OpenAI;
  let library: Files;
  const storage = tempStorage();
  /** The Files room's clock, unix seconds. */
  let now = Math.floor(Date.now() / 1000);
  const poll = { pollIntervalMs: 30 };
  const upload = async (name: string, text: string, expires_after?: { anchor: "created_at"; seconds: number }) => client.files.create({ file: await toFile(Buffer.from(text), name), purpose: "assistants", ...(expires_after ? { expires_after } : {}) });

  beforeAll(async () => {
    backend = await demoBackend();
    llm = await startMockUpstream();
    llm.setDefault("/chat/completions", { kind: "json", body: chatCompletion("ok") });
    if (kind === "redis") redis = await startRedis();
    const store = redis ? { storage: { redis_url: redis.url, prefix: `rrexp:${process.pid}:` } } : {};
    router = await startTestRouter(filesConfigWithChat(backend.url, storage.dir, llm.url, store), { files: { backoffMs: () => 0, clock: () => now, sweepEveryMs: 100 } });
    client = router.client;
    library = router.runtime.files as Files;
  });
  afterAll(async () => {
    await router?.close(500);
    await Promise.all([backend?.close(), llm?.close(), redis?.stop()]);
    storage.cleanup();
  });

  it("a file's expires_at is created_at + seconds; once past, the file is gone everywhere and its chunks with it", async () => {
    const vs = await client.vectorStores.create({ name: "kb" });
    const file = await upload("runbook.md", "ERR-4711 means the pump stalled. Run pumpctl reset.", { anchor: "created_at", seconds: 3600 });
    const keep = await upload("keep.md", "ERR-4711 is also listed in the keep file.");
    expect(file.expires_at).toBe(file.created_at + 3600);
    expect((await client.files.retrieve(file.id)).expires_at).toBe(file.created_at + 3600);
    await client.vectorStores.files.createAndPoll(vs.id, { file_id: file.id }, poll);
    await client.vectorStores.files.createAndPoll(vs.id, { file_id: keep.id }, poll);
    expect((await client.vectorStores.search(vs.id, { query: "ERR-4711" })).data.map((h) => h.file_id)).toContain(file.id);

    now += 3599;
    expect((await client.files.retrieve(file.id)).id).toBe(file.id); // not yet
    now += 1;
    const found = await client.vectorStores.search(vs.id, { query: "ERR-4711 pumpctl" });
    expect(found.data.map((h) => h.file_id)).toEqual([keep.id]);
    for (const read of [() => client.files.retrieve(file.id), () => client.files.delete(file.id), () => client.vectorStores.files.retrieve(file.id, { vector_store_id: vs.id })]) {
      expect(((await read().catch((e: unknown) => e)) as { status: number }).status).toBe(404);
    }
    expect((await client.files.list()).data.map((f) => f.id)).not.toContain(file.id);
    expect((await client.vectorStores.files.list(vs.id)).data.map((f) => f.id)).toEqual([keep.id]);
    expect(await library.index.fileChunks(vs.id, file.id)).toEqual([]);
    expect(await router.runtime.stores.files.getFile(file.id)).toBeNull();
    const byId = (await client.responses.create({ model: "local", input: [{ role: "user", content: [{ type: "input_file", file_id: file.id }] }] }).catch((e: unknown) => e)) as { status: number; param: string };
    expect([byId.status, byId.param]).toEqual([404, "input[0].content[0].file_id"]);
  });

  it("a vector store expires days after its last use: expires_at moves on with each use, then status expired and OpenAI's 400 on use", async () => {
    const vs = await client.vectorStores.create({ name: "short", expires_after: { anchor: "last_active_at", days: 1 } });
    expect(vs.expires_after).toEqual({ anchor: "last_active_at", days: 1 });
    expect(vs.expires_at).toBe(vs.last_active_at! + DAY);
    const file = await upload("notes.md", "The door code is 7391.");
    await client.vectorStores.files.createAndPoll(vs.id, { file_id: file.id }, poll);

    now += DAY - 10;
    await client.vectorStores.search(vs.id, { query: "door code" }); // a use: the expiry moves on
    await waitUntil("last_active_at moved", async () => (await client.vectorStores.retrieve(vs.id)).last_active_at === now);
    const used = await client.vectorStores.retrieve(vs.id);
    expect([used.status, used.expires_at]).toEqual(["completed", now + DAY]);

    now += DAY;
    const expired = await client.vectorStores.retrieve(vs.id);
    expect(expired.status).toBe("expired");
    expect((await client.vectorStores.list()).data.find((s) => s.id === vs.id)?.status).toBe("expired");
    const message = `Vector store ${vs.id} is expired. Create a new vector store and try again.`;
    const refusals = [
      () => client.vectorStores.search(vs.id, { query: "door code" }),
      () => client.responses.create({ model: "local", input: "code?", tools: [{ type: "file_search", vector_store_ids: [vs.id] }] }),
      () => client.vectorStores.files.create(vs.id, { file_id: file.id }),
      () => client.vectorStores.fileBatches.create(vs.id, { file_ids: [file.id] }),
      () => client.vectorStores.update(vs.id, { expires_after: { anchor: "last_active_at", days: 7 } }),
    ];
    llm.requests.length = 0;
    for (const use of refusals) {
      const err = (await use().catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
      expect(err).toBeInstanceOf(OpenAI.BadRequestError);
      expect([err.status, (err.error as { message: string }).message, err.type]).toEqual([400, message, "invalid_request_error"]);
    }
    expect(llm.requests).toHaveLength(0);
    expect((await client.vectorStores.update(vs.id, { name: "renamed" })).status).toBe("expired"); // still there, still expired
    expect((await client.vectorStores.delete(vs.id)).deleted).toBe(true);
  });

  it("the periodic sweep removes expired files and empties expired stores that nobody reads", async () => {
    const vs = await client.vectorStores.create({ name: "swept", expires_after: { anchor: "last_active_at", days: 1 } });
    const other = await client.vectorStores.create({ name: "lasting" });
    const shortLived = await upload("temp.md", "Temporary note TMP-1.", { anchor: "created_at", seconds: 7200 });
    const lasting = await upload("long.md", "Lasting note LONG-2.");
    await client.vectorStores.files.createAndPoll(other.id, { file_id: shortLived.id }, poll);
    await client.vectorStores.files.createAndPoll(vs.id, { file_id: lasting.id }, poll);
    expect(await library.index.fileChunks(other.id, shortLived.id)).not.toEqual([]);
    expect(await library.index.fileChunks(vs.id, lasting.id)).not.toEqual([]);

    now += DAY + 1; // both expire; no API call reads them from here on
    const records = router.runtime.stores.files;
    await waitUntil("the sweep removed the expired file", async () => (await records.getFile(shortLived.id)) === null);
    // Waited for through the store's own list (a look into the index while the sweep drops the table would race the drop).
    await waitUntil("the sweep emptied the expired store", async () => !(await records.expiredVectorStores(now, 10_000)).includes(vs.id));
    expect(await library.index.fileChunks(vs.id, lasting.id)).toEqual([]);
    expect(await library.index.fileChunks(other.id, shortLived.id)).toEqual([]);
    expect(await records.getStoreFile(other.id, shortLived.id)).toBeNull();
    expect(await records.getFile(lasting.id)).not.toBeNull(); // no expiry of its own
    expect((await client.vectorStores.retrieve(vs.id)).status).toBe("expired");
    expect((await client.vectorStores.retrieve(other.id)).status).toBe("completed");
    const metrics = await (await router.fetch("/metrics")).text();
    expect(metrics).toMatch(/responses_router_files_expired_total\{object="file"\} [1-9]/);
    const storesExpired = async () => Number(/responses_router_files_expired_total\{object="vector_store"\} (\d+)/.exec(await (await router.fetch("/metrics")).text())?.[1]);
    const counted = await storesExpired();
    expect(counted).toBeGreaterThanOrEqual(1);
    // Renamed after its sweep: back on the store's expiring list, taken off again, not counted twice.
    await client.vectorStores.update(vs.id, { name: "renamed" });
    await waitUntil("the sweep took the renamed store off again", async () => !(await records.expiredVectorStores(now, 10_000)).includes(vs.id));
    expect(await storesExpired()).toBe(counted);
  });
});
