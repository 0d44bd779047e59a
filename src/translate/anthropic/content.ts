/**
 * Responses content parts -> Messages content blocks: text, images (an http(s) URL or a data
 * URL: base64), files as `document` blocks (PDF by URL or base64, text files as plain text) or
 * image blocks (an image file). OpenAI file ids cannot reach Anthropic: a 400 naming them.
 */
import { untranslatable } from "../errors.js";
import type { Item, JsonObject } from "../../wire/types.js";
import type { DocumentBlockParam, ImageBlockParam, TextBlockParam } from "./types.js";

export type UserBlock = TextBlockParam | ImageBlockParam | DocumentBlockParam;

const IMAGE_TYPES = new Set(["image/jpeg", "image/png", "image/gif", "image/webp"]);
/** File types sent as plain-text documents (decoded from base64). */
const TEXT_TYPE = /^(text\/|application\/(json|xml|x-yaml|yaml|javascript|x-sh)$)/;

export function partToBlock(part: Item, at: string): UserBlock | null {
  switch (part?.type) {
    case "input_text":
    case "output_text":
    case "text": {
      const text = stringField(part, "text", `${at}.text`);
      return text ? { type: "text", text } : null;
    }
    case "input_image":
      return imageBlock(part, at);
    case "input_file":
      return fileBlock(part, at);
    default:
      throw untranslatable(`Content parts of type '${String(part?.type)}' are not supported for this model.`, `${at}.type`);
  }
}

export function imageBlock(part: Item, at: string): ImageBlockParam {
  const url = typeof part.image_url === "string" ? part.image_url : ((part.image_url as JsonObject | undefined)?.url as string | undefined);
  if (typeof url !== "string" || !url) {
    if (part.file_id != null) throw untranslatable("Images given by 'file_id' are not supported for this model: send an image_url (http(s) or data URL).", `${at}.file_id`);
    throw untranslatable("An input_image needs an 'image_url'.", `${at}.image_url`);
  }
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

function fileBlock(part: Item, at: string): UserBlock {
  const title = typeof part.filename === "string" && part.filename ? part.filename : undefined;
  if (typeof part.file_url === "string" && part.file_url) {
    if (!/^https?:\/\//i.test(part.file_url)) throw untranslatable("A file_url must be an http(s) URL.", `${at}.file_url`);
    return withTitle({ type: "document", source: { type: "url", url: part.file_url } }, title);
  }
  if (typeof part.file_data === "string" && part.file_data) {
    const parsed = parseDataUrl(part.file_data) ?? { mediaType: mediaTypeOf(title), base64: part.file_data };
    const { mediaType, base64 } = parsed;
    if (mediaType === "application/pdf") return withTitle({ type: "document", source: { type: "base64", media_type: "application/pdf", data: base64 } }, title);
    if (IMAGE_TYPES.has(mediaType)) return { type: "image", source: { type: "base64", media_type: mediaType as "image/png", data: base64 } };
    if (TEXT_TYPE.test(mediaType)) {
      const text = Buffer.from(base64, "base64").toString("utf8");
      return withTitle({ type: "document", source: { type: "text", media_type: "text/plain", data: text } }, title);
    }
    throw untranslatable(`Files of type '${mediaType}' are not supported for this model: send a PDF, an image or a text file.`, `${at}.file_data`);
  }
  if (part.file_id != null) {
    throw untranslatable("Files given by 'file_id' are not supported for this model: send the file as file_data (a base64 data URL) or a file_url.", `${at}.file_id`);
  }
  throw untranslatable("An input_file needs 'file_data' or 'file_url'.", `${at}.file_data`);
}

function withTitle(block: DocumentBlockParam, title: string | undefined): DocumentBlockParam {
  if (title) block.title = title;
  return block;
}

const EXTENSIONS: Record<string, string> = { pdf: "application/pdf", png: "image/png", jpg: "image/jpeg", jpeg: "image/jpeg", gif: "image/gif", webp: "image/webp", txt: "text/plain", md: "text/markdown", csv: "text/csv", json: "application/json" };

function mediaTypeOf(filename: string | undefined): string {
  const ext = filename?.split(".").pop()?.toLowerCase();
  return (ext && EXTENSIONS[ext]) || "application/pdf";
}

function parseDataUrl(url: string): { mediaType: string; base64: string } | null {
  const m = /^data:([^;,]+)(?:;[^;,]*)*;base64,(.*)$/s.exec(url);
  return m ? { mediaType: m[1]!.toLowerCase(), base64: m[2]! } : null;
}

export function stringField(obj: Item, key: string, param: string): string {
  const value = obj[key];
  if (typeof value !== "string") throw untranslatable(`Missing or invalid '${key}': expected a string.`, param);
  return value;
}
