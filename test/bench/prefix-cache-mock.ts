/**
 * A chat-completions backend with a prefix cache, for the affinity benchmark. The prompt
 * (the chat template rendered as "role: content" lines) is cut into words, one word = one
 * token, grouped in blocks of BLOCK tokens; a block is cached when the hash of everything up
 * to its end is in the endpoint's LRU (vLLM's automatic prefix caching works this way;
 * llama.cpp's slots keep one prefix each). Prefill costs `prefillMsPerToken` per UNCACHED
 * token and runs one request at a time per endpoint (the compute is the bottleneck); decode
 * then streams `outputTokens` words. After a request, the blocks of its prompt and answer are
 * cached, evicting the least recently used beyond `cacheTokens`.
 */
import { createHash } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export const BLOCK = 16;

export interface PrefixMockOptions {
  prefillMsPerToken: number;
  decodeMsPerToken: number;
  outputTokens: number;
  cacheTokens: number;
}

export interface PrefixMock {
  url: string;
  stats: { requests: number; promptTokens: number; cachedTokens: number; prefillTokens: number };
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Block hashes of a token list: hash k covers tokens [0, (k+1)*BLOCK). */
function blockHashes(tokens: string[]): string[] {
  const out: string[] = [];
  let prev = "";
  for (let end = BLOCK; end <= tokens.length; end += BLOCK) {
    prev = createHash("sha1").update(prev).update(tokens.slice(end - BLOCK, end).join(" ")).digest("hex");
    out.push(prev);
  }
  return out;
}

function render(messages: { role: string; content: unknown }[]): string[] {
  const text = messages.map((m) => `${m.role}: ${typeof m.content === "string" ? m.content : JSON.stringify(m.content)}`).join("\n");
  return text.split(/\s+/).filter(Boolean);
}

export async function startPrefixMock(name: string, o: PrefixMockOptions): Promise<PrefixMock> {
  const lru = new Map<string, true>();
  const capacity = Math.floor(o.cacheTokens / BLOCK);
  let compute: Promise<void> = Promise.resolve();
  const stats = { requests: 0, promptTokens: 0, cachedTokens: 0, prefillTokens: 0 };
  let answers = 0;

  const remember = (hashes: string[]) => {
    for (const h of hashes) {
      lru.delete(h);
      lru.set(h, true);
    }
    while (lru.size > capacity) lru.delete(lru.keys().next().value!);
  };

  const server: Server = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", async () => {
      if (!req.url?.endsWith("/chat/completions")) {
        res.writeHead(404).end();
        return;
      }
      const parsed = JSON.parse(body) as { model: string; messages: { role: string; content: unknown }[] };
      const tokens = render(parsed.messages);
      const hashes = blockHashes(tokens);
      let cachedBlocks = 0;
      while (cachedBlocks < hashes.length && lru.has(hashes[cachedBlocks]!)) cachedBlocks++;
      const cached = cachedBlocks * BLOCK;
      const uncached = tokens.length - cached;
      stats.requests++;
      stats.promptTokens += tokens.length;
      stats.cachedTokens += cached;
      stats.prefillTokens += uncached;
      // Prefill: one request at a time per endpoint.
      const turn = compute.then(() => sleep(uncached * o.prefillMsPerToken));
      compute = turn;
      await turn;
      const words = Array.from({ length: o.outputTokens }, (_, i) => `${name}-w${++answers % 997}-${i}`);
      remember(blockHashes([...tokens, "assistant:", ...words]));
      res.writeHead(200, { "content-type": "text/event-stream" });
      const chunk = (delta: object, finish: string | null = null) =>
        `data: ${JSON.stringify({ id: "chatcmpl-b", object: "chat.completion.chunk", created: 1, model: parsed.model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
      res.write(chunk({ role: "assistant", content: "" }));
      for (const w of words) {
        res.write(chunk({ content: `${w} ` }));
        await sleep(o.decodeMsPerToken);
      }
      res.write(chunk({}, "stop"));
      const usage = { prompt_tokens: tokens.length, completion_tokens: words.length, total_tokens: tokens.length + words.length, prompt_tokens_details: { cached_tokens: cached } };
      res.write(`data: ${JSON.stringify({ id: "chatcmpl-b", object: "chat.completion.chunk", created: 1, model: parsed.model, choices: [], usage })}\n\n`);
      res.end("data: [DONE]\n\n");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    stats,
    close: () => new Promise((r) => server.close(() => r())),
  };
}
