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
 *   npm run bench:affinity -- --upstreams http://127.0.0.1:8081/v1,http://127.0.0.1:8082/v1 --model m
 *       (real backends instead of the mock: no prefill counts, TTFT only)
 */
import OpenAI from "openai";
import { parseArgs } from "node:util";
import { buildConfig } from "../../src/config/load.js";
import { createLogger } from "../../src/log.js";
import { startRouter } from "../../src/server.js";
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
    upstreams: { type: "string" },
    model: { type: "string" },
    "max-output-tokens": { type: "string" },
    words: { type: "string" },
  },
});
const E = Number(f.endpoints ?? 3);
const SLOTS = Number(f.slots ?? 4);
const CONVERSATIONS = Number(f.conversations ?? 24);
const TURNS = Number(f.turns ?? 6);
const PREFILL_MS = Number(f["prefill-ms"] ?? 0.1);
const CACHE_TOKENS = Number(f["cache-tokens"] ?? 12_000);
const OUTPUT_TOKENS = Number(f["output-tokens"] ?? 30);
const REAL = f.upstreams?.split(",");
/** Scales the prompt sizes (real backends with a small context use less). */
const WORDS = Number(f.words ?? 1);

// A small deterministic PRNG, so both runs see the same conversations and think times.
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32);
}
const VOCAB = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau upsilon phi chi psi omega".split(" ");
const words = (rand: () => number, n: number) => Array.from({ length: Math.max(1, Math.round(n * WORDS)) }, () => VOCAB[Math.floor(rand() * VOCAB.length)]).join(" ");

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
  const mocks: PrefixMock[] = [];
  if (!REAL) for (let i = 0; i < E; i++) mocks.push(await startPrefixMock(`ep${i}`, { prefillMsPerToken: PREFILL_MS, decodeMsPerToken: 1, outputTokens: OUTPUT_TOKENS, cacheTokens: CACHE_TOKENS }));
  const urls = REAL ?? mocks.map((m) => m.url);
  const model = f.model ?? "bench";
  const config = buildConfig({
    server: { host: "127.0.0.1", port: 0 },
    endpoints: urls.map((url, i) => ({ name: `ep${i}`, url, kind: "chat", max_concurrency: SLOTS, timeouts: { first_byte: "10m", idle: "10m" } })),
    models: { bench: { endpoints: urls.map((_, i) => `ep${i}`), upstream_model: model } },
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
  const maxOut = f["max-output-tokens"] ? Number(f["max-output-tokens"]) : undefined;
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
            max_output_tokens: maxOut,
            ...(conv ? { conversation: conv.id } : previous ? { previous_response_id: previous } : {}),
          });
          for await (const ev of stream) {
            if (ev.type === "response.output_text.delta" && !first) first = performance.now();
            if (ev.type === "response.completed") previous = ev.response.id;
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
  await Promise.all(mocks.map((m) => m.close()));
  const sum = (k: "prefillTokens" | "promptTokens" | "cachedTokens") => mocks.reduce((s, m) => s + m.stats[k], 0);
  return { ttftMs: ttft, wallMs, prefillTokens: sum("prefillTokens"), promptTokens: sum("promptTokens"), cachedTokens: sum("cachedTokens"), hits: count("hit"), misses: count("miss"), failed };
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] ?? Number.NaN;
}

const on = await runOnce(true);
const off = await runOnce(false);
const setup = REAL
  ? `${urls()} real endpoints, ${SLOTS} slots each, ${CONVERSATIONS} conversations x ${TURNS} turns`
  : `${E} mock endpoints (${SLOTS} slots, prefill ${PREFILL_MS} ms/uncached token, one prefill at a time, prefix cache ${CACHE_TOKENS} tokens), ${CONVERSATIONS} concurrent conversations x ${TURNS} turns, ${OUTPUT_TOKENS} output tokens`;
function urls() {
  return REAL?.length ?? 0;
}
console.log(`\n${setup}\n`);
console.log("| routing.affinity | TTFT p50 | TTFT p99 | prefill tokens | cached / prompt tokens | affinity hits / misses | wall | failed |");
console.log("| --- | --- | --- | --- | --- | --- | --- | --- |");
for (const [name, r] of [["true", on], ["false", off]] as const) {
  const cached = REAL ? "n/a" : `${r.cachedTokens} / ${r.promptTokens} (${((100 * r.cachedTokens) / r.promptTokens).toFixed(0)}%)`;
  console.log(
    `| ${name} | ${pct(r.ttftMs, 50).toFixed(0)} ms | ${pct(r.ttftMs, 99).toFixed(0)} ms | ${REAL ? "n/a" : r.prefillTokens} | ${cached} | ${r.hits} / ${r.misses} | ${(r.wallMs / 1000).toFixed(1)} s | ${r.failed} |`,
  );
}
