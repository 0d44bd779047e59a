/**
 * `input_file` and `input_image` by `file_id` over the router's own Files (the real library:
 * uploads on disk), with the openai SDK as the client and real mock upstreams that record what
 * the router sent:
 * - `kind: openai`: an id the router does not own (a file uploaded to OpenAI directly) passes
 *   through untouched, in JSON, streamed and across a failover between two openai endpoints;
 *   the router's own files are sent as their contents (OpenAI cannot see them);
 * - `kind: chat` / `anthropic`: the router's files as their contents (an image as an image);
 *   an id the router does not own is a 404 naming the part;
 * - an id in the router's own form that the caller cannot read (another key's, deleted) is a
 *   404 on every kind, before any upstream call: never its contents, never passed on.
 */
import OpenAI, { toFile } from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { DemoBackend } from "../../src/demo/backend.js";
import { message, messageReply, startAnthropicMock, textBlock } from "../helpers/anthropic-mock.js";
import { demoBackend, filesConfigWithChat, tempStorage, withModels } from "../helpers/files.js";
import { chatCompletion, nativeEvents, nativeResponse, startMockUpstream, upstreamError, type MockUpstream, type RecordedRequest } from "../helpers/mock-upstream.js";
import { startTestRouter, type TestRouter } from "../helpers/router.js";

/** An id of OpenAI's own Files (the router never minted it). */
const OPENAI_FILE = "file-XjGxS3KTG0uNmNOK362iJua3";
/** A 1x1 PNG. */
const PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==", "base64");
const PNG_URL = `data:image/png;base64,${PNG.toString("base64")}`;
const NOTE = "The door code is 7391.";

type Part = OpenAI.Responses.ResponseInputContent;
const ask = (...parts: Part[]): OpenAI.Responses.ResponseInput => [{ role: "user", content: [{ type: "input_text", text: "look" }, ...parts] }];
const fileById = (file_id: string): Part => ({ type: "input_file", file_id });
const imageById = (file_id: string): Part => ({ type: "input_image", file_id, detail: "auto" });

