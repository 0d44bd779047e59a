/**
 * `input_file` and `input_image` parts given by `file_id`, on every kind. The router reads its
 * own files' bytes (`Runtime.files`) before the request is translated, while the endpoint that
 * will serve it (and so its kind) is not known yet: the service, a tool loop, a background job,
 * the compactor and the token counter all come through here, and a failover may move the
 * request to an endpoint of another kind. So the read is kind-blind, and each kind decides at
 * translation what an id it was not given the contents of means:
 *
 * - an id in the router's own form (`FileLibrary.mints`: told by the id alone) is read for the
 *   caller's key; one it cannot read (unknown, expired, deleted, another key's) is a 404 naming
 *   `input[i].content[j].file_id` on every kind, before any upstream call. Its contents are
 *   never read for another key, and the id is never passed on: it means nothing to OpenAI;
 * - the contents read go to every kind (translate/chat/files.ts, translate/anthropic/content.ts,
 *   translate/openai/files.ts): a chat or anthropic backend has no Files API and OpenAI cannot
 *   see the router's files. An image (`input_image`) must be a PNG, JPEG, GIF or WebP uploaded
 *   for `vision` or `user_data`, else a 400; it is sent as a data URL;
 * - any other id is not the router's (a file uploaded to OpenAI directly): a `kind: openai`
 *   endpoint gets it untouched, for OpenAI to resolve against the upstream key's files; a chat
 *   or anthropic backend cannot resolve it: their core answers a 404 naming the part, because
 *   `storedFiles` is set (the router keeps files and this is not one of them).
 *
 * Deciding by the id's form, not by a look-up, is what keeps the answers from telling anything
 * of other keys' files: an id of the router's form that is another key's and one that never
 * existed get the same 404, and an OpenAI id is never looked up. Without a library (the router
 * keeps no files) a plan is left as it was: chat and anthropic answer their 400, `kind: openai`
 * passes every id through.
 */
import { ApiError, invalidRequest } from "../../ops/errors.js";
import type { Runtime } from "../../runtime/runtime.js";
import type { FetchedFile } from "../../translate/index.js";
import type { StoredFileContent } from "../../tools/file-search/library.js";
import type { Item } from "../../wire/types.js";
import type { Plan } from "../create/plan.js";
import { NO_KEY } from "../../keys/policy.js";

/** The owner the Files library scopes by: the key's name, as stored responses are (NO_KEY without keys). */
export function fileOwner(plan: Pick<Plan, "owner">): string {
  return plan.owner ?? NO_KEY;
}

/** Where an item's parts are: a message's `content`, a tool output's `output`. */
const PART_LISTS = ["content", "output"] as const;

/** Purposes an image may be uploaded for to be read as one (as OpenAI's `input_image`). */
const IMAGE_PURPOSES = new Set(["vision", "user_data"]);

/** A `file_id` part: an `input_file` without `file_data` or an `input_image` without `image_url`. */
function fileIdOf(part: Item | undefined): string | null {
  if (part?.type !== "input_file" && part?.type !== "input_image") return null;
  const given = part.type === "input_image" ? part.image_url : part.file_data;
  return typeof part.file_id === "string" && part.file_id !== "" && !given ? part.file_id : null;
}

/** One `file_id` part and where the request gives it. */
interface FileRef {
  id: string;
  image: boolean;
  param: string;
}

/**
 * Calls `visit` for each `file_id` part of the items (`at(i)` names item i) until it returns
 * true; whether one did.
 */
function walk(items: Item[], at: (i: number) => string, visit: (ref: FileRef) => boolean): boolean {
  for (let i = 0; i < items.length; i++) {
    const item = items[i]!;
    for (let k = 0; k < PART_LISTS.length; k++) {
      const list = PART_LISTS[k]!;
      const parts = item[list];
      if (!Array.isArray(parts)) continue;
      for (let j = 0; j < parts.length; j++) {
        const part = parts[j] as Item;
        const id = fileIdOf(part);
        if (id !== null && visit({ id, image: part.type === "input_image", param: `${at(i)}.${list}[${j}].file_id` })) return true;
      }
    }
  }
  return false;
}

const inputAt = (i: number) => `input[${i}]`;
const historyAt = () => "previous_response_id";
const any = () => true;

/**
 * The plan with the contents of its router-owned `file_id`s (`storedFiles`), when the router
 * keeps files. A plan with none to read (almost every request), or read already, is returned as
 * it is, not through a promise.
 */
export function readStoredFiles(rt: Runtime, plan: Plan): Plan | Promise<Plan> {
  if (plan.storedFiles !== undefined || rt.files === null || !(walk(plan.input, inputAt, any) || walk(plan.history, historyAt, any))) return plan;
  // The input's parts first: a missing file is named where this request gives it.
  const refs: FileRef[] = [];
  const collect = (ref: FileRef) => (refs.push(ref), false);
  walk(plan.input, inputAt, collect);
  walk(plan.history, historyAt, collect);
  return readAll(rt, plan, refs);
}

async function readAll(rt: Runtime, plan: Plan, refs: FileRef[]): Promise<Plan> {
  const library = rt.files!;
  const owner = fileOwner(plan);
  const first = new Map<string, FileRef>();
  for (const ref of refs) if (library.mints(ref.id) && !first.has(ref.id)) first.set(ref.id, ref);
  const stored: Record<string, FetchedFile> = Object.create(null);
  const files = await Promise.all([...first.values()].map((ref) => library.readFile(owner, ref.id).catch((err: unknown) => Promise.reject(named(err, ref.param)))));
  for (const f of files) {
    const image = imageType(f.bytes);
    for (const ref of refs) if (ref.image && ref.id === f.id) checkImage(f, image, ref.param);
    stored[f.id] = { file_data: `data:${image ?? (f.mime || "application/octet-stream")};base64,${f.bytes.toString("base64")}`, filename: f.filename };
  }
  return { ...plan, storedFiles: stored };
}

/** A file the library did not find, named by where the request gives it, as the other bad parts are. */
function named(err: unknown, param: string): unknown {
  if (!(err instanceof ApiError) || err.status !== 404) return err;
  return new ApiError(err.status, err.message, { type: err.type, code: err.code, param, headers: err.headers });
}

/** An `input_image` by `file_id`: an image a model reads, uploaded for images. */
function checkImage(f: StoredFileContent, image: string | null, param: string): void {
  if (!image) throw invalidRequest(`The file '${f.id}' (${f.filename}) is not an image: input_image takes a PNG, JPEG, GIF or WebP file.`, param, "invalid_image");
  if (!IMAGE_PURPOSES.has(f.purpose)) {
    throw invalidRequest(`The file '${f.id}' was uploaded for '${f.purpose}': an input_image file must be uploaded for 'vision' or 'user_data'.`, param, "invalid_value");
  }
}

/** The image media type of the bytes, by their signature (the upload's declared type may be anything), or null. */
export function imageType(bytes: Buffer): "image/png" | "image/jpeg" | "image/gif" | "image/webp" | null {
  if (bytes.length >= 8 && bytes.readUInt32BE(0) === 0x89504e47 && bytes.readUInt32BE(4) === 0x0d0a1a0a) return "image/png";
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return "image/jpeg";
  if (bytes.length >= 6 && bytes.toString("latin1", 0, 4) === "GIF8") return "image/gif";
  if (bytes.length >= 12 && bytes.toString("latin1", 0, 4) === "RIFF" && bytes.toString("latin1", 8, 12) === "WEBP") return "image/webp";
  return null;
}
