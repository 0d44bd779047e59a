/**
 * `input_file` parts given by `file_id`, on every kind: the router reads the file's bytes from
 * its own Files (`Runtime.files`) before the request is translated and hands the contents to the
 * pure cores by id (translate/chat/files.ts, translate/anthropic/content.ts,
 * translate/openai/files.ts), so no backend ever sees the id: a chat or anthropic backend has no
 * Files API, and OpenAI cannot see the router's files (its own file ids are not the router's).
 * An unknown, expired, deleted or another key's file is the library's 404, before any upstream
 * call. Without a library (the router keeps no files) a plan is left as it was: chat and
 * anthropic answer their 400, `kind: openai` passes the id through to OpenAI's own Files.
 */
import { ApiError } from "../../ops/errors.js";
import type { Runtime } from "../../runtime/runtime.js";
import type { FetchedFile } from "../../translate/index.js";
import type { Item } from "../../wire/types.js";
import type { Plan } from "../create/plan.js";
import { NO_KEY } from "../../keys/policy.js";

/** The owner the Files library scopes by: the key's name, as stored responses are (NO_KEY without keys). */
export function fileOwner(plan: Pick<Plan, "owner">): string {
  return plan.owner ?? NO_KEY;
}

/** Where an item's parts are: a message's `content`, a tool output's `output`. */
const PART_LISTS = ["content", "output"] as const;

function fileIdOf(part: Item | undefined): string | null {
  return part?.type === "input_file" && typeof part.file_id === "string" && part.file_id !== "" && !part.file_data ? part.file_id : null;
}

/**
 * Walks the file ids of the items' parts: `into` gets each once, in order; without `into`, the
 * walk stops at the first one (a look that allocates nothing). Whether there was one.
 */
function fileIds(items: Item[], into?: string[]): boolean {
  let found = false;
  for (let i = 0; i < items.length; i++) {
    const item = items[i]!;
    for (let k = 0; k < PART_LISTS.length; k++) {
      const parts = item[PART_LISTS[k]!];
      if (!Array.isArray(parts)) continue;
      for (let j = 0; j < parts.length; j++) {
        const id = fileIdOf(parts[j] as Item);
        if (id === null) continue;
        if (!into) return true;
        found = true;
        if (!into.includes(id)) into.push(id);
      }
    }
  }
  return found;
}

/**
 * The plan with the contents of its `file_id`s (`storedFiles`), when the router keeps files.
 * A plan with none to read (almost every request), or read already, is returned as it is,
 * not through a promise.
 */
export function readStoredFiles(rt: Runtime, plan: Plan): Plan | Promise<Plan> {
  if (plan.storedFiles !== undefined || rt.files === null || !(fileIds(plan.history) || fileIds(plan.input))) return plan;
  const ids: string[] = [];
  fileIds(plan.history, ids);
  fileIds(plan.input, ids);
  return readAll(rt, plan, ids);
}

async function readAll(rt: Runtime, plan: Plan, ids: string[]): Promise<Plan> {
  const library = rt.files!;
  const owner = fileOwner(plan);
  const stored: Record<string, FetchedFile> = Object.create(null);
  const files = await Promise.all(ids.map((id) => library.readFile(owner, id).catch((err: unknown) => Promise.reject(namedInInput(err, plan.input, id)))));
  files.forEach((f, i) => {
    stored[ids[i]!] = { file_data: `data:${f.mime || "application/octet-stream"};base64,${f.bytes.toString("base64")}`, filename: f.filename };
  });
  return { ...plan, storedFiles: stored };
}

/** A file the library did not find, named by where the request's input gives it (`input[i].content[j].file_id`), as the other bad parts are. */
function namedInInput(err: unknown, input: Item[], id: string): unknown {
  if (!(err instanceof ApiError) || err.status !== 404) return err;
  for (let i = 0; i < input.length; i++) {
    for (const list of PART_LISTS) {
      const parts = input[i]![list];
      if (!Array.isArray(parts)) continue;
      const j = parts.findIndex((part) => fileIdOf(part as Item) === id);
      if (j >= 0) return new ApiError(err.status, err.message, { type: err.type, code: err.code, param: `input[${i}].${list}[${j}].file_id`, headers: err.headers });
    }
  }
  return err;
}
