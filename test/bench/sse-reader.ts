/**
 * Micro-benchmark of the upstream SSE reader (src/upstream/sse.ts), a hot path of every
 * streamed request: builds A/B in one run, interleaved rounds, median ns per frame and bytes
 * allocated per frame (heap growth between forced GCs, so run with --expose-gc).
 *   npm run build && cp -r dist .bench/dist-base   (then change, build, and:)
 *   node --expose-gc --import tsx test/bench/sse-reader.ts --dists .bench/dist-base,dist [--rounds 7]
 * Workloads: LF frames one per read (the usual chat stream), LF with several frames per read,
 * CRLF frames split at odd offsets (sse-starlette behind a proxy). A dist whose sse.js has the
 * push parser (`SseParser`) is measured both ways: iterated (`readSseFrames`) and pushed (`:push`).
 */
import { resolve } from "node:path";
import { parseArgs } from "node:util";

type Reader = (body: AsyncIterable<Uint8Array | string>) => AsyncGenerator<{ data: string }>;
type Parser = new () => { push(chunk: Uint8Array, onFrame: (f: { data: string }) => void): boolean; end(onFrame: (f: { data: string }) => void): boolean };
const { values: f } = parseArgs({ options: { dists: { type: "string" }, rounds: { type: "string" }, frames: { type: "string" } } });
const dists = (f.dists ?? ".bench/dist-base,dist").split(",");
const rounds = Number(f.rounds ?? 7);
const framesPerRun = Number(f.frames ?? 200_000);
const readers: { name: string; run: (chunks: Uint8Array[]) => Promise<number> }[] = [];
for (const d of dists) {
  const mod = (await import(resolve(d, "upstream/sse.js"))) as { readSseFrames: Reader; SseParser?: Parser };
  readers.push({ name: d, run: (chunks) => run(mod.readSseFrames, chunks) });
  if (mod.SseParser) readers.push({ name: `${d}:push`, run: (chunks) => Promise.resolve(runPushed(mod.SseParser!, chunks)) });
}

const enc = new TextEncoder();
const chunk = (i: number) =>
  `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"tok${i} "},"finish_reason":null}]}\n\n`;
const frames = Array.from({ length: 64 }, (_, i) => chunk(i));
const reads = {
  "lf-1-per-read": frames.map((s) => enc.encode(s)),
  "lf-4-per-read": Array.from({ length: 16 }, (_, i) => enc.encode(frames.slice(i * 4, i * 4 + 4).join(""))),
  "crlf-odd-splits": (() => {
    const all = enc.encode(frames.join("").replace(/\n/g, "\r\n"));
    const out: Uint8Array[] = [];
    for (let i = 0; i < all.length; i += 97) out.push(all.subarray(i, i + 97));
    return out;
  })(),
};

async function run(read: Reader, chunks: Uint8Array[]): Promise<number> {
  let n = 0;
  const loops = Math.ceil(framesPerRun / frames.length);
  for (let l = 0; l < loops; l++) {
    async function* body() {
      for (const c of chunks) yield c;
    }
    for await (const fr of read(body())) n += fr.data.length > 0 ? 1 : 0;
  }
  return n;
}

function runPushed(Parser: Parser, chunks: Uint8Array[]): number {
  let n = 0;
  const onFrame = (fr: { data: string }) => {
    n += fr.data.length > 0 ? 1 : 0;
  };
  const loops = Math.ceil(framesPerRun / frames.length);
  for (let l = 0; l < loops; l++) {
    const parser = new Parser();
    for (const c of chunks) parser.push(c, onFrame);
    parser.end(onFrame);
  }
  return n;
}

const gc = (globalThis as { gc?: () => void }).gc;
const res: Record<string, Record<string, { ns: number[]; bytes: number[] }>> = {};
for (let r = 0; r < rounds + 1; r++) {
  for (const [w, chunks] of Object.entries(reads)) {
    for (const { name, run } of readers) {
      gc?.();
      const heap0 = process.memoryUsage().heapUsed;
      const t0 = process.hrtime.bigint();
      const n = await run(chunks);
      const ns = Number(process.hrtime.bigint() - t0) / n;
      const bytes = (process.memoryUsage().heapUsed - heap0) / n; // growth without a GC in between: a floor when a GC ran
      if (r === 0) continue; // warm-up round
      const cell = ((res[w] ??= {})[name] ??= { ns: [], bytes: [] });
      cell.ns.push(ns);
      cell.bytes.push(bytes);
    }
  }
}
const med = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]!;
// On a shared machine the minimum is the least disturbed round; the median shows the spread.
console.log(`SSE reader, ${framesPerRun} frames per run, ${rounds} rounds: ns/frame min / median, heap bytes/frame median${gc ? "" : " (run with --expose-gc)"}`);
for (const w of Object.keys(reads)) {
  const cells = readers.map(({ name }) => {
    const c = res[w]![name]!;
    return `${name}=${Math.min(...c.ns).toFixed(0)}/${med(c.ns).toFixed(0)}ns ${med(c.bytes).toFixed(0)}B`;
  });
  console.log(w.padEnd(16), cells.join("  "));
}