describe("file ids in the input, by kind", () => {
  let backend: DemoBackend;
  let oa1: MockUpstream;
  let oa2: MockUpstream;
  let llm: MockUpstream;
  let claude: MockUpstream;
  let router: TestRouter;
  let team: OpenAI;
  let other: OpenAI;
  const storage = tempStorage();
  let note: OpenAI.FileObject;
  let image: OpenAI.FileObject;
  let theirs: OpenAI.FileObject;

  const native = (rec: RecordedRequest) => {
    const resp = nativeResponse("seen", rec.body.model);
    return rec.body.stream ? { kind: "sse" as const, frames: nativeEvents(resp) } : { kind: "json" as const, body: resp };
  };
  const sentInput = (m: MockUpstream) => (m.requests.at(-1)!.body.input as { content: Record<string, unknown>[] }[])[0]!.content;
  const upstreamCalls = () => oa1.requests.length + oa2.requests.length + llm.requests.length + claude.requests.length;

  beforeAll(async () => {
    backend = await demoBackend();
    [oa1, oa2, llm, claude] = await Promise.all([startMockUpstream(), startMockUpstream(), startMockUpstream(), startAnthropicMock()]);
    oa1.setDefault("/responses", native);
    oa2.setDefault("/responses", native);
    llm.setDefault("/chat/completions", { kind: "json", body: chatCompletion("seen") });
    claude.setDefault("/messages", (rec) => messageReply(message([textBlock("seen")]), rec));
    const endpoints = [
      { name: "oa1", url: oa1.url, kind: "openai", api_key: "sk-up-0123456789" },
      { name: "oa2", url: oa2.url, kind: "openai", api_key: "sk-up-0123456789" },
      { name: "claude", url: claude.url, kind: "anthropic", api_key: "sk-ant-0123456789" },
    ];
    const models = { native: { endpoints: [{ name: "oa1", weight: 2 }, "oa2"] }, claude: { endpoints: ["claude"] } };
    const extra = { routing: { queue_timeout: "500ms", retry: { attempts: 3, max_time: "5s" } }, server: { api_keys: [{ name: "team", key: "key-team" }, { name: "other", key: "key-other" }] } };
    router = await startTestRouter({ ...withModels(filesConfigWithChat(backend.url, storage.dir, llm.url), endpoints, models), ...extra }, { apiKey: "key-team" });
    team = router.client;
    other = new OpenAI({ baseURL: `${router.url}/v1`, apiKey: "key-other", maxRetries: 0 });
    note = await team.files.create({ file: await toFile(Buffer.from(NOTE), "door.txt"), purpose: "user_data" });
    image = await team.files.create({ file: await toFile(PNG, "dot.png"), purpose: "vision" });
    theirs = await other.files.create({ file: await toFile(Buffer.from("not yours"), "theirs.txt"), purpose: "user_data" });
  });
  afterAll(async () => {
    await router?.close(500);
    await Promise.all([backend?.close(), oa1?.close(), oa2?.close(), llm?.close(), claude?.close()]);
    storage.cleanup();
  });
  beforeEach(() => {
    for (const m of [oa1, oa2, llm, claude]) m.requests.length = 0;
  });

  describe("kind: openai", () => {
    it("passes an id it does not own through untouched, and sends its own files as their contents (JSON)", async () => {
      const r = await team.responses.create({ model: "native", input: ask(fileById(OPENAI_FILE), imageById("file-OpenAiImage0123456789ab"), fileById(note.id), imageById(image.id)) });
      expect(r.status).toBe("completed");
      const parts = sentInput(oa1.requests.length ? oa1 : oa2);
      expect(parts[1]).toEqual({ type: "input_file", file_id: OPENAI_FILE });
      expect(parts[2]).toEqual({ type: "input_image", file_id: "file-OpenAiImage0123456789ab", detail: "auto" });
      expect(parts[3]).toEqual({ type: "input_file", file_data: `data:text/plain;base64,${Buffer.from(NOTE).toString("base64")}`, filename: "door.txt" });
      expect(parts[4]).toEqual({ type: "input_image", image_url: PNG_URL, detail: "auto" });
      const body = JSON.stringify(oa1.requests.length ? oa1.requests[0]!.body : oa2.requests[0]!.body);
      expect(body).not.toContain(note.id);
      expect(body).not.toContain(image.id);
    });

    it("streamed: the same body, the stream completes", async () => {
      const stream = await team.responses.create({ model: "native", input: ask(fileById(OPENAI_FILE), fileById(note.id)), stream: true });
      let last = "";
      for await (const ev of stream) last = ev.type;
      expect(last).toBe("response.completed");
      const rec = [...oa1.requests, ...oa2.requests];
      expect(rec).toHaveLength(1);
      expect(rec[0]!.body.stream).toBe(true);
      const parts = (rec[0]!.body.input as { content: Record<string, unknown>[] }[])[0]!.content;
      expect(parts[1]).toEqual({ type: "input_file", file_id: OPENAI_FILE });
      expect(parts[2]).toMatchObject({ type: "input_file", filename: "door.txt" });
    });

    it("after a failover to the second openai endpoint, it still sends the id through and the contents inline", async () => {
      oa1.enqueue("/responses", upstreamError(503, "overloaded", null, "server_error")); // oa1 weighs more: it is tried first
      const r = await team.responses.create({ model: "native", input: ask(fileById(OPENAI_FILE), imageById(image.id)) });
      expect(r.status).toBe("completed");
      const all = [...oa1.requests, ...oa2.requests];
      expect([oa1.requests.length, oa2.requests.length]).toEqual([1, 1]);
      for (const rec of all) {
        const parts = (rec.body.input as { content: Record<string, unknown>[] }[])[0]!.content;
        expect(parts[1]).toEqual({ type: "input_file", file_id: OPENAI_FILE });
        expect(parts[2]).toEqual({ type: "input_image", image_url: PNG_URL, detail: "auto" });
      }
    });

    it("an id in the router's own form the caller cannot read (another key's, deleted) is a 404 naming the part, never sent", async () => {
      const gone = await team.files.create({ file: await toFile(Buffer.from("soon gone"), "gone.txt"), purpose: "user_data" });
      await team.files.delete(gone.id);
      for (const [part, param] of [
        [fileById(theirs.id), "input[0].content[1].file_id"],
        [imageById(theirs.id), "input[0].content[1].file_id"],
        [fileById(gone.id), "input[0].content[1].file_id"],
      ] as const) {
        const err = (await team.responses.create({ model: "native", input: ask(part) }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
        expect([err.status, err.param, err.message]).toEqual([404, param, expect.stringContaining((part as { file_id: string }).file_id)]);
      }
      expect(upstreamCalls()).toBe(0);
    });
  });

  describe("kind: chat and anthropic", () => {
    it("the router's image file reaches chat as an image_url data URL and anthropic as a base64 image block", async () => {
      await team.responses.create({ model: "local", input: ask(imageById(image.id)) });
      expect(llm.requests[0]!.body.messages[0].content[1]).toEqual({ type: "image_url", image_url: { url: PNG_URL, detail: "auto" } });
      await team.responses.create({ model: "claude", input: ask(imageById(image.id)) });
      expect(claude.requests[0]!.body.messages[0].content[1]).toEqual({ type: "image", source: { type: "base64", media_type: "image/png", data: PNG.toString("base64") } });
      expect(JSON.stringify([llm.requests[0]!.body, claude.requests[0]!.body])).not.toContain(image.id);
    });

    it("an id the router does not own is a 404 naming the part (input_file and input_image), no upstream call", async () => {
      for (const model of ["local", "claude"]) {
        for (const part of [fileById(OPENAI_FILE), imageById(OPENAI_FILE), fileById(theirs.id), imageById(theirs.id)]) {
          const err = (await team.responses.create({ model, input: ask(part) }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
          expect([model, err.status, err.param, err.message]).toEqual([model, 404, "input[0].content[1].file_id", expect.stringContaining((part as { file_id: string }).file_id)]);
        }
      }
      expect(upstreamCalls()).toBe(0);
    });
  });

  it("input_image of a file that is not an image, or not uploaded for vision or user_data, is a 400 naming the part", async () => {
    const png = await team.files.create({ file: await toFile(PNG, "dot.png"), purpose: "batch" });
    for (const model of ["native", "local", "claude"]) {
      for (const id of [note.id, png.id]) {
        const err = (await team.responses.create({ model, input: ask(imageById(id)) }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
        expect([model, err.status, err.param]).toEqual([model, 400, "input[0].content[1].file_id"]);
      }
    }
    expect(upstreamCalls()).toBe(0);
  });
});
