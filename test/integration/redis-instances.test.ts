import { spawnSync } from "node:child_process";
import OpenAI from "openai";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { allEvents, callRouter, cancelFromTheOtherInstance, expectContiguous, slowText, sseEvents, until, writeConfigFile } from "../helpers/background.js";
import { startChildRouter, type ChildRouter } from "../helpers/child-router.js";
import { chatCompletion, startMockUpstream, type MockUpstream } from "../helpers/mock-upstream.js";
import { startRedis, type RedisServerHandle } from "../helpers/redis-server.js";
import { deadPort } from "../helpers/pool-config.js";
import { startTestRouter, type TestRouter } from "../helpers/router.js";

/** Short leases so a dead instance's job is noticed in about two seconds. */
const LEASE = { lock_duration: "2s", stalled_interval: "500ms", max_stalled_count: 1 };
const INSTANCE_LOST = "The router instance running this background response stopped before it finished.";

let redis: RedisServerHandle;
let prefixes = 0;
const uniquePrefix = () => `rrit:${process.pid}:${++prefixes}:`;

/** One chat endpoint at `upstreamUrl`, model "local", Redis storage under `prefix`. */
function redisConfig(upstreamUrl: string, prefix: string, redisUrl = redis.url) {
  return {
    server: { api_keys: [{ name: "team-a", key: "key-a" }, { name: "ops", key: "key-ops", role: "admin" }] },
    endpoints: [{ name: "box", url: upstreamUrl, kind: "chat", max_concurrency: 4 }],
    models: { local: { endpoints: ["box"], upstream_model: "llama3.1:8b" } },
    routing: { queue_timeout: "500ms", retry: { attempts: 1, max_time: "5s" } },
    storage: { redis_url: redisUrl, prefix },
    background: { concurrency: 2, cancel_wait: "3s", lease: LEASE },
  };
}

const routers: TestRouter[] = [];
const upstreams: MockUpstream[] = [];
const children: ChildRouter[] = [];
async function router(upstreamUrl: string, prefix: string, redisUrl?: string, extra: Record<string, unknown> = {}): Promise<TestRouter> {
  const r = await startTestRouter({ ...redisConfig(upstreamUrl, prefix, redisUrl), ...extra }, { apiKey: "key-a" });
  routers.push(r);
  return r;
}
async function upstream(): Promise<MockUpstream> {
  const u = await startMockUpstream();
  upstreams.push(u);
  return u;
}

beforeAll(async () => {
  redis = await startRedis();
});
afterEach(async () => {
  for (const c of children.splice(0)) c.kill("SIGKILL");
  await Promise.all(routers.splice(0).map((r) => r.close(200)));
  await Promise.all(upstreams.splice(0).map((u) => u.close()));
});
afterAll(async () => {
  await redis?.stop();
});

const finished = (r: TestRouter, id: string, ms?: number) =>
  until(async () => {
    const got = await r.client.responses.retrieve(id);
    return got.status !== "queued" && got.status !== "in_progress" ? got : null;
  }, `response ${id} to finish`, ms);

