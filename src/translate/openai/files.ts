/**
 * `input_file` and `input_image` parts given by `file_id` for a `kind: openai` endpoint: the
 * router's file ids mean nothing to OpenAI, so each part the service read (`stored`, by id) is
 * sent as the file itself, as a client could have sent it: a file as `file_data` (a data URL)
 * and `filename`, an image as `image_url` (a data URL). A part whose id the service did not
 * read is not the router's (a file uploaded to OpenAI directly): it goes through untouched, for
 * OpenAI to resolve. Pure; the request's own arrays are not changed (they may be the stored
 * input).
 */
import { storedFile, type FetchedFile } from "../chat/files.js";
import type { Item } from "../../wire/types.js";

/** Where an item's parts are: a message's `content`, a tool output's `output`. */
const PART_LISTS = ["content", "output"] as const;

/** The input with every read `file_id` part given by value; the same array when none is. */
export function storedFilesInline(input: unknown, stored: Readonly<Record<string, FetchedFile>> | undefined): unknown {
  if (!stored || !Array.isArray(input)) return input;
  let out: Item[] | null = null;
  (input as Item[]).forEach((item, i) => {
    const changed = inlineItem(item, stored);
    if (changed === item) return;
    out ??= (input as Item[]).slice();
    out[i] = changed;
  });
  return out ?? input;
}

function inlineItem(item: Item, stored: Readonly<Record<string, FetchedFile>>): Item {
  let copy: Item | null = null;
  for (const key of PART_LISTS) {
    const parts = item?.[key];
    if (!Array.isArray(parts)) continue;
    let changed = false;
    const next = (parts as Item[]).map((part) => {
      const file = part?.type === "input_file" || part?.type === "input_image" ? storedFile(part, { stored }) : undefined;
      if (!file) return part;
      changed = true;
      const { file_id: _id, file_url: _url, ...rest } = part;
      if (part.type === "input_image") return { ...rest, image_url: file.file_data };
      return { ...rest, file_data: file.file_data, filename: typeof part.filename === "string" && part.filename ? part.filename : (file.filename ?? "file") };
    });
    if (!changed) continue;
    copy ??= { ...item };
    copy[key] = next;
  }
  return copy ?? item;
}
