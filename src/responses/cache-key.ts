import { createHash } from "node:crypto";
import { canonicalJson } from "../canonical-json.js";
import type { CreateResponseRequest, Item } from "../types.js";

/** Request fields that change what a model answers. Everything else (stream, store, metadata, ...) does not. */
const KEYED_FIELDS = [
  "instructions",
  "tools",
  "tool_choice",
  "parallel_tool_calls",
  "temperature",
  "top_p",
  "top_logprobs",
  "max_output_tokens",
  "presence_penalty",
  "frequency_penalty",
  "seed",
  "reasoning",
  "truncation",
] as const;

/**
 * The response-cache key: a hash over the canonical request AFTER history
 * rehydration - the whole conversation the model would see, never the last
 * message alone. Item ids are left out (they are random per turn) and object
 * keys are sorted, so JSON key order does not change the key.
 */
export function cacheKey(req: CreateResponseRequest, model: string, items: Item[]): string {
  const keyed: Record<string, unknown> = { model, format: (req.text as { format?: unknown } | undefined)?.format ?? null };
  for (const f of KEYED_FIELDS) if (req[f] !== undefined && req[f] !== null) keyed[f] = req[f];
  keyed.input = items.map(stripId);
  return createHash("sha256").update(canonicalJson(keyed)).digest("hex");
}

function stripId(item: Item): unknown {
  const { id: _id, status: _status, ...rest } = item;
  return rest;
}
