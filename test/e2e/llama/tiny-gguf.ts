import { writeFileSync } from "node:fs";

/**
 * Writes a tiny LLaMA model as a GGUF v3 file: random F32 weights (seeded, so
 * every run writes the same bytes), a SentencePiece-style vocabulary with byte
 * fallback (any text tokenizes), ChatML special tokens and a ChatML chat template.
 * A few hundred KB: llama.cpp loads and runs it for real; what it says is noise.
 */

const ALIGN = 32;
const enum T {
  U32 = 4,
  I32 = 5,
  F32 = 6,
  BOOL = 7,
  STRING = 8,
  ARRAY = 9,
}
const enum TokenType {
  Normal = 1,
  Unknown = 2,
  Control = 3,
  Byte = 6,
}

export const CHATML_TEMPLATE =
  "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";

const WORDS = "the a of to and in is it you that he was for on are with as I his they be at one have this from or had by hot word but what some we can out other were all there when up use your how said an each she which do their time if will way about many then them write would like so these her long make thing see him two has look more day could go come did number sound no most people my over know water than call first who may down side been now find hello world hi router model token stream test".split(" ");

export interface TinyModelShape {
  embd: number;
  layers: number;
  heads: number;
  ff: number;
  context: number;
}

export const DEFAULT_SHAPE: TinyModelShape = { embd: 32, layers: 2, heads: 4, ff: 64, context: 512 };

export function tinyVocabulary(): { tokens: string[]; scores: number[]; types: number[] } {
  const tokens: string[] = ["<unk>", "<s>", "</s>", "<|im_start|>", "<|im_end|>"];
  const types: number[] = [TokenType.Unknown, TokenType.Control, TokenType.Control, TokenType.Control, TokenType.Control];
  for (let b = 0; b < 256; b++) {
    tokens.push(`<0x${b.toString(16).toUpperCase().padStart(2, "0")}>`);
    types.push(TokenType.Byte);
  }
  // Every prefix of every word is a piece too: SentencePiece merges pairs of pieces, so a word is reachable only through them.
  const pieces = new Set<string>(["\u2581", ..."abcdefghijklmnopqrstuvwxyz".split("")]);
  for (const w of WORDS) for (let n = 1; n <= w.length; n++) pieces.add(`\u2581${w.slice(0, n)}`);
  for (const p of pieces) {
    tokens.push(p);
    types.push(TokenType.Normal);
  }
  // Longer pieces score higher, so the tokenizer prefers whole words.
  const scores = tokens.map((t, i) => (types[i] === TokenType.Normal ? -100 + t.length : 0));
  return { tokens, scores, types };
}

/** A small deterministic PRNG (mulberry32). */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

class Writer {
  private chunks: Buffer[] = [];
  size = 0;
  push(b: Buffer): void {
    this.chunks.push(b);
    this.size += b.length;
  }
  u32(v: number): void {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(v);
    this.push(b);
  }
  i32(v: number): void {
    const b = Buffer.alloc(4);
    b.writeInt32LE(v);
    this.push(b);
  }
  u64(v: number): void {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt(v));
    this.push(b);
  }
  f32(v: number): void {
    const b = Buffer.alloc(4);
    b.writeFloatLE(v);
    this.push(b);
  }
  str(s: string): void {
    const b = Buffer.from(s, "utf8");
    this.u64(b.length);
    this.push(b);
  }
  pad(): void {
    const rem = this.size % ALIGN;
    if (rem) this.push(Buffer.alloc(ALIGN - rem));
  }
  bytes(): Buffer {
    return Buffer.concat(this.chunks);
  }
}

type Meta = [string, T, unknown] | [string, T.ARRAY, T, unknown[]];

function writeMeta(w: Writer, entry: Meta): void {
  const [key, type] = entry;
  w.str(key);
  w.u32(type);
  const one = (t: T, v: unknown) => {
    if (t === T.U32) w.u32(v as number);
    else if (t === T.I32) w.i32(v as number);
    else if (t === T.F32) w.f32(v as number);
    else if (t === T.BOOL) w.push(Buffer.from([v ? 1 : 0]));
    else if (t === T.STRING) w.str(v as string);
  };
  if (type === T.ARRAY) {
    const [, , elem, values] = entry as [string, T.ARRAY, T, unknown[]];
    w.u32(elem);
    w.u64(values.length);
    for (const v of values) one(elem, v);
  } else one(type, entry[2]);
}

