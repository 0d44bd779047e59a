import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startDemoBackend, type DemoBackend } from "../../src/demo/backend.js";

/** A temporary `files.storage` directory, removed by `cleanup`. */
export function tempStorage(): { dir: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), "rr-files-"));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A router config whose `emb` model is the demo backend's deterministic embeddings (and `chat` its canned chat). */
export function filesConfig(backendUrl: string, storage: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    endpoints: [
      { name: "demo", url: backendUrl, kind: "chat", max_concurrency: 8 },
      { name: "dead", url: "http://127.0.0.1:9/v1", kind: "chat", max_concurrency: 2 },
    ],
    models: { chat: { endpoints: ["demo"] }, emb: { endpoints: ["demo"] }, "dead-emb": { endpoints: ["dead"] } },
    routing: { queue_timeout: "500ms", retry: { attempts: 1, max_time: "2s" } },
    tools: { file_search: { embedding_model: "emb", embedding_attempts: 2 } },
    files: { storage },
    ...extra,
  };
}

/** `cfg` with more endpoints and models: those of a test's own mock upstreams. */
export function withModels(cfg: Record<string, unknown>, endpoints: object[], models: Record<string, object>): Record<string, unknown> {
  return { ...cfg, endpoints: [...(cfg.endpoints as object[]), ...endpoints], models: { ...(cfg.models as object), ...models } };
}

/** The files config plus model `local`, served by the chat mock at `llmUrl`. */
export function filesConfigWithChat(backendUrl: string, storage: string, llmUrl: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { ...withModels(filesConfig(backendUrl, storage), [{ name: "llm", url: llmUrl, kind: "chat" }], { local: { endpoints: ["llm"] } }), ...extra };
}

export async function demoBackend(): Promise<DemoBackend> {
  return startDemoBackend(0, { delayMs: 0 });
}

/** A one-page PDF whose page shows `text` (Helvetica, one line): enough for pdf.js to read back. */
export function tinyPdf(text: string): Buffer {
  const escaped = text.replace(/[\\()]/g, (c) => `\\${c}`);
  const stream = `BT /F1 12 Tf 72 720 Td (${escaped}) Tj ET`;
  const objects = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
    `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`,
    "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
  ];
  let out = "%PDF-1.4\n";
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(out.length);
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = out.length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, "0")} 00000 n \n`).join("")}`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, "latin1");
}
