/**
 * `check --probe` for file_search: the embedding model `tools.file_search.embedding_model`
 * names is asked to embed one word at each endpoint of its pool (POST /embeddings, the
 * endpoint's own key), and the answer must be vectors of numbers: what indexing and search
 * will ask of it. Never prints an endpoint's URL or key.
 */
import type { RouterConfig } from "../config/load.js";
import { UpstreamClient } from "../upstream/client.js";
import { UpstreamFailure } from "../upstream/errors.js";
import { readEmbeddings } from "./ingest/embed.js";

export interface EmbeddingProbe {
  model: string;
  endpoint: string;
  ok: boolean;
  detail: string;
}

export async function probeEmbeddingModel(config: RouterConfig, timeoutMs = 10_000): Promise<EmbeddingProbe[]> {
  const model = config.tools.file_search.embedding_model;
  if (!model) return [];
  const targets = config.targets.get(model) ?? [];
  return Promise.all(
    targets.map(async (t): Promise<EmbeddingProbe> => {
      const ep = config.endpoints.find((e) => e.name === t.endpoint)!;
      const result = (ok: boolean, detail: string) => ({ model, endpoint: ep.name, ok, detail });
      if (ep.kind === "anthropic") return result(false, "an Anthropic Messages API endpoint has no /embeddings");
      const client = new UpstreamClient(ep);
      try {
        const reply = await client.post("/embeddings", JSON.stringify({ model: t.upstreamModel, input: ["probe"], encoding_format: "float" }), AbortSignal.timeout(timeoutMs));
        const { vectors } = readEmbeddings(JSON.parse(await reply.body.text()), 1);
        return result(true, `embeds '${t.upstreamModel}': ${vectors[0]!.length} dimensions`);
      } catch (err) {
        if (err instanceof UpstreamFailure && err.kind === "status") return result(false, `POST /embeddings answered HTTP ${err.status}: ${err.body?.message ?? ""}`.trim());
        const e = err as Error;
        return result(false, e.name === "TimeoutError" || e.name === "AbortError" ? `no answer within ${timeoutMs} ms` : `unusable (${e.message})`);
      } finally {
        await client.destroy().catch(() => {});
      }
    }),
  );
}
