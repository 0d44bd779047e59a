/**
 * Embeddings for the vector index: the model `tools.file_search.embedding_model` names, called
 * at its /v1/embeddings through the model's own pool: the same `UpstreamAttempt` as every other
 * upstream call (slot, failover within the pool, down the model's fallbacks, health, metrics),
 * never an HTTP client of its own. The model must answer `data[i].embedding` as an array of
 * numbers (`encoding_format: "float"` is asked for).
 */
import { ApiError } from "../../ops/errors.js";
import { fallbackSteps, targetsFor } from "../../runtime/models.js";
import type { Runtime } from "../../runtime/runtime.js";
import { UpstreamAttempt } from "../../upstream/attempt.js";

export interface Embedded {
  vectors: number[][];
  /** `usage.prompt_tokens` as the backend reported it (0 when it did not). */
  tokens: number;
}

/** Turns texts into vectors: the router's pool in production, a deterministic one in the bench. */
export interface Embedder {
  embed(texts: string[], signal: AbortSignal): Promise<Embedded>;
}

export const noEmbeddingModel = () =>
  new ApiError(503, "File search is not set up on this router: tools.file_search.embedding_model names no model.", { type: "server_error", code: "embedding_model_unavailable" });

/** The configured embedding model through the runtime's pool. */
export class PoolEmbedder implements Embedder {
  constructor(private readonly rt: Runtime) {}

  async embed(texts: string[], signal: AbortSignal): Promise<Embedded> {
    const model = this.rt.config.tools.file_search.embedding_model;
    if (!model) throw noEmbeddingModel();
    const { modelCfg, targets } = targetsFor(this.rt.config, model);
    const attempt = await UpstreamAttempt.open(this.rt, {
      model,
      steps: fallbackSteps(this.rt.config, model, modelCfg, targets),
      routing: this.rt.config.routing,
      signal,
      path: "/embeddings",
      prepare: (lease) => ({ path: "/embeddings", body: JSON.stringify({ model: lease.target.upstreamModel, input: texts, encoding_format: "float" }) }),
    });
    let ok = false;
    try {
      const { json } = await attempt.readJson();
      const out = readEmbeddings(json, texts.length);
      ok = true;
      return out;
    } finally {
      attempt.end(ok);
    }
  }
}

/** The vectors of an embeddings answer, in input order; a 502 when the answer is not one. */
export function readEmbeddings(json: unknown, count: number): Embedded {
  const body = json as { data?: Array<{ index?: number; embedding?: unknown }>; usage?: { prompt_tokens?: number } } | null;
  const data = body?.data;
  if (!Array.isArray(data) || data.length !== count) throw badAnswer(`expected ${count} embeddings, got ${Array.isArray(data) ? data.length : "none"}`);
  const vectors: number[][] = new Array(count);
  data.forEach((d, i) => {
    const at = typeof d.index === "number" ? d.index : i;
    if (!Array.isArray(d.embedding) || d.embedding.length === 0 || typeof d.embedding[0] !== "number") throw badAnswer("an embedding is not an array of numbers");
    vectors[at] = d.embedding as number[];
  });
  const dim = vectors[0]?.length;
  if (vectors.some((v) => !v || v.length !== dim)) throw badAnswer("the embeddings differ in length");
  const tokens = body?.usage?.prompt_tokens;
  return { vectors, tokens: typeof tokens === "number" && tokens > 0 ? tokens : 0 };
}

const badAnswer = (detail: string) => new ApiError(502, `The embedding model's answer is not usable: ${detail}.`, { type: "server_error", code: "bad_upstream_response" });
