import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach } from "vitest";
import { buildConfig, type RouterConfig } from "../../src/config/load.js";
import { createLogger } from "../../src/ops/log.js";
import { startRouter, type RunningRouter, type StartOptions } from "../../src/server.js";
import type { FileLibrary } from "../../src/tools/file-search/library.js";
import { startMockUpstream, type MockUpstream } from "./mock-upstream.js";

export interface TestRouter extends RunningRouter {
  client: OpenAI;
  config: RouterConfig;
  /** Raw fetch against the router (path starts with /). */
  fetch(path: string, init?: RequestInit): Promise<Response>;
}

/**
 * Starts a router on a free loopback port from an inline config object.
 * Logs are silent unless ROUTER_TEST_LOGS is set.
 */
export async function startTestRouter(raw: Record<string, unknown>, opts: StartOptions & { apiKey?: string; fileLibrary?: FileLibrary } = {}): Promise<TestRouter> {
  const config = buildConfig({ ...raw, server: { host: "127.0.0.1", port: 0, ...(raw.server as object) } });
  const router = await startRouter(config, { logger: createLogger(process.env.ROUTER_TEST_LOGS ? "debug" : "silent"), ...opts });
  // The router's Files and Vector Stores as the responses path sees them (a test double: test/helpers/file-library.ts).
  if (opts.fileLibrary) router.runtime.files = opts.fileLibrary;
  const client = new OpenAI({ baseURL: `${router.url}/v1`, apiKey: opts.apiKey ?? "test-key", maxRetries: 0, timeout: 20_000 });
  return {
    ...router,
    client,
    config,
    fetch: (path, init) => fetch(`${router.url}${path}`, init),
  };
}

/** One chat endpoint and one openai endpoint, models "local" (chat), "gpt-4.1" (openai) and "mixed". */
export function twoKindConfig(chatUrl: string, openaiUrl: string, extra: Record<string, unknown> = {}) {
  return {
    endpoints: [
      { name: "box", url: chatUrl, kind: "chat", max_concurrency: 4 },
      { name: "oai", url: openaiUrl, kind: "openai", api_key: "sk-upstream-secret-0123456789", max_concurrency: 8 },
    ],
    models: {
      local: { endpoints: ["box"], upstream_model: "llama3.1:8b" },
      "gpt-4.1": { endpoints: ["oai"] },
    },
    routing: { queue_timeout: "500ms", retry: { attempts: 2, max_time: "5s" }, health: { failure_threshold: 3, cooldown: "200ms" } },
    ...extra,
  };
}

/** Parses an SSE body into [{event, data}] (data parsed as JSON). */
export function parseSse(text: string): { event: string | undefined; data: any }[] {
  return text
    .split("\n\n")
    // A comment-only frame (`: keepalive`) carries no event.
    .filter((f) => f.trim() && !f.split("\n").every((line) => line.startsWith(":")))
    .map((frame) => {
      let event: string | undefined;
      let data = "";
      for (const line of frame.split("\n")) {
        if (line.startsWith("event: ")) event = line.slice(7);
        else if (line.startsWith("data: ")) data += line.slice(6);
      }
      return { event, data: JSON.parse(data) };
    });
}

export interface TwoKindEnv {
  chat: MockUpstream;
  oai: MockUpstream;
  router: TestRouter;
}

/**
 * Registers the usual suite fixture: a chat mock, an openai mock and a router
 * over both (twoKindConfig), started once per file, request logs cleared
 * before each test. Properties are filled in by beforeAll.
 */
export function useTwoKindRouter(extra: Record<string, unknown> = {}, opts: StartOptions & { apiKey?: string } = {}): TwoKindEnv {
  const env = {} as TwoKindEnv;
  beforeAll(async () => {
    env.chat = await startMockUpstream();
    env.oai = await startMockUpstream();
    env.router = await startTestRouter(twoKindConfig(env.chat.url, env.oai.url, extra), opts);
  });
  afterAll(async () => {
    await env.router?.close(1000);
    await env.chat?.close();
    await env.oai?.close();
  });
  beforeEach(() => {
    env.chat.requests.length = 0;
    env.oai.requests.length = 0;
  });
  return env;
}
