import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backgroundConfig, callRouter, slowText, sseEvents, until } from "../helpers/background.js";
import { metricSample } from "../helpers/metrics-text.js";
import { startMockUpstream, type MockUpstream } from "../helpers/mock-upstream.js";
import { startRedis, type RedisServerHandle } from "../helpers/redis-server.js";
import { startTestRouter, type TestRouter } from "../helpers/router.js";
import type { StreamEvent } from "../../src/wire/types.js";

/**
 * background.drain_timeout: on shutdown, background jobs outlive the HTTP deadline. The
 * stopping instance takes no new job and lets the running ones finish within the drain
 * deadline before handing anything back (Redis) or failing it (memory).
 */
const WORDS = Array.from({ length: 10 }, (_, i) => `w${i} `).join("");

/** Records every event the router's jobs append (the memory store is emptied when close() ends). */
function recordAppends(r: TestRouter): StreamEvent[] {
  const seen: StreamEvent[] = [];
  const log = r.runtime.stores.events;
  const append = log.append.bind(log);
  log.append = async (id, event) => {
    seen.push(event);
    return append(id, event);
  };
  return seen;
}

async function follow(r: TestRouter, input: string) {
  const res = await callRouter(r.url, "key-a")("/v1/responses", { body: { model: "local", input, background: true, stream: true } });
  const events: { type: string; [k: string]: any }[] = [];
  const done = (async () => {
    for await (const e of sseEvents(res)) events.push(e);
  })();
  return { events, done };
}

describe("background jobs drain past the HTTP deadline (memory store)", () => {
  it("a running job finishes within drain_timeout; its follower is told at the HTTP deadline where to resume", async () => {
    const up = await startMockUpstream();
    up.setDefault("/chat/completions", slowText(150)); // ~1.5 s
    const r = await startTestRouter(backgroundConfig(up.url, up.url), { apiKey: "key-a" });
    try {
      const appended = recordAppends(r);
      const follower = await follow(r, "runs");
      await until(() => up.open() === 1, "the job's upstream call");
      const id = follower.events[0]!.response.id as string;
      await r.close(200, 10_000); // HTTP deadline 200 ms, jobs 10 s
      await follower.done;
      // The job itself ran to the end.
      expect(appended.at(-1)).toMatchObject({ type: "response.completed", response: { status: "completed" } });
      // The follower's connection ended at the HTTP deadline with a terminal event, numbered on, saying where to resume.
      const last = follower.events.at(-1)!;
      expect(last).toMatchObject({ type: "response.failed", response: { id, status: "failed", error: { code: "server_shutting_down" } } });
      expect(last.response.error.message).toContain(`/v1/responses/${id}`);
      expect(last.response.error.message).toContain(`?stream=true&starting_after=${follower.events.at(-2)!.sequence_number}`);
      follower.events.forEach((e, i) => expect(e.sequence_number).toBe(i));
      // The job itself ran to the end: completed, not failed.
      const text = await r.runtime.metrics.registry.metrics();
      expect(metricSample(text, "responses_router_background_jobs_finished_total", { status: "completed" })).toBe(1);
      expect(metricSample(text, "responses_router_background_jobs_finished_total", { status: "failed" })).toBe(0);
    } finally {
      await r.close(100);
      await up.close();
    }
  });

  it("a job longer than drain_timeout ends failed at that deadline", async () => {
    const up = await startMockUpstream();
    up.setDefault("/chat/completions", { kind: "hang" });
    const r = await startTestRouter(backgroundConfig(up.url, up.url), { apiKey: "key-a" });
    try {
      const appended = recordAppends(r);
      await r.client.responses.create({ model: "local", input: "forever", background: true });
      await until(() => up.open() === 1, "the job's upstream call");
      await r.close(100, 1_000);
      expect(appended.at(-1)).toMatchObject({ type: "response.failed", response: { error: { message: "The router shut down before this background response finished." } } });
      expect(metricSample(await r.runtime.metrics.registry.metrics(), "responses_router_background_jobs_finished_total", { status: "failed" })).toBe(1);
    } finally {
      await r.close(100);
      await up.close();
    }
  });
});

describe("background jobs drain past the HTTP deadline (Redis)", () => {
  let redis: RedisServerHandle;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.stop();
  });

  it("a stopping instance finishes its running job itself and takes no new one; another instance runs the new one", async () => {
    const [slowUp, liveUp] = [await startMockUpstream(), await startMockUpstream()];
    slowUp.setDefault("/chat/completions", slowText(150));
    const cfg = (url: string) => ({
      ...backgroundConfig(url, url),
      storage: { redis_url: redis.url, prefix: `rrdrain:${process.pid}:` },
      background: { concurrency: 2, cancel_wait: "2s", lease: { lock_duration: "2s", stalled_interval: "500ms", max_stalled_count: 1 } },
    });
    const stopping = await startTestRouter(cfg(slowUp.url), { apiKey: "key-a" });
    let survivor: TestRouter | undefined;
    try {
      const first = await stopping.client.responses.create({ model: "local", input: "long", background: true });
      await until(() => slowUp.open() === 1, "the first job runs on the stopping instance");
      survivor = await startTestRouter(cfg(liveUp.url), { apiKey: "key-a" });
      const closing = stopping.close(200, 15_000);
      await until(() => stopping.runtime.phase === "draining", "draining");
      const second = await survivor.client.responses.create({ model: "local", input: "new", background: true });
      const done = async (id: string) =>
        until(async () => {
          const got = await survivor!.client.responses.retrieve(id);
          return got.status !== "queued" && got.status !== "in_progress" ? got : null;
        }, `response ${id}`, 15_000);
      expect((await done(second.id)).output_text).toBe("Hello world");
      expect(liveUp.requests.filter((q) => q.path === "/chat/completions")).toHaveLength(1); // the new job went to the survivor
      const firstDone = await done(first.id);
      expect(firstDone.status).toBe("completed");
      expect(firstDone.output_text).toBe(WORDS); // finished by the stopping instance, not handed back
      expect(slowUp.requests.filter((q) => q.path === "/chat/completions")).toHaveLength(1);
      await closing;
    } finally {
      await stopping.close(100);
      await survivor?.close(200);
      await slowUp.close();
      await liveUp.close();
    }
  });
});