describe("two router instances on one Redis", () => {
  it("a response created on A is retrieved, chained, listed and deleted on B", async () => {
    const up = await upstream();
    const prefix = uniquePrefix();
    const [a, b] = [await router(up.url, prefix), await router(up.url, prefix)];
    const first = await a.client.responses.create({ model: "local", input: "remember 42" });
    expect((await b.client.responses.retrieve(first.id)).output_text).toBe("Hello world");
    const second = await b.client.responses.create({ model: "local", input: "what number?", previous_response_id: first.id });
    expect(up.requests.at(-1)!.body.messages.map((m: { content: string }) => m.content)).toEqual(["remember 42", "Hello world", "what number?"]);
    const items = await a.client.responses.inputItems.list(second.id);
    expect(items.data.map((i) => (i as { type: string }).type)).toEqual(["message", "message", "message"]);
    await b.client.responses.delete(first.id);
    expect(await a.client.responses.retrieve(first.id).catch((e) => e.status)).toBe(404);
  });

  it("open each other's sealed compaction items when they share compaction.key (another process, key from the env); another key cannot", async () => {
    const up = await upstream();
    const prefix = uniquePrefix();
    const key = "shared-compaction-key-0123456789";
    const a = await router(up.url, prefix, undefined, { compaction: { key } });
    const child = await startChildRouter(writeConfigFile({ ...redisConfig(up.url, prefix), compaction: { key: "${ROUTER_COMPACTION_KEY}" } }), { ROUTER_COMPACTION_KEY: key });
    children.push(child);
    const b = new OpenAI({ baseURL: `${child.url}/v1`, apiKey: "key-a", maxRetries: 0 });

    // A compacts a stored turn with the v2 trigger; B chains from it and its backend gets A's summary.
    up.enqueue("/chat/completions", { kind: "json", body: chatCompletion("SEALED-ON-A") });
    const compacted = await a.client.responses.create({ model: "local", input: [{ role: "user", content: "remember 42" }, { type: "compaction_trigger" } as never] });
    up.enqueue("/chat/completions", { kind: "json", body: chatCompletion("42") });
    await b.responses.create({ model: "local", previous_response_id: compacted.id, input: "what number?" });
    expect(up.requests.at(-1)!.body.messages.map((m: { content: string }) => m.content)).toEqual(["remember 42", expect.stringContaining("SEALED-ON-A"), "what number?"]);

    // B compacts with /responses/compact; A reads its item.
    up.enqueue("/chat/completions", { kind: "json", body: chatCompletion("SEALED-ON-B") });
    const onB = await b.responses.compact({ model: "local", input: "hello there" });
    up.enqueue("/chat/completions", { kind: "json", body: chatCompletion("ok") });
    await a.client.responses.create({ model: "local", input: [...(onB.output as never[]), { role: "user", content: "next" }] });
    expect(up.requests.at(-1)!.body.messages.map((m: { content: string }) => m.content)).toEqual(["hello there", expect.stringContaining("SEALED-ON-B"), "next"]);

    // An instance with another key refuses it, naming the item.
    const c = await router(up.url, prefix, undefined, { compaction: { key: "some-other-key-0123456789" } });
    const err = await c.client.responses.create({ model: "local", previous_response_id: compacted.id, input: "x" }).catch((e) => e);
    expect(err.status).toBe(400);
    expect(err.error.param).toBe("previous_response_id.encrypted_content");
    expect(child.output()).not.toContain(key);
  });

  it("a background job is followed, resumed and cancelled from the instance that does NOT run it", async () => {
    const [upA, upB] = [await upstream(), await upstream()];
    const prefix = uniquePrefix();
    const { cancelled } = await cancelFromTheOtherInstance(await router(upA.url, prefix), await router(upB.url, prefix), upA, upB);
    const message = cancelled.output[0] as OpenAI.Responses.ResponseOutputMessage;
    expect(message.status).toBe("incomplete");
    expect((message.content[0] as { text: string }).text.startsWith("w0 w1 ")).toBe(true);
  });

  it("a stream started on one instance resumes on the other to the end; the SDK re-streams it there", async () => {
    const up = await upstream();
    up.setDefault("/chat/completions", slowText(60));
    const prefix = uniquePrefix();
    const [a, b] = [await router(up.url, prefix), await router(up.url, prefix)];
    const res = await callRouter(a.url, "key-a")("/v1/responses", { body: { model: "local", input: "hi", background: true, stream: true } });
    const head: { type: string; [k: string]: any }[] = [];
    for await (const e of sseEvents(res)) {
      head.push(e);
      if (e.type === "response.output_text.delta") break; // the client goes away mid-stream
    }
    const id = head[0]!.response.id as string;
    const last = head.at(-1)!.sequence_number;
    const rest = await allEvents(await callRouter(b.url, "key-a")(`/v1/responses/${id}?stream=true&starting_after=${last}`));
    expectContiguous([...head, ...rest] as never);
    expect(rest.at(-1)!.type).toBe("response.completed");
    const replayed = await b.client.responses.stream({ response_id: id }).finalResponse();
    expect(replayed.output_text).toBe("w0 w1 w2 w3 w4 w5 w6 w7 w8 w9 ");
  });
});

describe("instance loss (a router child process SIGKILLed mid-job)", () => {
  it("a job that had streamed is failed by another instance with a clear error", async () => {
    const [upDead, upLive] = [await upstream(), await upstream()];
    upDead.setDefault("/chat/completions", slowText(300));
    const prefix = uniquePrefix();
    const child = await startChildRouter(writeConfigFile(redisConfig(upDead.url, prefix)));
    children.push(child);
    const res = await callRouter(child.url, "key-a")("/v1/responses", { body: { model: "local", input: "hi", background: true, stream: true } });
    const head: { type: string; [k: string]: any }[] = [];
    for await (const e of sseEvents(res)) {
      head.push(e);
      if (e.type === "response.output_text.delta") break;
    }
    const id = head[0]!.response.id as string;
    child.kill("SIGKILL");
    await child.exited;

    const survivor = await router(upLive.url, prefix);
    const failed = await finished(survivor, id, 20_000);
    expect(failed.status).toBe("failed");
    expect(failed.error).toEqual({ code: "server_error", message: INSTANCE_LOST });
    expect(upLive.requests).toHaveLength(0); // it had streamed: never run twice
    const rest = await allEvents(await callRouter(survivor.url, "key-a")(`/v1/responses/${id}?stream=true&starting_after=${head.at(-1)!.sequence_number}`));
    expect(rest.at(-1)).toMatchObject({ type: "response.failed", response: { status: "failed", error: { message: INSTANCE_LOST } } });
  });

  it("a job that had not streamed yet runs again on another instance", async () => {
    const [upDead, upLive] = [await upstream(), await upstream()];
    upDead.setDefault("/chat/completions", { kind: "hang" });
    const prefix = uniquePrefix();
    const child = await startChildRouter(writeConfigFile(redisConfig(upDead.url, prefix)));
    children.push(child);
    const created = (await (await callRouter(child.url, "key-a")("/v1/responses", { body: { model: "local", input: "hi", background: true } })).json()) as { id: string };
    await until(() => upDead.open() === 1, "the child's upstream call");
    child.kill("SIGKILL");
    await child.exited;

    const survivor = await router(upLive.url, prefix);
    const done = await finished(survivor, created.id, 20_000);
    expect(done.status).toBe("completed");
    expect(done.output_text).toBe("Hello world");
    expect(upLive.requests).toHaveLength(1);
  });
});

