import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { captureLog } from "../helpers/log-capture.js";
import { WsClient } from "../helpers/ws-client.js";
import { startMockUpstream, type MockUpstream } from "../helpers/mock-upstream.js";
import { startRedis, type RedisServerHandle } from "../helpers/redis-server.js";
import { startTestRouter, type TestRouter } from "../helpers/router.js";
import { sdkWith as sdk, statusOf, statusUntil401 } from "../helpers/made-keys.js";

/** Keys made, changed and revoked by the admin API, and what they may do once made. */

const ADMIN = "rr-admin-key-0a1b2c3d4e5f";
const USER = "rr-user-key-9f8e7d6c5b4a";
const NOON = Date.UTC(2026, 5, 15, 12, 0, 0);

const config = (chatUrl: string, extra: Record<string, unknown> = {}) => ({
  server: {
    api_keys: [
      { name: "ops", key: ADMIN, role: "admin" },
      { name: "dev", key: USER },
    ],
  },
  endpoints: [{ name: "box", url: chatUrl, kind: "chat", max_concurrency: 4 }],
  models: { local: { endpoints: ["box"] }, other: { endpoints: ["box"] } },
  ...extra,
});

/** A fetch whose JSON is read as the test expects it (the assertions check its shape). */
type Answer = Omit<Response, "json"> & { json(): Promise<any> };

const call = (r: TestRouter, method: string, path: string, key: string | null, body?: unknown): Promise<Answer> =>
  r.fetch(path, {
    method,
    headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });


