/**
 * `input_file` parts -> chat content parts. Pure: a `file_url` arrives here already fetched
 * (responses/files/ fetches it before translating and hands the contents in `FileOptions`).
 *
 * - `file_data` (a data URL, or bare base64 with a `filename`) -> `{type:"file", file:{file_data, filename}}`,
 *   the chat completions file part;
 * - with `inlineText` (a per-model option for backends without file support), a text file
 *   (text/*, JSON, XML, YAML, CSV, ... by media type or file name) becomes a text part that
 *   names the file and holds its content;
 * - `file_id`: the contents the service read from the router's Files (`FileOptions.stored`,
 *   also for an `input_image`); an id it did not read is not one of the router's files (a 404,
 *   `UnknownReference`: a chat backend has no Files API to resolve it), or a 400 when the router
 *   keeps no files at all (`stored` not given).
 */
import { UnknownReference, untranslatable } from "../errors.js";
import type { Item } from "../../wire/types.js";

export type ContentPart =
  | { type: "text"; text: string }
  | { type: "image_url"; image_url: { url: string; detail?: string } }
  | { type: "file"; file: { file_data: string; filename?: string } }
  | { type: "input_audio"; input_audio: { data: string; format: string } };

/** A file the service fetched for a `file_url`. */
export interface FetchedFile {
  /** A data URL: `data:<media type>;base64,<content>`. */
  file_data: string;
  filename?: string;
}

export interface FileOptions {
  /** Contents of the `file_url`s in the request, by URL. */
  fetched?: Readonly<Record<string, FetchedFile>>;
  /** Contents of the `file_id`s in the request, by id, read from the router's Files. */
  stored?: Readonly<Record<string, FetchedFile>>;
  /** Send text files as text parts (the model's `inline_text_files`). */
  inlineText?: boolean;
}

const TEXT_TYPES = /^(text\/|application\/(json|xml|yaml|x-yaml|toml|javascript|typescript|x-sh|x-python|sql|csv|x-ndjson|ld\+json)|[a-z]+\/[a-z.+-]*\+(json|xml)$)/i;
const TEXT_NAMES = /\.(txt|md|markdown|csv|tsv|json|jsonl|ndjson|xml|ya?ml|toml|ini|cfg|conf|log|html?|css|js|mjs|cjs|ts|tsx|jsx|py|rb|go|rs|java|kt|c|h|cc|cpp|hpp|cs|sh|bash|zsh|sql|php|swift|scala|lua|r|tex|rst|diff|patch)$/i;
const DATA_URL = /^data:([^;,]*)(;[^,]*)?,/;

export function fileToChat(part: Item, at: string, opts: FileOptions | undefined): ContentPart {
  if (part.file_id != null && !storedFile(part, opts)) {
    throw unreadFileId(
      part,
      at,
      `Files given by 'file_id' are not supported: this router has no Files API. Send the file's content as 'file_data' (a data URL such as 'data:application/pdf;base64,...') or a 'file_url'.`,
      opts,
    );
  }
  const file = fileSource(part, at, opts);
  if (opts?.inlineText) {
    const text = textContent(file);
    if (text !== null) return { type: "text", text: `<file name="${file.filename ?? "file"}">\n${text}\n</file>` };
  }
  const out: { file_data: string; filename?: string } = { file_data: file.file_data };
  if (file.filename) out.filename = file.filename;
  return { type: "file", file: out };
}

/**
 * An input_file's content, for every kind: the contents the service read for its `file_id`, its
 * `file_data`, or the contents the service fetched for its `file_url` (named by the part's
 * `filename`, else the read or fetched one); `param` names where the content came from. A
 * `file_id` the service did not read is each kind's own 400, checked before.
 */
export function fileSource(part: Item, at: string, opts: FileOptions | undefined): FetchedFile & { param: string } {
  const name = typeof part.filename === "string" && part.filename ? part.filename : undefined;
  const stored = storedFile(part, opts);
  if (stored) return { file_data: stored.file_data, filename: name ?? stored.filename, param: `${at}.file_id` };
  if (typeof part.file_data === "string" && part.file_data) return { file_data: part.file_data, filename: name, param: `${at}.file_data` };
  if (typeof part.file_url === "string" && part.file_url) {
    const fetched = opts?.fetched?.[part.file_url];
    if (!fetched) throw untranslatable("This file_url was not fetched: the router fetches files only from the URLs its configuration allows (files.fetch.allow).", `${at}.file_url`);
    return { file_data: fetched.file_data, filename: name ?? fetched.filename, param: `${at}.file_url` };
  }
  throw untranslatable("An input_file needs 'file_data' or 'file_url'.", `${at}.file_data`);
}

/** The contents the service read for a part's `file_id` (an `input_file` without `file_data`, an `input_image` without `image_url`), if it read them. */
export function storedFile(part: Item, opts: FileOptions | undefined): FetchedFile | undefined {
  const given = part.type === "input_image" ? part.image_url : part.file_data;
  return typeof part.file_id === "string" && !given ? opts?.stored?.[part.file_id] : undefined;
}

/**
 * The URL an `input_image` is read from: its `image_url` (a string or `{url}`), or for one given
 * by `file_id` the router's file the service read, as a data URL. Else a 404/400 (`unreadFileId`)
 * or a 400 for an image with neither.
 */
export function imageSource(part: Item, at: string, opts: FileOptions | undefined): string {
  const url = typeof part.image_url === "string" ? part.image_url : ((part.image_url as { url?: unknown } | undefined)?.url ?? storedFile(part, opts)?.file_data);
  if (typeof url === "string" && url) return url;
  if (part.file_id != null) throw unreadFileId(part, at, "Images given by 'file_id' are not supported for this model: send an image_url (http(s) or data URL).", opts);
  throw untranslatable("An input_image needs an 'image_url'.", `${at}.image_url`);
}

/**
 * The error for a `file_id` the service did not read: with the router's Files (`stored` given),
 * the id is not one of them (404, as OpenAI answers an unknown file); without, `noFiles` (400).
 */
export function unreadFileId(part: Item, at: string, noFiles: string, opts: FileOptions | undefined): Error {
  if (opts?.stored) return new UnknownReference(`No such File object: ${String(part.file_id)}`, `${at}.file_id`);
  return untranslatable(noFiles, `${at}.file_id`);
}

/** The decoded text of a text file, or null for any other file (sent as a file part). */
function textContent(file: FetchedFile): string | null {
  const m = DATA_URL.exec(file.file_data);
  const mediaType = m?.[1] ?? "";
  const textName = file.filename !== undefined && TEXT_NAMES.test(file.filename);
  const isText = mediaType && mediaType !== "application/octet-stream" ? TEXT_TYPES.test(mediaType) : textName;
  if (!isText) return null;
  const body = m ? file.file_data.slice(m[0].length) : file.file_data;
  const base64 = m ? (m[2] ?? "").includes(";base64") : true;
  const text = base64 ? Buffer.from(body, "base64").toString("utf8") : decodeURIComponent(body);
  // A "text" file that does not decode cleanly is sent as a file after all.
  return text.includes("\uFFFD") ? null : text;
}
