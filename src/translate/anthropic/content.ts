/**
 * Responses content parts -> Messages content blocks: text, images (an http(s) URL or a data
 * URL: base64), files as `document` blocks (PDF as base64, text files as plain text) or
 * image blocks (an image file). A `file_url` arrives already fetched by the service under
 * `files.fetch` (responses/files/), as for chat backends, and a `file_id` read from the
 * router's Files (an `input_image` by `file_id` too, as a base64 image). A file id the router
 * did not read cannot reach Anthropic: a 404 when the router keeps files (it is not one of
 * them), else a 400; nor can audio (the Messages API has no audio input): a 400 naming it.
 */
import { untranslatable } from "../errors.js";
import { stringField } from "../input-parts.js";
import type { Item } from "../../wire/types.js";
import type { DocumentBlockParam, ImageBlockParam, TextBlockParam } from "./types.js";
import { fileSource, imageSource, storedFile, unreadFileId, type FileOptions } from "../chat/files.js";

export type UserBlock = TextBlockParam | ImageBlockParam | DocumentBlockParam;

const IMAGE_TYPES = new Set(["image/jpeg", "image/png", "image/gif", "image/webp"]);
/** File types sent as plain-text documents (decoded from base64). */
const TEXT_TYPE = /^(text\/|application\/(json|xml|x-yaml|yaml|javascript|x-sh)$)/;

export function partToBlock(part: Item, at: string, files?: FileOptions): UserBlock | null {
  switch (part?.type) {
    case "input_text":
    case "output_text":
    case "text": {
      const text = stringField(part, "text", `${at}.text`);
      return text ? { type: "text", text } : null;
    }
    case "input_image":
      return imageBlock(part, at, files);
    case "input_file":
      return fileBlock(part, at, files);
    case "input_audio":
      throw untranslatable("Audio input ('input_audio') is not supported for this model: the Anthropic Messages API takes no audio. Send a transcript as input_text instead.", `${at}.type`, "unsupported_value");
    default:
      throw untranslatable(`Content parts of type '${String(part?.type)}' are not supported for this model.`, `${at}.type`);
  }
}

export function imageBlock(part: Item, at: string, files?: FileOptions): ImageBlockParam {
  const url = imageSource(part, at, files);
  const data = parseDataUrl(url);
  if (!data) {
    if (!/^https?:\/\//i.test(url)) throw untranslatable("An image_url must be an http(s) URL or a base64 data URL.", `${at}.image_url`);
    return { type: "image", source: { type: "url", url } };
  }
  if (!IMAGE_TYPES.has(data.mediaType)) {
    throw untranslatable(`Images of type '${data.mediaType}' are not supported: use image/jpeg, image/png, image/gif or image/webp.`, `${at}.image_url`);
  }
  return { type: "image", source: { type: "base64", media_type: data.mediaType as "image/png", data: data.base64 } };
}

function fileBlock(part: Item, at: string, files: FileOptions | undefined): UserBlock {
  if (part.file_id != null && !storedFile(part, files)) {
    throw unreadFileId(part, at, "Files given by 'file_id' are not supported for this model: this router has no Files API. Send the file as file_data (a base64 data URL) or a file_url.", files);
  }
  const { file_data: data, filename: title, param } = fileSource(part, at, files);
  const parsed = parseDataUrl(data);
  // A server that did not say what it sent (octet-stream) is read by the file's name.
  const mediaType = !parsed ? mediaTypeOf(title) ?? "application/pdf" : parsed.mediaType === "application/octet-stream" ? (mediaTypeOf(title) ?? parsed.mediaType) : parsed.mediaType;
  const base64 = parsed ? parsed.base64 : data;
  if (mediaType === "application/pdf") return withTitle({ type: "document", source: { type: "base64", media_type: "application/pdf", data: base64 } }, title);
  if (IMAGE_TYPES.has(mediaType)) return { type: "image", source: { type: "base64", media_type: mediaType as "image/png", data: base64 } };
  if (TEXT_TYPE.test(mediaType)) {
    const text = Buffer.from(base64, "base64").toString("utf8");
    return withTitle({ type: "document", source: { type: "text", media_type: "text/plain", data: text } }, title);
  }
  throw untranslatable(`Files of type '${mediaType}' are not supported for this model: send a PDF, an image or a text file.`, param);
}

function withTitle(block: DocumentBlockParam, title: string | undefined): DocumentBlockParam {
  if (title) block.title = title;
  return block;
}

const EXTENSIONS: Record<string, string> = { pdf: "application/pdf", png: "image/png", jpg: "image/jpeg", jpeg: "image/jpeg", gif: "image/gif", webp: "image/webp", txt: "text/plain", md: "text/markdown", csv: "text/csv", json: "application/json" };

function mediaTypeOf(filename: string | undefined): string | undefined {
  const ext = filename?.includes(".") ? filename.split(".").pop()!.toLowerCase() : undefined;
  return ext ? EXTENSIONS[ext] : undefined;
}

function parseDataUrl(url: string): { mediaType: string; base64: string } | null {
  const m = /^data:([^;,]+)(?:;[^;,]*)*;base64,(.*)$/s.exec(url);
  return m ? { mediaType: m[1]!.toLowerCase(), base64: m[2]! } : null;
}
