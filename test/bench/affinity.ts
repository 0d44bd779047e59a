/**
 * Conversation affinity, measured: many concurrent multi-turn conversations through one
 * router in front of several chat endpoints whose prefix cache (test/bench/prefix-cache-mock.ts)
 * makes a turn cheap only where the conversation's earlier turns were served. Runs the same
 * workload with `routing.affinity` on and off (fresh caches each time) and prints time to
 * first token (client-side, first output_text delta) p50/p99, the prefill tokens the
 * backends computed, and the router's affinity hits/misses. Half the conversations chain
 * with previous_response_id, half use a conversation (the Conversations API).
 *
 *   npm run bench:affinity -- [--endpoints 3] [--slots 4] [--conversations 24] [--turns 6]
 *                             [--prefill-ms 0.1] [--cache-tokens 12000] [--seed 1]
 *   npm run bench:affinity -- --llama [--conversations 4] [--turns 6]
 *       real inference instead of the mock: two llama.cpp servers (test/e2e/llama, installed by
 *       `npm run test:llama`; prompt cache on with --llama-slots 2 cache slots, one thread, one
 *       request at a time each) running a generated
 *       random-weight LLaMA (embd 256, 4 layers: about 1 ms of CPU per prompt token here)
 */
import OpenAI from "openai";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { buildConfig } from "../../src/config/load.js";
import { createLogger } from "../../src/ops/log.js";
import { startRouter } from "../../src/server.js";
import type { LlamaChatServer } from "../e2e/llama/llama-chat-server.js";
import { startPrefixMock, type PrefixMock } from "./prefix-cache-mock.js";

const { values: f } = parseArgs({
  options: {
    endpoints: { type: "string" },
    slots: { type: "string" },
    conversations: { type: "string" },
    turns: { type: "string" },
    "prefill-ms": { type: "string" },
    "cache-tokens": { type: "string" },
    "output-tokens": { type: "string" },
    seed: { type: "string" },
    llama: { type: "boolean" },
    "llama-slots": { type: "string" },
  },
});
const LLAMA = f.llama === true;
const E = Number(f.endpoints ?? (LLAMA ? 2 : 3));
const SLOTS = Number(f.slots ?? (LLAMA ? 1 : 4));
const CONVERSATIONS = Number(f.conversations ?? (LLAMA ? 4 : 24));
const TURNS = Number(f.turns ?? 6);
const PREFILL_MS = Number(f["prefill-ms"] ?? 0.1);
const CACHE_TOKENS = Number(f["cache-tokens"] ?? 12_000);
/** Prefix-cache slots per llama.cpp server (llama-server --parallel): each keeps one conversation's prefix. */
const LLAMA_SLOTS = Number(f["llama-slots"] ?? 2);
const OUTPUT_TOKENS = Number(f["output-tokens"] ?? (LLAMA ? 8 : 30));

// A small deterministic PRNG, so both runs see the same conversations and think times.
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32);
}
// Words the generated GGUF's vocabulary has whole (one token each), so words are tokens on both backends.
const VOCAB = "the of to and in is it you that he was for on are with as his they be at one have this from or had by hot word but what some we can out".split(" ");
const words = (rand: () => number, n: number) => Array.from({ length: n }, () => VOCAB[Math.floor(rand() * VOCAB.length)]).join(" ");

/** The backends of one run: fresh caches every time. */
interface Backends {
  urls: string[];
  /** Prompt tokens received and how many of them came from the prefix cache. */
  tokens(): { prompt: number; cached: number };
  close(): Promise<void>;
}

async function mockBackends(): Promise<Backends> {
  const mocks: PrefixMock[] = [];
  for (let i = 0; i < E; i++) mocks.push(await startPrefixMock(`ep${i}`, { prefillMsPerToken: PREFILL_MS, decodeMsPerToken: 1, outputTokens: OUTPUT_TOKENS, cacheTokens: CACHE_TOKENS }));
  return {
    urls: mocks.map((m) => m.url),
    tokens: () => ({ prompt: mocks.reduce((s, m) => s + m.stats.promptTokens, 0), cached: mocks.reduce((s, m) => s + m.stats.cachedTokens, 0) }),
    close: async () => void (await Promise.all(mocks.map((m) => m.close()))),
  };
}

let ggufPath: string | undefined;
async function llamaBackends(): Promise<Backends> {
  const { startLlamaChatServer } = await import("../e2e/llama/llama-chat-server.js");
  if (!ggufPath) {
    const { writeTinyLlamaGguf } = await import("../e2e/llama/tiny-gguf.js");
    ggufPath = join(mkdtempSync(join(tmpdir(), "rr-affinity-")), "bench.gguf");
    writeTinyLlamaGguf(ggufPath, { embd: 256, layers: 4, heads: 4, ff: 512, context: 4096 });
  }
  const servers: LlamaChatServer[] = [];
  for (let i = 0; i < E; i++) servers.push(await startLlamaChatServer(ggufPath, { threads: 1, promptCache: true, slots: LLAMA_SLOTS, contextSize: 4096, modelName: "bench" }));
  return {
    urls: servers.map((s) => s.url),
    tokens: () => ({ prompt: servers.reduce((s, m) => s + m.stats.promptTokens, 0), cached: servers.reduce((s, m) => s + m.stats.cachedTokens, 0) }),
    close: async () => void (await Promise.all(servers.map((s) => s.close()))),
  };
}

