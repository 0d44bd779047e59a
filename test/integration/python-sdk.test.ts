/**
 * The real Python `openai` package against a real router: files.create, vector_stores.create,
 * files.upload_and_poll, file_batches.upload_and_poll, vector_stores.search, responses.create
 * with file_search on a chat model (JSON and stream), input_file by file_id, and a plain
 * responses create / retrieve / input_items. test/python/file_search_flow.py runs the flows
 * (one JSON line per step); this test starts the router (its own Files on disk, the demo
 * backend's embeddings, a mock chat model that calls file_search once) and checks each line.
 *
 * The SDK lives in a virtualenv at `.venv-e2e/` (git-ignored) that `npm test` makes first
 * (scripts/ensure-test-deps.sh: `pip install openai`). Where pip could not reach an index the
 * suite is skipped, and says so and why.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DemoBackend } from "../../src/demo/backend.js";
import { demoBackend, filesConfigWithChat, tempStorage } from "../helpers/files.js";
import { chatCompletion, chatTextChunks, chatToolCallChunks, startMockUpstream, type MockUpstream, type RecordedRequest, type Reply } from "../helpers/mock-upstream.js";
import { startTestRouter, type TestRouter } from "../helpers/router.js";

const ROOT = join(import.meta.dirname, "..", "..");
const VENV = join(ROOT, ".venv-e2e");
const PYTHON = join(VENV, "bin", "python");
const SCRIPT = join(ROOT, "test", "python", "file_search_flow.py");
const ANSWER = "Run pumpctl reset [1].";

/** Why the Python SDK cannot run here, or null when it can. */
function unavailable(): string | null {
  const reason = existsSync(join(VENV, "UNAVAILABLE")) ? readFileSync(join(VENV, "UNAVAILABLE"), "utf8").trim() : null;
  if (!existsSync(PYTHON)) return reason ?? `${PYTHON} does not exist: run 'bash scripts/ensure-test-deps.sh' (npm test does) to make the virtualenv and pip install openai`;
  const probe = spawnSync(PYTHON, ["-c", "import openai"], { encoding: "utf8" });
  if (probe.status !== 0) return reason ?? `the virtualenv at ${VENV} has no openai package (${probe.stderr.trim().split("\n").at(-1)}): run 'bash scripts/ensure-test-deps.sh'`;
  return null;
}

const why = unavailable();
if (why) console.warn(`\n!!! SKIPPED: the Python openai SDK suite (test/integration/python-sdk.test.ts) did not run: ${why}\n`);

/** Calls file_search once when it may, then answers from the tool's output; without tools, a greeting. */
function model(rec: RecordedRequest): Reply {
  const messages = rec.body.messages as { role: string; content: unknown }[];
  const text = messages.some((m) => m.role === "tool") ? ANSWER : rec.body.tools ? null : "Hi there.";
  if (text !== null) return rec.body.stream ? { kind: "sse", frames: [...chatTextChunks([text]), "data: [DONE]\n\n"] } : { kind: "json", body: chatCompletion(text) };
  if (rec.body.stream) return { kind: "sse", frames: chatToolCallChunks([{ id: "call_f", name: "file_search", args: ['{"query":"ERR-4711"}'] }]) };
  return { kind: "json", body: chatCompletion(null, "mock", { tool_calls: [{ id: "call_f", type: "function", function: { name: "file_search", arguments: '{"query":"ERR-4711"}' } }] }) };
}

/** Runs the flow script; its lines by step. */
function runFlow(env: Record<string, string>): Promise<{ code: number | null; steps: Map<string, any>; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(PYTHON, [SCRIPT], { env: { ...process.env, ...env, PYTHONUNBUFFERED: "1" }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString("utf8")));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString("utf8")));
    child.on("error", reject);
    child.on("close", (code) => {
      const steps = new Map<string, any>();
      for (const line of stdout.split("\n")) if (line.startsWith("{")) steps.set(JSON.parse(line).step, JSON.parse(line));
      resolve({ code, steps, stderr });
    });
  });
}

