/**
 * The sealer of the router's compaction items for a config: one per configured key (derived
 * once), or, without `compaction.key`, one random key for the life of this process (items
 * then open only here; cli.ts logs a warning at start). Items sealed with one of
 * `compaction.previous_keys` still open (key rotation). The keys never leave this module.
 */
import type { RouterConfig } from "../../config/load.js";
import { openSummary, Sealer } from "../../wire/seal.js";
import type { CompactionOptions } from "../../translate/index.js";

let processSealer: Sealer | null = null;
const byKey = new Map<string, Sealer>();

function sealerOf(key: string): Sealer {
  let s = byKey.get(key);
  if (!s) {
    if (byKey.size > 16) byKey.clear(); // keys change rarely (reloads); never grow without bound
    s = new Sealer(key);
    byKey.set(key, s);
  }
  return s;
}

/** The sealer new items are sealed with. */
export function sealerFor(cfg: RouterConfig): Sealer {
  const key = cfg.compaction.key;
  return key ? sealerOf(key) : (processSealer ??= Sealer.ephemeral());
}

/** The summary in a router compaction item, tried with the current key, then the previous ones; null when none opens it. */
export function openCompaction(cfg: RouterConfig, sealed: unknown): string | null {
  const summary = openSummary(sealerFor(cfg), sealed);
  if (summary !== null) return summary;
  for (const key of cfg.compaction.previous_keys) {
    const old = openSummary(sealerOf(key), sealed);
    if (old !== null) return old;
  }
  return null;
}

/** Text sealed with `sealerFor`, opened with the current key, then the previous ones; null when none opens it. */
export function openSealed(cfg: RouterConfig, sealed: string): string | null {
  const text = sealerFor(cfg).open(sealed);
  if (text !== null) return text;
  for (const key of cfg.compaction.previous_keys) {
    const old = sealerOf(key).open(sealed);
    if (old !== null) return old;
  }
  return null;
}

const optionsByConfig = new WeakMap<RouterConfig, CompactionOptions>();

/** What the chat translation needs to read compaction items under this config (built once per config: every chat request asks). */
export function compactionOptions(cfg: RouterConfig): CompactionOptions {
  let o = optionsByConfig.get(cfg);
  if (!o) {
    o = { open: (sealed) => openCompaction(cfg, sealed), userMessageMaxTokens: cfg.compaction.user_message_max_tokens };
    optionsByConfig.set(cfg, o);
  }
  return o;
}
