/**
 * A multipart upload (`POST /v1/files`: a `file` part and form fields) read with busboy, the
 * file streamed to disk as it arrives: never held whole in memory. Past `maxBytes` the read
 * stops, the partial file is removed and the answer is 413. What comes back is the form's
 * fields and where the file is; the caller keeps it (`BlobStore.commit`) or discards it.
 */
import { createWriteStream } from "node:fs";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import busboy from "busboy";
import { ApiError, invalidRequest } from "../ops/errors.js";
import type { BlobStore } from "./blobs.js";

export interface Uploaded {
  fields: Record<string, string>;
  file: { temp: string; filename: string; mime: string | undefined; bytes: number } | null;
}

export const tooLarge = (max: number) =>
  new ApiError(413, `The file is larger than the router's limit of ${max} bytes (files.max_bytes).`, { type: "invalid_request_error", param: "file", code: "file_too_large" });

export async function readUpload(headers: Record<string, string>, body: ReadableStream<Uint8Array> | Readable | null, blobs: BlobStore, maxBytes: number): Promise<Uploaded> {
  if (!(headers["content-type"] ?? "").toLowerCase().startsWith("multipart/form-data")) {
    throw invalidRequest("POST /v1/files takes a multipart/form-data body with a 'file' part and a 'purpose' field.", null, "invalid_content_type");
  }
  const declared = Number(headers["content-length"]);
  // Declared bigger than the limit: refused before a byte is read (the form's fields are small).
  if (Number.isFinite(declared) && declared > maxBytes + 64 * 1024) throw tooLarge(maxBytes);
  if (!body) throw invalidRequest("The request has no body.", null, "invalid_body");
  let parser: busboy.Busboy;
  try {
    parser = busboy({ headers, limits: { files: 1, fileSize: maxBytes, fields: 20, fieldSize: 64 * 1024 } });
  } catch (err) {
    throw invalidRequest(`The multipart body could not be read: ${(err as Error).message}`, null, "invalid_body");
  }
  const fields: Record<string, string> = {};
  let file: Uploaded["file"] = null;
  let written: Promise<void> | null = null;
  let over = false;
  parser.on("field", (name, value) => (fields[name] = value));
  const temp = await blobs.tempPath();
  parser.on("file", (name, stream, info) => {
    if (name !== "file" || file) {
      stream.resume();
      return;
    }
    const entry = { temp, filename: info.filename || "upload", mime: info.mimeType || undefined, bytes: 0 };
    file = entry;
    stream.on("data", (d: Buffer) => (entry.bytes += d.length));
    stream.on("limit", () => (over = true));
    written = pipeline(stream, createWriteStream(temp));
  });
  const input = body instanceof Readable ? body : Readable.fromWeb(body as import("node:stream/web").ReadableStream<Uint8Array>);
  try {
    await pipeline(input, parser);
    await written;
  } catch (err) {
    await discard(blobs, file);
    if (err instanceof ApiError) throw err;
    throw invalidRequest(`The multipart body could not be read: ${(err as Error).message}`, null, "invalid_body");
  }
  if (over) {
    await discard(blobs, file);
    throw tooLarge(maxBytes);
  }
  return { fields, file };
}

async function discard(blobs: BlobStore, file: Uploaded["file"]): Promise<void> {
  if (file) await blobs.discard(file.temp).catch(() => {});
}