describe.skipIf(why !== null)("the Python openai SDK against the router: Files, Vector Stores, file_search, responses", () => {
  let backend: DemoBackend;
  let llm: MockUpstream;
  let router: TestRouter;
  const storage = tempStorage();
  let flow: Awaited<ReturnType<typeof runFlow>>;
  const step = (name: string) => {
    const line = flow.steps.get(name);
    expect(line, `step '${name}' did not run (${JSON.stringify(flow.steps.get("start") ?? null)}; stderr: ${flow.stderr.slice(-2000)})`).toBeDefined();
    expect(line.error, line.trace).toBeUndefined();
    return line;
  };

  beforeAll(async () => {
    backend = await demoBackend();
    llm = await startMockUpstream();
    llm.setDefault("/chat/completions", model);
    router = await startTestRouter(filesConfigWithChat(backend.url, storage.dir, llm.url, { server: { api_keys: [{ name: "team", key: "key-team-python" }] } }));
    flow = await runFlow({ ROUTER_URL: `${router.url}/v1`, ROUTER_KEY: "key-team-python", MODEL: "local" });
  }, 180_000);
  afterAll(async () => {
    await router?.close(500);
    await Promise.all([backend?.close(), llm?.close()]);
    storage.cleanup();
  });

  it("runs every step to the end", () => {
    expect(step("start").sdk).toMatch(/^\d+\.\d+/);
    expect(step("done").ok).toBe(true);
    expect(flow.code).toBe(0);
  });

  it("files.create (also with expires_after) and retrieve", () => {
    expect(step("files.create")).toMatchObject({ id: expect.stringMatching(/^file-/), object: "file", filename: "notes.md", bytes: 22, purpose: "user_data" });
    const short = step("files.create expires_after"); // the SDK's form encoding of expires_after
    expect(short.expires_at).toBe(short.created_at + 3600);
  });

  it("vector_stores.create, files.upload_and_poll, file_batches.upload_and_poll: all indexed", () => {
    expect(step("vector_stores.create")).toMatchObject({ id: expect.stringMatching(/^vs_/), object: "vector_store", status: "completed" });
    const file = step("vector_stores.files.upload_and_poll");
    expect(file.status).toBe("completed");
    expect(file.usage_bytes).toBeGreaterThan(0);
    expect(step("vector_stores.file_batches.upload_and_poll")).toMatchObject({ id: expect.stringMatching(/^vsfb_/), status: "completed", completed: 2, total: 2 });
  });

  it("vector_stores.search finds the exact identifier in the right file", () => {
    const { hits } = step("vector_stores.search");
    expect(hits[0]).toMatchObject({ file_id: step("vector_stores.files.upload_and_poll").id, filename: "runbook.md" });
    expect(hits[0].text).toContain("ERR-4711 means the pump stalled");
    expect(hits[0].score).toBeGreaterThan(0);
    expect(hits[0].score).toBeLessThanOrEqual(1);
  });

  it("responses.create with file_search on a chat model: the call, its results, the cited answer", () => {
    const r = step("responses.create file_search");
    const fileId = step("vector_stores.files.upload_and_poll").id;
    expect(r).toMatchObject({ status: "completed", types: ["file_search_call", "message"], queries: ["ERR-4711"], output_text: ANSWER });
    expect(r.results[0]).toEqual({ file_id: fileId, filename: "runbook.md" });
    expect(r.annotations).toContainEqual({ type: "file_citation", file_id: fileId, filename: "runbook.md", index: ANSWER.indexOf("[1]") });
  });

  it("the same, streamed: the file_search_call events, then response.completed", () => {
    const s = step("responses.create file_search stream");
    expect(s.types).toEqual(expect.arrayContaining(["response.created", "response.file_search_call.in_progress", "response.file_search_call.searching", "response.file_search_call.completed", "response.output_text.delta"]));
    expect(s.types.at(-1)).toBe("response.completed");
    expect(s).toMatchObject({ output: ["file_search_call", "message"], output_text: ANSWER });
  });

  it("input_file by the uploaded file's id reaches the chat backend as its contents", () => {
    expect(step("responses.create input_file by file_id").status).toBe("completed");
    const fileId = step("files.create").id;
    const sent = llm.requests.map((r) => JSON.stringify(r.body.messages)).find((m) => m.includes("What is the code?"))!;
    expect(sent).not.toContain(fileId);
    expect(sent.includes("The door code is 7391.") || sent.includes(Buffer.from("The door code is 7391.").toString("base64"))).toBe(true);
  });

  it("a plain responses.create, retrieve and input_items.list", () => {
    const p = step("responses create/retrieve/input_items");
    expect(p).toMatchObject({ id: expect.stringMatching(/^resp_/), status: "completed", output_text: "Hi there.", retrieved_text: "Hi there." });
    expect(p.retrieved).toBe(p.id);
    expect(p.items).toEqual([{ type: "message", role: "user" }]);
  });
});
