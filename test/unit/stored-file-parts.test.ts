/**
 * The pure cores on `file_id` parts: what each kind sends for a file the service read
 * (`stored`), for an id it did not read (the router keeps files: not found; it keeps none: the
 * 400), and the image signature the service reads an image's type by.
 */
import { describe, expect, it } from "vitest";
import { toApiError } from "../../src/ops/errors.js";
import { imageType } from "../../src/responses/files/stored-files.js";
import { responsesToMessagesRequest } from "../../src/translate/anthropic/request.js";
import { versionTraits } from "../../src/translate/anthropic/version.js";
import { normalizeInput, responsesToChatRequest } from "../../src/translate/chat/request.js";
import { storedFilesInline } from "../../src/translate/openai/files.js";
import type { CreateResponseRequest, Item } from "../../src/wire/types.js";

const PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==", "base64");
const PNG_URL = `data:image/png;base64,${PNG.toString("base64")}`;
const TEXT_URL = `data:text/plain;base64,${Buffer.from("hello").toString("base64")}`;
const stored = { "file-img": { file_data: PNG_URL, filename: "dot.png" }, "file-txt": { file_data: TEXT_URL, filename: "a.txt" } };
const input = (...parts: Item[]): Item[] => [{ type: "message", role: "user", content: [{ type: "input_text", text: "look" }, ...parts] }];
const req = { model: "m" } as CreateResponseRequest;

const chat = (items: Item[], files?: typeof stored | Record<string, never>) => responsesToChatRequest(req, normalizeInput(items), { upstreamModel: "u", stream: false, developerRole: "system", hostedTools: "drop", files: files && { stored: files } });
const anthropic = (items: Item[], files?: typeof stored | Record<string, never>) =>
  responsesToMessagesRequest(req, normalizeInput(items), {
    upstreamModel: "u",
    stream: false,
    version: versionTraits(undefined),
    defaultMaxTokens: 100,
    thinkingBudget: { minimal: 1024, low: 2048, medium: 4096, high: 8192, xhigh: 16000 },
    promptCaching: false,
    structuredOutput: "tool",
    hostedTools: "drop",
    files: files && { stored: files },
  });
const errorOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return toApiError(err);
  }
  throw new Error("did not throw");
};

describe("file_id parts in the cores", () => {
  it("kind: openai: read files and images are sent by value, an id not read goes through untouched", () => {
    const items = input({ type: "input_file", file_id: "file-txt" }, { type: "input_image", file_id: "file-img", detail: "low" }, { type: "input_file", file_id: "file-openai" }, { type: "input_image", file_id: "file-openai2", detail: "auto" });
    const out = storedFilesInline(items, stored) as Item[];
    expect((out[0]!.content as Item[]).slice(1)).toEqual([
      { type: "input_file", file_data: TEXT_URL, filename: "a.txt" },
      { type: "input_image", image_url: PNG_URL, detail: "low" },
      { type: "input_file", file_id: "file-openai" },
      { type: "input_image", file_id: "file-openai2", detail: "auto" },
    ]);
    expect((items[0]!.content as Item[])[1]).toEqual({ type: "input_file", file_id: "file-txt" }); // the request's own input is not changed
    expect(storedFilesInline(input({ type: "input_file", file_id: "file-openai" }), stored)).toEqual(input({ type: "input_file", file_id: "file-openai" }));
  });

  it("kind: chat and anthropic: a read image is the image itself", () => {
    expect(chat(input({ type: "input_image", file_id: "file-img", detail: "high" }), stored).body.messages[0]).toEqual({ role: "user", content: [{ type: "text", text: "look" }, { type: "image_url", image_url: { url: PNG_URL, detail: "high" } }] });
    expect(anthropic(input({ type: "input_image", file_id: "file-img" }), stored).body.messages[0]!.content).toEqual([{ type: "text", text: "look" }, { type: "image", source: { type: "base64", media_type: "image/png", data: PNG.toString("base64") } }]);
  });

  it("kind: chat and anthropic: an id not read is a 404 when the router keeps files, a 400 when it keeps none", () => {
    for (const translate of [chat, anthropic]) {
      for (const part of [{ type: "input_file", file_id: "file-x" }, { type: "input_image", file_id: "file-x" }]) {
        const missing = errorOf(() => translate(input(part), {}));
        expect([missing.status, missing.param, missing.message]).toEqual([404, "input[0].content[1].file_id", "No such File object: file-x"]);
        const noFiles = errorOf(() => translate(input(part)));
        expect([noFiles.status, noFiles.param]).toEqual([400, "input[0].content[1].file_id"]);
      }
    }
  });

  it("imageType reads PNG, JPEG, GIF and WebP by their signature, nothing else", () => {
    expect(imageType(PNG)).toBe("image/png");
    expect(imageType(Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0]))).toBe("image/jpeg");
    expect(imageType(Buffer.from("GIF89a...."))).toBe("image/gif");
    expect(imageType(Buffer.from("RIFF\x10\x00\x00\x00WEBPVP8 ", "latin1"))).toBe("image/webp");
    expect(imageType(Buffer.from("%PDF-1.4"))).toBeNull();
    expect(imageType(Buffer.from(""))).toBeNull();
  });
});