/** The GGUF bytes of a random tiny LLaMA. */
export function tinyLlamaGguf(shape: TinyModelShape = DEFAULT_SHAPE, seed = 42): Buffer {
  const vocab = tinyVocabulary();
  const nVocab = vocab.tokens.length;
  const { embd, layers, heads, ff, context } = shape;
  const meta: Meta[] = [
    ["general.architecture", T.STRING, "llama"],
    ["general.name", T.STRING, "responses-router tiny random llama"],
    ["general.alignment", T.U32, ALIGN],
    ["llama.context_length", T.U32, context],
    ["llama.embedding_length", T.U32, embd],
    ["llama.block_count", T.U32, layers],
    ["llama.feed_forward_length", T.U32, ff],
    ["llama.attention.head_count", T.U32, heads],
    ["llama.attention.head_count_kv", T.U32, heads],
    ["llama.rope.dimension_count", T.U32, embd / heads],
    ["llama.attention.layer_norm_rms_epsilon", T.F32, 1e-5],
    ["llama.vocab_size", T.U32, nVocab],
    ["tokenizer.ggml.model", T.STRING, "llama"],
    ["tokenizer.ggml.tokens", T.ARRAY, T.STRING, vocab.tokens],
    ["tokenizer.ggml.scores", T.ARRAY, T.F32, vocab.scores],
    ["tokenizer.ggml.token_type", T.ARRAY, T.I32, vocab.types],
    ["tokenizer.ggml.bos_token_id", T.U32, 1],
    ["tokenizer.ggml.eos_token_id", T.U32, 4], // <|im_end|> ends a ChatML turn
    ["tokenizer.ggml.unknown_token_id", T.U32, 0],
    ["tokenizer.ggml.padding_token_id", T.U32, 0],
    ["tokenizer.ggml.add_bos_token", T.BOOL, false],
    ["tokenizer.ggml.add_eos_token", T.BOOL, false],
    ["tokenizer.chat_template", T.STRING, CHATML_TEMPLATE],
  ];
  // name, dims (ne0 first, as GGUF stores them), init: "one" for norms, else random.
  const tensors: [string, number[], "one" | "rand"][] = [
    ["token_embd.weight", [embd, nVocab], "rand"],
    ["output_norm.weight", [embd], "one"],
    ["output.weight", [embd, nVocab], "rand"],
  ];
  for (let i = 0; i < layers; i++) {
    tensors.push(
      [`blk.${i}.attn_norm.weight`, [embd], "one"],
      [`blk.${i}.attn_q.weight`, [embd, embd], "rand"],
      [`blk.${i}.attn_k.weight`, [embd, embd], "rand"],
      [`blk.${i}.attn_v.weight`, [embd, embd], "rand"],
      [`blk.${i}.attn_output.weight`, [embd, embd], "rand"],
      [`blk.${i}.ffn_norm.weight`, [embd], "one"],
      [`blk.${i}.ffn_gate.weight`, [embd, ff], "rand"],
      [`blk.${i}.ffn_up.weight`, [embd, ff], "rand"],
      [`blk.${i}.ffn_down.weight`, [ff, embd], "rand"],
    );
  }

  const head = new Writer();
  head.push(Buffer.from("GGUF", "ascii"));
  head.u32(3);
  head.u64(tensors.length);
  head.u64(meta.length);
  for (const m of meta) writeMeta(head, m);
  let offset = 0;
  const data = new Writer();
  const rand = random(seed);
  for (const [name, dims, init] of tensors) {
    head.str(name);
    head.u32(dims.length);
    for (const d of dims) head.u64(d);
    head.u32(0); // GGML_TYPE_F32
    head.u64(offset);
    const n = dims.reduce((a, b) => a * b, 1);
    const values = new Float32Array(n);
    for (let i = 0; i < n; i++) values[i] = init === "one" ? 1 : (rand() * 2 - 1) * 0.5;
    data.push(Buffer.from(values.buffer));
    data.pad();
    offset = data.size;
  }
  head.pad();
  return Buffer.concat([head.bytes(), data.bytes()]);
}

export function writeTinyLlamaGguf(path: string, shape?: TinyModelShape, seed?: number): number {
  const bytes = tinyLlamaGguf(shape, seed);
  writeFileSync(path, bytes);
  return bytes.length;
}