interface RunResult {
  ttftMs: number[];
  wallMs: number;
  prefillTokens: number;
  promptTokens: number;
  cachedTokens: number;
  hits: number;
  misses: number;
  failed: number;
}

async function runOnce(affinity: boolean): Promise<RunResult> {
  const backends = LLAMA ? await llamaBackends() : await mockBackends();
  const urls = backends.urls;
  const config = buildConfig({
    server: { host: "127.0.0.1", port: 0 },
    endpoints: urls.map((url, i) => ({ name: `ep${i}`, url, kind: "chat", max_concurrency: SLOTS, timeouts: { first_byte: "10m", idle: "10m" } })),
    models: { bench: { endpoints: urls.map((_, i) => `ep${i}`) } },
    routing: { affinity, queue_timeout: "10m", retry: { attempts: 1 } },
  });
  const router = await startRouter(config, { logger: createLogger("silent") });
  const client = new OpenAI({ baseURL: `${router.url}/v1`, apiKey: "x", maxRetries: 0, timeout: 600_000 });
  const rand = rng(Number(f.seed ?? 1));
  const instructions = words(rand, 300);
  const plans = Array.from({ length: CONVERSATIONS }, (_, c) => ({
    useConversation: c % 2 === 1,
    turns: Array.from({ length: TURNS }, (_, t) => words(rand, t === 0 ? 200 : 60)),
    think: Array.from({ length: TURNS }, () => Math.floor(rand() * 20)),
  }));
  const ttft: number[] = [];
  let failed = 0;
  const started = performance.now();
  await Promise.all(
    plans.map(async (plan) => {
      const conv = plan.useConversation ? await client.conversations.create() : null;
      let previous: string | undefined;
      for (let t = 0; t < TURNS; t++) {
        await new Promise((r) => setTimeout(r, plan.think[t]));
        const t0 = performance.now();
        let first = 0;
        try {
          const stream = await client.responses.create({
            model: "bench",
            instructions,
            input: plan.turns[t]!,
            stream: true,
            max_output_tokens: OUTPUT_TOKENS,
            ...(conv ? { conversation: conv.id } : previous ? { previous_response_id: previous } : {}),
          });
          for await (const ev of stream) {
            if (ev.type === "response.output_text.delta" && !first) first = performance.now();
            if (ev.type === "response.created") previous = ev.response.id; // completed or incomplete (max_output_tokens), the turn chains
            if (ev.type === "response.failed") failed++;
          }
          ttft.push((first || performance.now()) - t0);
        } catch {
          failed++;
        }
      }
    }),
  );
  const wallMs = performance.now() - started;
  const metrics = await (await fetch(`${router.url}/metrics`)).text();
  const count = (result: string) =>
    metrics
      .split("\n")
      .filter((l) => l.startsWith("responses_router_affinity_total") && l.includes(`result="${result}"`))
      .reduce((sum, l) => sum + Number(l.split(" ").at(-1)), 0);
  await router.close(1000);
  const { prompt, cached } = backends.tokens();
  await backends.close();
  return { ttftMs: ttft, wallMs, prefillTokens: prompt - cached, promptTokens: prompt, cachedTokens: cached, hits: count("hit"), misses: count("miss"), failed };
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] ?? Number.NaN;
}

const on = await runOnce(true);
const off = await runOnce(false);
const setup = LLAMA
  ? `${E} llama.cpp servers (generated random-weight LLaMA embd 256 x 4 layers, 1 thread, ${LLAMA_SLOTS} cache slots and ${SLOTS} request at a time each, prompt cache on), ${CONVERSATIONS} concurrent conversations x ${TURNS} turns, at most ${OUTPUT_TOKENS} output tokens`
  : `${E} mock endpoints (${SLOTS} slots, prefill ${PREFILL_MS} ms/uncached token, one prefill at a time, prefix cache ${CACHE_TOKENS} tokens), ${CONVERSATIONS} concurrent conversations x ${TURNS} turns, ${OUTPUT_TOKENS} output tokens`;
console.log(`\n${setup}\n`);
console.log("| routing.affinity | TTFT p50 | TTFT p99 | prefill tokens | cached / prompt tokens | affinity hits / misses | wall | failed |");
console.log("| --- | --- | --- | --- | --- | --- | --- | --- |");
for (const [name, r] of [["true", on], ["false", off]] as const) {
  const cached = `${r.cachedTokens} / ${r.promptTokens} (${((100 * r.cachedTokens) / r.promptTokens).toFixed(0)}%)`;
  console.log(
    `| ${name} | ${pct(r.ttftMs, 50).toFixed(0)} ms | ${pct(r.ttftMs, 99).toFixed(0)} ms | ${r.prefillTokens} | ${cached} | ${r.hits} / ${r.misses} | ${(r.wallMs / 1000).toFixed(1)} s | ${r.failed} |`,
  );
}