describe("the admin API of keys (memory store)", () => {
  let chat: MockUpstream;
  let router: TestRouter;
  let now = NOON;
  const log = captureLog("debug");

  beforeAll(async () => {
    chat = await startMockUpstream();
    router = await startTestRouter(config(chat.url), { apiKey: ADMIN, now: () => now, logger: log.logger });
  });
  afterAll(async () => {
    await router?.close(500);
    await chat?.close();
  });

  it("401 without a key, 403 for a key that is not an admin, in OpenAI's shape", async () => {
    const none = await call(router, "GET", "/v1/admin/keys", null);
    expect(none.status).toBe(401);
    expect((await none.json()).error).toMatchObject({ type: "invalid_request_error", code: "missing_api_key" });
    for (const [method, path] of [["GET", "/v1/admin/keys"], ["POST", "/v1/admin/keys"], ["GET", "/v1/admin/keys/key_x"], ["POST", "/v1/admin/keys/key_x"], ["DELETE", "/v1/admin/keys/key_x"]] as const) {
      const res = await call(router, method, path, USER, method === "POST" ? { name: "x" } : undefined);
      expect(res.status, `${method} ${path}`).toBe(403);
      expect((await res.json()).error).toMatchObject({ type: "permission_error", code: "insufficient_permissions", param: null });
    }
  });

  it("lists the config's keys as read-only, redacted", async () => {
    const res = await call(router, "GET", "/v1/admin/keys", ADMIN);
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).not.toContain(ADMIN);
    expect(text).not.toContain(USER);
    const { object, data } = JSON.parse(text);
    expect(object).toBe("list");
    expect(data).toEqual([
      expect.objectContaining({ object: "admin.key", name: "ops", source: "config", read_only: true, role: "admin", redacted_value: "sk-...4e5f" }),
      expect.objectContaining({ name: "dev", source: "config", read_only: true, role: "user", redacted_value: "sk-...5b4a" }),
    ]);
    const one = await call(router, "GET", `/v1/admin/keys/${data[0].id}`, ADMIN);
    expect(await one.json()).toEqual(data[0]);
    for (const method of ["POST", "DELETE"]) {
      const refused = await call(router, method, `/v1/admin/keys/${data[1].id}`, ADMIN, method === "POST" ? { role: "admin" } : undefined);
      expect(refused.status).toBe(400);
      expect((await refused.json()).error).toMatchObject({ code: "key_read_only", param: "id" });
    }
  });

  it("refuses bad input with a clear 400 naming the field", async () => {
    const cases: [unknown, string | null, string][] = [
      ["not json", null, "invalid_json"],
      [[], null, "invalid_body"],
      [{}, "name", "missing_required_parameter"],
      [{ name: "has space" }, "name", "invalid_value"],
      [{ name: "x", colour: "red" }, "colour", "unknown_parameter"],
      [{ name: "x", role: "root" }, "role", "invalid_value"],
      [{ name: "x", models: ["nope"] }, "models[0]", "invalid_value"],
      [{ name: "x", limits: { requests_per_minute: 0 } }, "limits.requests_per_minute", "invalid_value"],
      [{ name: "x", limits: { per_hour: 3 } }, "limits.per_hour", "unknown_parameter"],
      [{ name: "x", expires_at: NOON / 1000 - 1 }, "expires_at", "invalid_value"],
      [{ name: "x", expires_at: "tomorrow" }, "expires_at", "invalid_value"],
      [{ name: "x", metadata: { a: 1 } }, "metadata.a", "invalid_value"],
    ];
    for (const [body, param, code] of cases) {
      const res = await call(router, "POST", "/v1/admin/keys", ADMIN, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      const { error } = await res.json();
      expect(error, JSON.stringify(body)).toMatchObject({ type: "invalid_request_error", param, code });
      expect(error.message.length).toBeGreaterThan(10);
    }
    const taken = await call(router, "POST", "/v1/admin/keys", ADMIN, { name: "dev" });
    expect(taken.status).toBe(409);
    expect((await taken.json()).error).toMatchObject({ param: "name", code: "name_taken" });
    expect((await call(router, "GET", "/v1/admin/keys/key_nope", ADMIN)).status).toBe(404);
    expect((await call(router, "DELETE", "/v1/admin/keys/key_nope", ADMIN)).status).toBe(404);
  });

  it("a made key: secret once, works at once with the same policy as a config key, counted under its name, revoked -> 401", async () => {
    now = NOON;
    const res = await call(router, "POST", "/v1/admin/keys", ADMIN, {
      name: "alice",
      models: ["local"],
      limits: { requests_per_minute: 3 },
      metadata: { team: "search" },
      expires_at: NOON / 1000 + 3600,
    });
    expect(res.status).toBe(201);
    const made = await res.json();
    expect(made).toMatchObject({ object: "admin.key", name: "alice", source: "api", read_only: false, role: "user", models: ["local"], limits: { requests_per_minute: 3 }, metadata: { team: "search" }, expires_at: NOON / 1000 + 3600, created_at: NOON / 1000 });
    expect(made.id).toMatch(/^key_/);
    expect(made.key).toMatch(/^sk-/);
    expect(made.redacted_value).toBe(`sk-...${made.key.slice(-4)}`);
    // Afterwards only the redacted form.
    for (const path of ["/v1/admin/keys", `/v1/admin/keys/${made.id}`]) expect(await (await call(router, "GET", path, ADMIN)).text()).not.toContain(made.key);

    const alice = sdk(router, made.key);
    expect((await alice.responses.create({ model: "local", input: "hi" })).status).toBe("completed");
    expect(await statusOf(alice.responses.create({ model: "other", input: "hi" }))).toBe(404); // not in its models (admitted first, as a config key's)
    expect(await statusOf(alice.responses.create({ model: "local", input: "hi" }))).toBe(200);
    expect(await statusOf(alice.responses.create({ model: "local", input: "hi" }))).toBe(429); // requests_per_minute: 3
    expect(await statusOf(sdk(router, made.key).models.list())).toBe(200);
    // A made user key is no admin.
    expect((await call(router, "GET", "/v1/admin/keys", made.key)).status).toBe(403);

    // Raise its limit: it takes effect at once.
    const raised = await call(router, "POST", `/v1/admin/keys/${made.id}`, ADMIN, { limits: { requests_per_minute: 10 }, models: null });
    expect(raised.status).toBe(200);
    expect(await raised.json()).toMatchObject({ id: made.id, name: "alice", limits: { requests_per_minute: 10 }, models: null, metadata: { team: "search" } });
    now = NOON + 60_000; // a token bucket refills with time (the raised limit adds no burst), as a config key's
    expect(await statusOf(alice.responses.create({ model: "other", input: "hi" }))).toBe(200);
    const badPatch = await call(router, "POST", `/v1/admin/keys/${made.id}`, ADMIN, { name: "bob" });
    expect((await badPatch.json()).error).toMatchObject({ param: "name", code: "unknown_parameter" });

    const usage = await (await call(router, "GET", "/v1/usage?key=alice", ADMIN)).json();
    expect(usage.totals.map((t: { model: string; requests: number }) => [t.model, t.requests])).toEqual([["local", 2], ["other", 1]]);
    const metrics = await (await router.fetch("/metrics")).text();
    expect(metrics).toMatch(/responses_router_requests_total\{[^}]*key="alice"[^}]*\} /);

    const del = await call(router, "DELETE", `/v1/admin/keys/${made.id}`, ADMIN);
    expect(await del.json()).toEqual({ object: "admin.key.deleted", id: made.id, name: "alice", deleted: true });
    const after = await alice.responses.create({ model: "local", input: "hi" }).catch((e: unknown) => e);
    expect(after).toBeInstanceOf(OpenAI.AuthenticationError);
    expect((await call(router, "GET", `/v1/admin/keys/${made.id}`, ADMIN)).status).toBe(404);
    // Neither the secret nor its digest is ever logged.
    expect(log.text()).not.toContain(made.key);
    expect(log.text()).toContain('"api key created"');
  });

  it("an expired key answers 401 from its expires_at on", async () => {
    now = NOON;
    const made = await (await call(router, "POST", "/v1/admin/keys", ADMIN, { name: "temp", expires_at: NOON / 1000 + 60 })).json();
    expect(await statusOf(sdk(router, made.key).models.list())).toBe(200);
    now = NOON + 60_000;
    expect(await statusOf(sdk(router, made.key).models.list())).toBe(401);
    // Extended: it works again.
    await call(router, "POST", `/v1/admin/keys/${made.id}`, ADMIN, { expires_at: null });
    expect(await statusOf(sdk(router, made.key).models.list())).toBe(200);
    now = NOON;
  });

  it("a made key opens a WebSocket; revoked, its next response.create closes the socket as the key is gone", async () => {
    const made = await (await call(router, "POST", "/v1/admin/keys", ADMIN, { name: "socket-user" })).json();
    const ws = new WsClient(router.url, made.key);
    try {
      const events = await ws.create({ model: "local", input: "hi" });
      expect(events.at(-1)!.type).toBe("response.completed");
      // The console's requests page lists the socket's response beside the HTTP ones.
      const listed = (await (await call(router, "GET", "/v1/admin/requests", ADMIN)).json()).data;
      expect(listed[0]).toMatchObject({ method: "WS", route: "/v1/responses", model: "local", key: "socket-user", status: 200, response_id: (events.at(-1) as any).response.id });
      expect((await call(router, "DELETE", `/v1/admin/keys/${made.id}`, ADMIN)).status).toBe(200);
      ws.send({ type: "response.create", model: "local", input: "again" });
      expect((await ws.waitClosed()).code).toBe(1008);
      expect(ws.events.some((e) => e.type === "error" && e.status === 401)).toBe(true);
    } finally {
      ws.close();
    }
  });

  it("a made admin key may make keys", async () => {
    const admin2 = await (await call(router, "POST", "/v1/admin/keys", ADMIN, { name: "admin-two", role: "admin" })).json();
    const res = await call(router, "POST", "/v1/admin/keys", admin2.key, { name: "made-by-made" });
    expect(res.status).toBe(201);
  });

  it("is not opened to other origins: no CORS headers, a preflight gets none", async () => {
    const pre = await router.fetch("/v1/admin/keys", { method: "OPTIONS", headers: { origin: "https://evil.example", "access-control-request-method": "POST", "access-control-request-headers": "authorization" } });
    expect(pre.headers.get("access-control-allow-origin")).toBeNull();
    const get = await router.fetch("/v1/admin/keys", { headers: { origin: "https://evil.example", authorization: `Bearer ${ADMIN}` } });
    expect(get.headers.get("access-control-allow-origin")).toBeNull();
  });
});

