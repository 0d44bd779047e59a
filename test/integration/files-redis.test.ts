import OpenAI, { toFile } from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DemoBackend } from "../../src/demo/backend.js";
import { demoBackend, filesConfig, tempStorage } from "../helpers/files.js";
import { startRedis, type RedisServerHandle } from "../helpers/redis-server.js";
import { startTestRouter, type TestRouter } from "../helpers/router.js";

/** Two router instances on one Redis and one shared `files.storage`: upload on one, index and search on either. */
describe("Files and Vector Stores across two instances (Redis)", () => {
  let redis: RedisServerHandle;
  let backend: DemoBackend;
  let a: TestRouter;
  let b: TestRouter;
  const storage = tempStorage();

  beforeAll(async () => {
    redis = await startRedis();
    backend = await demoBackend();
    const config = { ...filesConfig(backend.url, storage.dir), storage: { redis_url: redis.url, prefix: `rrfiles:${process.pid}:` } };
    a = await startTestRouter(config, { files: { backoffMs: () => 0 } });
    b = await startTestRouter(config, { files: { backoffMs: () => 0 } });
  });
  afterAll(async () => {
    await a?.close(500);
    await b?.close(500);
    await backend?.close();
    await redis?.stop();
    storage.cleanup();
  });

  it("a file uploaded on one instance is indexed and found through the other", async () => {
    const onA: OpenAI = a.client;
    const onB: OpenAI = b.client;
    const vs = await onA.vectorStores.create({ name: "shared" });
    const file = await onA.files.create({ file: await toFile(Buffer.from("The incident runbook for outage OUT-3312 says: restart the ingest tier first."), "runbook.md"), purpose: "assistants" });
    expect((await onB.files.retrieve(file.id)).filename).toBe("runbook.md");
    // Attached through B: whichever instance takes the job reads the bytes A wrote.
    await onB.vectorStores.files.createAndPoll(vs.id, { file_id: file.id }, { pollIntervalMs: 50 });
    expect((await onA.vectorStores.retrieve(vs.id)).file_counts).toMatchObject({ completed: 1, total: 1 });
    const found = await onB.vectorStores.search(vs.id, { query: "OUT-3312" });
    expect(found.data[0]).toMatchObject({ file_id: file.id, filename: "runbook.md" });
    const batch = await onA.vectorStores.fileBatches.uploadAndPoll(vs.id, { files: [await toFile(Buffer.from("Payroll closes on the 25th; ticket PAY-88 tracks it."), "payroll.txt")] }, { pollIntervalMs: 50 });
    expect(batch.file_counts).toMatchObject({ completed: 1, total: 1 });
    expect((await onB.vectorStores.search(vs.id, { query: "PAY-88" })).data[0]?.filename).toBe("payroll.txt");
    // Deleted on B: gone from the index A searches.
    await onB.files.delete(file.id);
    expect((await onA.vectorStores.search(vs.id, { query: "OUT-3312" })).data.map((h) => h.file_id)).not.toContain(file.id);
  });
});
