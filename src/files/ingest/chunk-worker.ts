/**
 * The tokenizer's thread. js-tiktoken builds o200k_base's 200k-entry rank table when it is
 * made (seconds of CPU), and encoding a long file takes a while too: on the router's event loop
 * either would stall every request in flight. So chunking runs here, on a worker thread made
 * once per process (chunk.ts), which answers `{id, text, max, overlap}` with the chunks.
 * This file imports no module of the router's own: Node runs it as it is (types stripped)
 * under the tests as well as built.
 */
import { parentPort } from "node:worker_threads";
import { Tiktoken } from "js-tiktoken/lite";
import o200k from "js-tiktoken/ranks/o200k_base";

interface ChunkRequest {
  id: number;
  text: string;
  max: number;
  overlap: number;
}

const encoder = new Tiktoken(o200k);

/** Windows of `max` tokens, each starting `max - overlap` after the one before. */
function windows(text: string, max: number, overlap: number): Array<{ text: string; tokens: number }> {
  const tokens = encoder.encode(text);
  const out: Array<{ text: string; tokens: number }> = [];
  const step = Math.max(1, max - overlap);
  for (let start = 0; start < tokens.length; start += step) {
    const window = tokens.slice(start, start + max);
    const piece = encoder.decode(window).trim();
    if (piece) out.push({ text: piece, tokens: window.length });
    if (start + max >= tokens.length) break;
  }
  return out;
}

parentPort!.on("message", (req: ChunkRequest) => {
  try {
    parentPort!.postMessage({ id: req.id, chunks: windows(req.text, req.max, req.overlap) });
  } catch (err) {
    parentPort!.postMessage({ id: req.id, error: (err as Error)?.message ?? String(err) });
  }
});
