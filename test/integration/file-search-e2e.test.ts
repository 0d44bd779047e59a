/**
 * file_search end to end over the router's own Files and Vector Stores (the real library:
 * uploads on disk, LanceDB, the demo backend's embeddings), as a user runs it with the openai
 * SDK: upload and poll, then a chat model that calls the tool, in JSON and streamed, and
 * `input_file` by the uploaded file's id reaching the chat backend as its contents.
 */
import { toFile } from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DemoBackend } from "../../src/demo/backend.js";
import { demoBackend, filesConfigWithChat, tempStorage } from "../helpers/files.js";
import { chatCompletion, chatTextChunks, chatToolCallChunks, startMockUpstream, type MockUpstream, type RecordedRequest, type Reply } from "../helpers/mock-upstream.js";
import { startTestRouter, type TestRouter } from "../helpers/router.js";

const RUNBOOK = "# Pump runbook\n\nERR-4711 means the pump stalled. Run pumpctl reset.\n\nERR-5000 means the valve leaks.";
const ANSWER = "Run pumpctl reset [1].";

/** Calls file_search once, then answers with what the tool message said. */
function model(rec: RecordedRequest): Reply {
  const messages = rec.body.messages as { role: string; content: unknown }[];
  if (messages.some((m) => m.role === "tool") || !rec.body.tools) {
    return rec.body.stream ? { kind: "sse", frames: [...chatTextChunks([ANSWER]), "data: [DONE]\n\n"] } : { kind: "json", body: chatCompletion(ANSWER) };
  }
  if (rec.body.stream) return { kind: "sse", frames: chatToolCallChunks([{ id: "call_f", name: "file_search", args: ['{"query":"ERR-4711"}'] }]) };
  return { kind: "json", body: chatCompletion(null, "mock", { tool_calls: [{ id: "call_f", type: "function", function: { name: "file_search", arguments: '{"query":"ERR-4711"}' } }] }) };
}

describe("file_search over the router's own vector stores", () => {
  let backend: DemoBackend;
  let llm: MockUpstream;
  let router: TestRouter;
  const storage = tempStorage();

  beforeAll(async () => {
    backend = await demoBackend();
    llm = await startMockUpstream();
    llm.setDefault("/chat/completions", model);
    router = await startTestRouter(filesConfigWithChat(backend.url, storage.dir, llm.url, { server: { api_keys: [{ name: "team", key: "key-team" }] } }), { apiKey: "key-team" });
  });
  afterAll(async () => {
    await router?.close(500);
    await Promise.all([backend?.close(), llm?.close()]);
    storage.cleanup();
  });

  it("uploads and indexes a file, then a chat model's file_search finds it (JSON and stream) and cites it", async () => {
    const client = router.client;
    const vs = await client.vectorStores.create({ name: "ops" });
    const file = await client.vectorStores.files.uploadAndPoll(vs.id, await toFile(Buffer.from(RUNBOOK), "runbook.md"), { pollIntervalMs: 50 });
    expect(file.status).toBe("completed");

    const r = await client.responses.create({ model: "local", input: "What does ERR-4711 mean?", tools: [{ type: "file_search", vector_store_ids: [vs.id] }], include: ["file_search_call.results"] });
    expect(r.output.map((i) => i.type)).toEqual(["file_search_call", "message"]);
    const call = r.output[0] as { queries: string[]; results: { file_id: string; filename: string; text: string; score: number }[] };
    expect(call.queries).toEqual(["ERR-4711"]);
    expect(call.results[0]).toMatchObject({ file_id: file.id, filename: "runbook.md" });
    expect(call.results[0]!.text).toContain("ERR-4711 means the pump stalled");
    expect(call.results[0]!.score).toBeGreaterThan(0);
    expect(call.results[0]!.score).toBeLessThanOrEqual(1);
    const annotations = (r.output[1] as { content: { annotations: unknown[] }[] }).content[0]!.annotations;
    expect(annotations).toContainEqual({ type: "file_citation", file_id: file.id, filename: "runbook.md", index: ANSWER.indexOf("[1]") });
    // the model read the indexed passage, not the file id alone
    const toolMsg = (llm.requests.at(-1)!.body.messages as { role: string; content: string }[]).find((m) => m.role === "tool")!;
    expect(toolMsg.content).toContain("ERR-4711 means the pump stalled");

    const stream = await client.responses.create({ model: "local", input: "ERR-4711?", tools: [{ type: "file_search", vector_store_ids: [vs.id] }], stream: true });
    const types: string[] = [];
    let done: { output: { type: string }[] } | null = null;
    for await (const ev of stream) {
      types.push(ev.type);
      if (ev.type === "response.completed") done = ev.response as unknown as { output: { type: string }[] };
    }
    expect(types).toEqual(expect.arrayContaining(["response.file_search_call.in_progress", "response.file_search_call.searching", "response.file_search_call.completed"]));
    expect(types.at(-1)).toBe("response.completed");
    expect(done!.output.map((i) => i.type)).toEqual(["file_search_call", "message"]);
  });

  it("input_file by the uploaded file's id reaches a chat backend as its contents, never the id", async () => {
    const client = router.client;
    const f = await client.files.create({ file: await toFile(Buffer.from("The door code is 7391."), "door.txt"), purpose: "user_data" });
    llm.requests.length = 0;
    await client.responses.create({ model: "local", input: [{ role: "user", content: [{ type: "input_text", text: "What is the code?" }, { type: "input_file", file_id: f.id }] }] });
    const sent = JSON.stringify(llm.requests[0]!.body.messages);
    expect(sent).not.toContain(f.id);
    expect(sent.includes("The door code is 7391.") || sent.includes(Buffer.from("The door code is 7391.").toString("base64"))).toBe(true);
  });
});
