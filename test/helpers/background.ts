/**
 * Helpers for background-mode tests: raw HTTP calls with a key, an SSE reader that
 * yields events as they arrive, and polling until a condition holds.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type OpenAI from "openai";
import { expect } from "vitest";
import type { StreamEvent } from "../../src/wire/types.js";
import { chatTextChunks, type MockUpstream, type Reply } from "./mock-upstream.js";
import { twoKindConfig, type TestRouter } from "./router.js";

/** twoKindConfig with two API keys (team-a: key-a, team-b: key-b) and one background job at a time. */
export const backgroundConfig = (chatUrl: string, oaiUrl: string, extra: Record<string, unknown> = {}) =>
  twoKindConfig(chatUrl, oaiUrl, {
    server: { api_keys: [{ name: "team-a", key: "key-a" }, { name: "team-b", key: "key-b" }] },
    background: { concurrency: 1, cancel_wait: "2s" },
    ...extra,
  });

/** A chat stream that takes about 2 s: ten text deltas "w0 " .. "w9 ", one every 200 ms. */
export const slowText = (delayMs = 200): Reply => ({
  kind: "sse",
  frames: [...chatTextChunks(Array.from({ length: 10 }, (_, i) => `w${i} `)), "data: [DONE]\n\n"],
  delayMs,
});

/** Calls a router with a bearer key; JSON bodies are serialised. */
export function callRouter(baseUrl: string, key: string) {
  return (path: string, init: { method?: string; body?: unknown; signal?: AbortSignal } = {}) =>
    fetch(`${baseUrl}${path}`, {
      method: init.method ?? (init.body === undefined ? "GET" : "POST"),
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
      signal: init.signal,
    });
}

/** The OpenAI-shaped error of a failed answer. */
export async function errorOf(res: Response): Promise<{ message: string; type: string; param: string | null; code: string | null }> {
  return ((await res.json()) as { error: { message: string; type: string; param: string | null; code: string | null } }).error;
}

/** Yields the SSE events of a response body as they arrive (data parsed as JSON). */
export async function* sseEvents(res: Response): AsyncGenerator<StreamEvent> {
  if (!res.body) return;
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let end: number;
    while ((end = buffer.indexOf("\n\n")) !== -1) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = frame
        .split("\n")
        .filter((l) => l.startsWith("data: "))
        .map((l) => l.slice(6))
        .join("");
      if (data) yield JSON.parse(data) as StreamEvent;
    }
  }
}

/** Reads a whole SSE body into events. */
export async function allEvents(res: Response): Promise<StreamEvent[]> {
  const out: StreamEvent[] = [];
  for await (const e of sseEvents(res)) out.push(e);
  return out;
}

/** Polls `probe` until it returns a truthy value (then returns it), or fails after `ms`. */
export async function until<T>(probe: () => Promise<T> | T, what: string, ms = 10_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Sequence numbers must run 0, 1, 2 ... (or from `start`) without gaps. */
export function expectContiguous(events: StreamEvent[], start = 0): void {
  events.forEach((e, i) => {
    if (e.sequence_number !== start + i) throw new Error(`event ${i} (${e.type}) has sequence_number ${e.sequence_number}, expected ${start + i}`);
  });
}

/** Writes a config object to a temporary router.yaml (JSON is valid YAML) for the CLI. */
export function writeConfigFile(config: Record<string, unknown>): string {
  const file = join(mkdtempSync(join(tmpdir(), "rr-bg-")), "router.yaml");
  writeFileSync(file, JSON.stringify(config, null, 2));
  return file;
}

/**
 * Two instances on one shared store, each with its own slow upstream (so the upstream that gets
 * the call names the instance running the job): a background job created on `a` is followed
 * from the instance that does NOT run it and cancelled there after two deltas; the run is
 * aborted on the other and the record says cancelled.
 */
export async function cancelFromTheOtherInstance(a: TestRouter, b: TestRouter, upA: MockUpstream, upB: MockUpstream): Promise<{ cancelled: OpenAI.Responses.Response; events: StreamEvent[] }> {
  for (const u of [upA, upB]) u.setDefault("/chat/completions", slowText(150));
  const created = await a.client.responses.create({ model: "local", input: "hi", background: true });
  expect(created.status).toBe("queued");
  await until(async () => (await b.client.responses.retrieve(created.id)).status === "in_progress", "the job to start");
  await until(() => upA.requests.length + upB.requests.length > 0, "the job's upstream call");
  const [runner, other] = upA.requests.length > 0 ? [upA, b] : [upB, a];
  const abortedBefore = runner.aborted;
  const res = await callRouter(other.url, "key-a")(`/v1/responses/${created.id}?stream=true&starting_after=2`);
  const events: StreamEvent[] = [];
  let cancelled: OpenAI.Responses.Response | null = null;
  for await (const e of sseEvents(res)) {
    events.push(e);
    if (e.type === "response.output_text.delta" && e.delta === "w1 ") cancelled = await other.client.responses.cancel(created.id);
  }
  expectContiguous(events, 3);
  expect(cancelled!.status).toBe("cancelled");
  expect(events.at(-1)).toMatchObject({ type: "response.incomplete", response: { status: "cancelled" } });
  await until(() => runner.aborted > abortedBefore, "the running upstream call to be aborted");
  expect(await a.client.responses.retrieve(created.id)).toMatchObject({ status: "cancelled", output: cancelled!.output });
  return { cancelled: cancelled!, events };
}
