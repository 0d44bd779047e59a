/**
 * The sealer of the router's compaction items for a config: one per configured key (derived
 * once), or, without `compaction.key`, one random key for the life of this process (items
 * then open only here; cli.ts logs a warning at start). The key never leaves this module.
 */
import type { RouterConfig } from "../config/load.js";
import { openSummary, Sealer } from "../seal.js";
import type { CompactionOptions } from "../translate/index.js";

let processSealer: Sealer | null = null;
const byKey = new Map<string, Sealer>();

export function sealerFor(cfg: RouterConfig): Sealer {
  const key = cfg.compaction.key;
  if (!key) return (processSealer ??= Sealer.ephemeral());
  let s = byKey.get(key);
  if (!s) {
    if (byKey.size > 8) byKey.clear(); // keys change rarely (reloads); never grow without bound
    s = new Sealer(key);
    byKey.set(key, s);
  }
  return s;
}

/** What the chat translation needs to read compaction items under this config. */
export function compactionOptions(cfg: RouterConfig): CompactionOptions {
  const sealer = sealerFor(cfg);
  return { open: (sealed) => openSummary(sealer, sealed), userMessageMaxTokens: cfg.compaction.user_message_max_tokens };
}
