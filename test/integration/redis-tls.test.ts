import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createStores } from "../../src/store/index.js";
import { captureLog } from "../helpers/log-capture.js";
import { startMockUpstream, type MockUpstream } from "../helpers/mock-upstream.js";
import { startTlsRedis, type TlsRedisHandle } from "../helpers/redis-tls.js";
import { startTestRouter } from "../helpers/router.js";

/** A Redis that speaks only TLS with a private CA, and a password kept out of the URL. */
const PASSWORD = "tls-test-password-7d2e0b";
let redis: TlsRedisHandle;
let upstream: MockUpstream;

beforeAll(async () => {
  [redis, upstream] = await Promise.all([startTlsRedis(PASSWORD), startMockUpstream()]);
}, 30_000);
afterAll(async () => {
  await Promise.all([redis?.stop(), upstream?.close()]);
});

const storage = (extra: Record<string, unknown> = {}) => ({
  redis_url: redis.url,
  prefix: `rrtls:${process.pid}:`,
  ttl: 60_000,
  memory: { max_entries: 10, max_bytes: 1_000_000 },
  redis: { password: PASSWORD, tls: { ca_file: redis.caFile }, ...extra },
});

describe("Redis over TLS (rediss:// + storage.redis.tls.ca_file)", () => {
  it("stores and chains responses through a router on a TLS-only Redis", async () => {
    const r = await startTestRouter({
      endpoints: [{ name: "box", url: upstream.url, kind: "chat" }],
      models: { local: { endpoints: ["box"] } },
      storage: { redis_url: redis.url, prefix: `rrtls:${process.pid}:r:`, redis: { password: PASSWORD, tls: { ca_file: redis.caFile } } },
    }, { checkStore: true });
    try {
      const first = await r.client.responses.create({ model: "local", input: "remember 42" });
      expect((await r.client.responses.retrieve(first.id)).output_text).toBe("Hello world");
      const second = await r.client.responses.create({ model: "local", input: "and?", previous_response_id: first.id });
      expect(second.status).toBe("completed");
    } finally {
      await r.close(200);
    }
  });

  it("refuses a server its CA did not sign, and a wrong password, without showing the password", async () => {
    // No CA: the server's certificate does not verify.
    const untrusted = await createStores({ ...storage(), redis: { password: PASSWORD } });
    const wrongPassword = await createStores(storage({ password: "not-the-password" }));
    const trusted = await createStores(storage());
    try {
      expect(await untrusted.responses.ping()).toBe(false);
      expect(await trusted.responses.ping()).toBe(true);
      const err = (await wrongPassword.responses.get("resp_x").catch((e: Error) => e)) as Error;
      expect(err).toBeInstanceOf(Error);
      expect(err.message).not.toContain("not-the-password");
      expect(err.message).not.toContain(PASSWORD);
    } finally {
      await Promise.all([untrusted.close(), wrongPassword.close(), trusted.close()]);
    }
    // A router whose job queue keeps failing to authenticate logs that, never the password
    // (ioredis attaches the failed AUTH command, password included, to its errors).
    const log = captureLog("debug");
    const wrong = await startTestRouter(
      { endpoints: [{ name: "box", url: upstream.url, kind: "chat" }], models: { local: { endpoints: ["box"] } }, storage: storage({ password: "not-the-password" }) },
      { logger: log.logger },
    );
    try {
      const res = await wrong.fetch("/v1/responses", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "local", input: "hi" }) });
      expect(res.status).toBe(503);
      expect(res.headers.get("retry-after")).toBe("1");
      expect(await res.text()).not.toContain("not-the-password");
      await new Promise((r) => setTimeout(r, 1_500)); // a few reconnect attempts
    } finally {
      await wrong.close(200);
    }
    expect(log.text()).toMatch(/WRONGPASS|NOAUTH|invalid username-password/);
    expect(log.text()).not.toContain("not-the-password");
    expect(log.text()).not.toContain(PASSWORD);
    await expect(
      startTestRouter({ endpoints: [{ name: "box", url: upstream.url, kind: "chat" }], models: { local: { endpoints: ["box"] } }, storage: { redis_url: redis.url, redis: { password: PASSWORD } } }, { checkStore: true }),
    ).rejects.toThrow(/the redis store at rediss:\/\/127\.0\.0\.1:\d+ is unreachable/);
  });

  it("a router that never authenticates shuts down without an unhandled rejection (which would end the process printing the AUTH command)", async () => {
    const stray: unknown[] = [];
    const note = (err: unknown) => void stray.push(err);
    process.on("unhandledRejection", note);
    try {
      for (let i = 0; i < 4; i++) {
        const wrong = await startTestRouter({ endpoints: [{ name: "box", url: upstream.url, kind: "chat" }], models: { local: { endpoints: ["box"] } }, storage: storage({ password: "not-the-password" }) });
        await new Promise((r) => setTimeout(r, 300 * i)); // closed at different points of its reconnect attempts
        await wrong.close(200);
      }
      await new Promise((r) => setTimeout(r, 1_000));
    } finally {
      process.off("unhandledRejection", note);
    }
    expect(stray.map((e) => (e as Error).message)).toEqual([]);
  });
});
