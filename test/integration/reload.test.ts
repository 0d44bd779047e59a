import { mkdtempSync, renameSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startChildRouter, type ChildRouter } from "../helpers/child-router.js";
import { chatTextChunks, startMockUpstream, type MockUpstream } from "../helpers/mock-upstream.js";

let a: MockUpstream;
let b: MockUpstream;
let router: ChildRouter;
const dir = mkdtempSync(join(tmpdir(), "rr-reload-"));
const file = join(dir, "router.yaml");

const config = (endpoint: "a" | "b", extraModel = "") => `
endpoints:
  - { name: a, url: "${a.url}", kind: chat }
  - { name: b, url: "${b.url}", kind: chat }
models:
  m: { endpoints: [${endpoint}] }
${extraModel}
`;

/** Replaces the file the way editors and ConfigMaps do: write elsewhere, then rename over it. */
function replaceConfig(text: string): void {
  const tmp = `${file}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, file);
}

async function until(check: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  a = await startMockUpstream();
  b = await startMockUpstream();
  writeFileSync(file, config("a"));
  router = await startChildRouter(file);
});
afterAll(async () => {
  router.kill("SIGKILL");
  await a.close();
  await b.close();
});

describe("config hot reload (real CLI process)", () => {
  it("switches new requests to the new config while an in-flight stream finishes on the old one", async () => {
    const client = new OpenAI({ baseURL: `${router.url}/v1`, apiKey: "x", maxRetries: 0 });
    // A slow stream on endpoint a: 10 deltas, 150 ms apart.
    a.enqueue("/chat/completions", { kind: "sse", frames: [...chatTextChunks(Array.from({ length: 10 }, (_, i) => `t${i} `)), "data: [DONE]\n\n"], delayMs: 150 });
    const slow = client.responses.stream({ model: "m", input: "slow" });
    const slowDone = slow.finalResponse();
    await until(async () => a.requests.length === 1);

    replaceConfig(config("b", "  added: { endpoints: [b] }"));
    await until(async () => (await client.models.list()).data.some((m) => m.id === "added"));

    const fresh = await client.responses.create({ model: "m", input: "after reload" });
    expect(fresh.output_text).toBe("Hello world");
    expect(b.requests.map((r) => r.body.messages.at(-1).content)).toEqual(["after reload"]);
    const slowResult = await slowDone;
    expect(slowResult.status).toBe("completed");
    expect(slowResult.output_text).toBe(Array.from({ length: 10 }, (_, i) => `t${i} `).join(""));
    expect(a.requests).toHaveLength(1);
  });

  it("keeps the running config when the new file is invalid, and says why", async () => {
    const before = router.output().length;
    replaceConfig("endpoints: [{ name: a, url: nope, kind: chat }]\nmodels: {}\n");
    await until(async () => router.output().slice(before).includes("config reload rejected"));
    expect(router.output().slice(before)).toContain("endpoints.0.url");
    const models = (await (await fetch(`${router.url}/v1/models`)).json()) as { data: { id: string }[] };
    expect(models.data.map((m) => m.id).sort()).toEqual(["added", "m"]);
    const metrics = await (await fetch(`${router.url}/metrics`)).text();
    expect(metrics).toMatch(/responses_router_config_reloads_total\{result="error"\} [1-9]/);
    // The console's config page says the same: the reload refused, and why.
    const shown = (await (await fetch(`${router.url}/v1/admin/config`)).json()) as { last_reload: { ok: boolean; errors: string[] }; config: { models: Record<string, unknown> } };
    expect(shown.last_reload.ok).toBe(false);
    expect(shown.last_reload.errors.join("\n")).toContain("endpoints.0.url");
    expect(Object.keys(shown.config.models).sort()).toEqual(["added", "m"]);
    expect(metrics).toMatch(/responses_router_config_reloads_total\{result="ok"\} [1-9]/);
  });
});