describe("made keys on two instances sharing one Redis", () => {
  let redis: RedisServerHandle;
  let chat: MockUpstream;
  let a: TestRouter;
  let b: TestRouter;

  beforeAll(async () => {
    redis = await startRedis();
    chat = await startMockUpstream();
    const cfg = config(chat.url, { storage: { redis_url: redis.url, prefix: `rradminkeys:${process.pid}:` } });
    a = await startTestRouter(cfg, { apiKey: ADMIN });
    b = await startTestRouter(cfg, { apiKey: ADMIN });
  });
  afterAll(async () => {
    await a?.close(500);
    await b?.close(500);
    await chat?.close();
    await redis?.stop().catch(() => {});
  });

  it("a key made on one works on the other at once; revoked, it answers 401 on both within a second", async () => {
    const made = await (await call(a, "POST", "/v1/admin/keys", ADMIN, { name: "fleet", limits: { requests_per_minute: 3 } })).json();
    // The very next request, on the other instance.
    expect(await statusOf(sdk(b, made.key).responses.create({ model: "local", input: "hi" }))).toBe(200);
    expect(await statusOf(sdk(a, made.key).responses.create({ model: "local", input: "hi" }))).toBe(200);
    expect(await statusOf(sdk(b, made.key).responses.create({ model: "local", input: "hi" }))).toBe(200);
    // One limit for the fleet, as a config key's.
    expect(await statusOf(sdk(a, made.key).responses.create({ model: "local", input: "hi" }))).toBe(429);
    // b's listing shows a's key.
    expect((await (await call(b, "GET", "/v1/admin/keys", ADMIN)).json()).data.map((k: { name: string }) => k.name)).toContain("fleet");

    expect((await call(a, "DELETE", `/v1/admin/keys/${made.id}`, ADMIN)).status).toBe(200);
    const revokedAt = Date.now();
    expect(await statusOf(sdk(a, made.key).models.list())).toBe(401);
    expect(await statusUntil401(b, made.key, revokedAt)).toBe(401);
  });
});