describe("instance shutdown in Redis mode", () => {
  it("an instance that stops hands its running job back, and another instance runs it", async () => {
    const [upStuck, upLive] = [await upstream(), await upstream()];
    upStuck.setDefault("/chat/completions", { kind: "hang" });
    const prefix = uniquePrefix();
    const stopping = await router(upStuck.url, prefix);
    const created = await stopping.client.responses.create({ model: "local", input: "hi", background: true });
    await until(() => upStuck.open() === 1, "the job's upstream call");
    const survivor = await router(upLive.url, prefix);
    await stopping.close(200);
    const done = await finished(survivor, created.id);
    expect(done.status).toBe("completed");
    expect(done.output_text).toBe("Hello world");
    expect(upLive.requests).toHaveLength(1);
  });
});

describe("Redis availability", () => {
  it("main exits non-zero with a clear message when Redis is unreachable at start", async () => {
    const closedPort = await deadPort();
    const file = writeConfigFile(redisConfig("http://127.0.0.1:9/v1", uniquePrefix(), `redis://127.0.0.1:${closedPort}`));
    const run = spawnSync(process.execPath, ["--import", "tsx", "src/main.ts", "--config", file], { encoding: "utf8", timeout: 30_000 });
    expect(run.status).toBe(1);
    const out = run.stdout + run.stderr;
    expect(out).toContain("router failed to start");
    expect(out).toContain(`the redis store at redis://127.0.0.1:${closedPort} is unreachable`);
  });

  it("Redis lost while running: stored requests answer 503, store:false keeps working, redis_up shows it, and it recovers", async () => {
    const own = await startRedis();
    try {
      const up = await upstream();
      const r = await router(up.url, uniquePrefix(), own.url);
      const metric = async () => /^responses_router_redis_up (\d)/m.exec(await (await fetch(`${r.url}/metrics`)).text())?.[1];
      await until(async () => (await metric()) === "1", "redis_up 1");
      const before = await r.client.responses.create({ model: "local", input: "hi" });

      await own.stop();
      await until(async () => (await metric()) === "0", "redis_up 0");
      const status = (p: Promise<unknown>) => p.then(() => 200, (e: { status: number; error: { code: string; message: string } }) => e);
      for (const attempt of [
        () => r.client.responses.create({ model: "local", input: "hi" }),
        () => r.client.responses.create({ model: "local", input: "hi", background: true }),
        () => r.client.responses.create({ model: "local", input: "hi", store: false, previous_response_id: before.id }),
        () => r.client.responses.retrieve(before.id),
      ]) {
        const e = await status(attempt());
        expect(e).toMatchObject({ status: 503, error: { code: "store_unavailable" } });
        expect((e as { error: { message: string } }).error.message).toMatch(/response store is unavailable/);
      }
      const requestsBefore = up.requests.length;
      expect((await r.client.responses.create({ model: "local", input: "hi", store: false })).output_text).toBe("Hello world");
      expect(up.requests.length).toBe(requestsBefore + 1); // the failed stored requests never reached the upstream
      // The instance still serves (store: false works): ready; the store outage shows in /health/backends.
      expect((await fetch(`${r.url}/readyz`)).status).toBe(200);
      const backends = await fetch(`${r.url}/health/backends`, { headers: { authorization: "Bearer key-ops" } });
      expect(backends.status).toBe(503);
      expect(((await backends.json()) as { store: unknown }).store).toEqual({ kind: "redis", reachable: false });

      await own.restart();
      await until(async () => (await metric()) === "1", "redis_up 1 again");
      const after = await r.client.responses.create({ model: "local", input: "hi" });
      expect((await r.client.responses.retrieve(after.id)).status).toBe("completed");
    } finally {
      await own.stop();
    }
  });
});
