import { randomBytes } from "node:crypto";

/**
 * Id generation is injected into the translation core so that it stays pure
 * and tests can use deterministic ids.
 */
export type IdPrefix = "resp" | "conv" | "msg" | "fc" | "fco" | "rs" | "call" | "ws" | "item" | "req" | "cmp" | "ctc" | "mcp" | "mcpl" | "mcpr" | "fs";
export type IdGenerator = (prefix: IdPrefix) => string;

// One pooled buffer of random bytes, refilled when spent: a syscall per ~170 ids instead of one per id.
const POOL_SIZE = 4096;
const ID_BYTES = 24;
let pool = randomBytes(POOL_SIZE);
let offset = 0;

/** OpenAI-looking ids: prefix + 48 hex chars. */
export const randomId: IdGenerator = (prefix) => {
  if (offset + ID_BYTES > POOL_SIZE) {
    pool = randomBytes(POOL_SIZE);
    offset = 0;
  }
  const hex = pool.toString("hex", offset, offset + ID_BYTES);
  offset += ID_BYTES;
  return `${prefix}_${hex}`;
};

/** Deterministic ids for tests: resp_1, msg_2, ... */
export function sequentialIds(): IdGenerator {
  let n = 0;
  return (prefix) => `${prefix}_${++n}`;
}

/** The ids the items carry, in order (an item without a non-empty string id is passed over). */
export function itemIdsOf(items: readonly { id?: unknown }[]): string[] {
  return items.flatMap((i) => (typeof i.id === "string" && i.id ? [i.id] : []));
}
