/**
 * CPU per translated chunk, in process, with process.cpuUsage(): the stream hot path
 * as execute.ts runs it, in two cuts:
 *   - translator: ChatStreamTranslator.push() on already-parsed chunks;
 *   - pipeline:   upstream bytes -> SseParser -> the chunk read by its shape (FrameShape) or
 *                 parsed -> the translator -> EventJson per event -> SSE framing, one string
 *                 per upstream read (what the chat adapter does per chunk, minus the sockets).
 * Run alone: `node --import tsx test/bench/translator-cpu.ts`.
 */
import { randomId } from "../../src/wire/ids.js";
import { ChatStreamTranslator, FrameShape, responseSkeleton, textOnlyContent } from "../../src/translate/index.js";
import type { ChatChunkLike } from "../../src/translate/index.js";
import { SseParser, type SseFrame } from "../../src/upstream/sse.js";
import { EventJson } from "../../src/wire/event-json.js";
import type { StreamEvent } from "../../src/wire/types.js";

/** The translators' clock: when a response completes (`completed_at`). */
const CLOCK = () => 1_700_000_100;

export interface TranslatorCpu {
  chunks: number;
  translatorUsPerChunk: number;
  pipelineUsPerChunk: number;
}

const WORDS = ["Hello", " there", ",", " this", " is", " a", " fixed", " small", " answer"];
const PER_STREAM = 500;

function chunkJson(i: number): string {
  return JSON.stringify({ id: "chatcmpl-bench", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: { content: WORDS[i % WORDS.length] }, finish_reason: null }] });
}

const skeleton = () => responseSkeleton({ model: "m", input: "hi" }, { id: randomId("resp"), createdAt: 1, model: "m", status: "in_progress" });

function cpuUs(fn: () => void): number {
  const before = process.cpuUsage();
  fn();
  const d = process.cpuUsage(before);
  return d.user + d.system;
}

async function cpuUsAsync(fn: () => Promise<void>): Promise<number> {
  const before = process.cpuUsage();
  await fn();
  const d = process.cpuUsage(before);
  return d.user + d.system;
}

/** `streams` streams of PER_STREAM text chunks each; bounded by maxMs per cut. */
export async function measureTranslatorCpu(streams = 200, maxMs = 10_000): Promise<TranslatorCpu> {
  const parsed: ChatChunkLike[] = [];
  for (let i = 0; i < PER_STREAM; i++) parsed.push(JSON.parse(chunkJson(i)) as ChatChunkLike);
  // Upstream bytes as they arrive: one network chunk per SSE frame.
  const frames = Array.from({ length: PER_STREAM }, (_, i) => Buffer.from(`data: ${chunkJson(i)}\n\n`));
  frames.push(Buffer.from("data: [DONE]\n\n"));

  // Warm up both paths so the JIT has settled.
  for (let s = 0; s < 20; s++) {
    const tr = new ChatStreamTranslator(skeleton(), randomId, CLOCK);
    tr.start();
    for (const c of parsed) tr.push(c);
    tr.finish();
  }

  let nT = 0;
  const t0 = performance.now();
  const translatorUs = cpuUs(() => {
    for (let s = 0; s < streams && performance.now() - t0 < maxMs; s++) {
      const tr = new ChatStreamTranslator(skeleton(), randomId, CLOCK);
      tr.start();
      for (let i = 0; i < parsed.length; i++) tr.push(parsed[i]!);
      tr.finish();
      nT += parsed.length;
    }
  });

  // What the chat adapter does per upstream read (responses/adapters/chat.ts), minus the sockets:
  // the SSE parser, each chunk read by its shape (or parsed and learned), the translator, the
  // events serialised as the router serialises them, one string written per read.
  let sinkBytes = 0;
  const runPipeline = async () => {
    const tr = new ChatStreamTranslator(skeleton(), randomId, CLOCK);
    const json = new EventJson();
    const shape = new FrameShape("content");
    const parser = new SseParser();
    let pending = "";
    const send = (events: StreamEvent[]) => {
      for (const ev of events) pending += `event: ${ev.type}\ndata: ${json.text(ev)}\n\n`;
    };
    send(tr.start());
    sinkBytes += pending.length;
    pending = "";
    const onFrame = (frame: SseFrame) => {
      if (frame.data === "[DONE]") return true;
      const text = shape.read(frame.data);
      if (text !== undefined) return void send(tr.pushText(text));
      const chunk = JSON.parse(frame.data) as ChatChunkLike;
      const learned = textOnlyContent(chunk);
      if (learned !== undefined) shape.learn(frame.data, learned);
      send(tr.push(chunk));
    };
    for (const f of frames) {
      parser.push(f, onFrame);
      sinkBytes += pending.length;
      pending = "";
    }
    send(tr.finish());
    sinkBytes += pending.length;
    pending = "";
  };
  for (let s = 0; s < 20; s++) await runPipeline();
  let nP = 0;
  const t1 = performance.now();
  const pipelineUs = await cpuUsAsync(async () => {
    for (let s = 0; s < streams && performance.now() - t1 < maxMs; s++) {
      await runPipeline();
      nP += PER_STREAM;
    }
  });
  if (sinkBytes === 0) throw new Error("pipeline produced nothing");
  return { chunks: nP, translatorUsPerChunk: translatorUs / nT, pipelineUsPerChunk: pipelineUs / nP };
}

const isMain = process.argv[1] && import.meta.url.endsWith(process.argv[1].replace(/^.*\//, ""));
if (isMain) console.log(await measureTranslatorCpu());
