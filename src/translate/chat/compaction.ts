/**
 * Compaction on chat backends, the pure half: the default summarisation prompt, the framing
 * that turns a summary back into a message the model reads (the same idea as the Codex CLI's
 * local compaction: a user message that says another model summarised the work so far), the
 * user messages a compaction keeps (newest first, within a token budget), and which items a
 * compaction item makes obsolete when a history is rendered for a chat backend.
 */
import type { Item } from "../../wire/types.js";

/** Asked as the last user message of the summarisation call; `compaction.prompt` replaces it. */
export const DEFAULT_SUMMARY_PROMPT = [
  "Context checkpoint: the conversation above is about to be replaced by your summary, which another model will use to carry on the work.",
  "Write that handoff summary now. Cover:",
  "- what the user asked for, and any constraints or preferences they stated;",
  "- what has been done so far and the decisions taken (with file names, commands, values and results that matter);",
  "- what is still open, and the next concrete steps.",
  "Be concise and factual; write only the summary.",
].join("\n");

/** Put before a summary when it is shown to the model. */
export const SUMMARY_PREFIX =
  "Another language model worked on this conversation before you and left the summary below. Build on the work it describes instead of repeating it; the user messages above are the ones it saw. Summary:";

/** The text of the user message a summary becomes. */
export function summaryMessageText(summary: string): string {
  return `${SUMMARY_PREFIX}\n${summary}`;
}

const CHARS_PER_TOKEN = 4;

/** The visible text of a message item (its text parts joined). */
export function messageText(item: Item): string {
  const c = item.content;
  if (typeof c === "string") return c;
  if (!Array.isArray(c)) return "";
  let out = "";
  for (const p of c as Item[]) if (typeof p.text === "string") out += (out ? "\n" : "") + p.text;
  return out;
}

const isUserMessage = (item: Item): boolean => (item.type ?? "message") === "message" && item.role === "user" && !messageText(item).startsWith(SUMMARY_PREFIX);

/**
 * The user messages a compaction keeps, oldest first: the newest ones whose text fits in
 * `maxTokens` (4 characters a token). The oldest one kept may be cut to its last
 * characters so the budget is used; older ones are left out.
 */
export function keptUserMessages(items: Item[], maxTokens: number): Item[] {
  let budget = maxTokens * CHARS_PER_TOKEN;
  const kept: Item[] = [];
  for (let i = items.length - 1; i >= 0 && budget > 0; i--) {
    const item = items[i]!;
    if (!isUserMessage(item)) continue;
    const text = messageText(item);
    const size = text.length || JSON.stringify(item.content ?? "").length;
    if (size <= budget) {
      kept.push(item);
      budget -= size;
      continue;
    }
    if (text) kept.push({ ...item, content: [{ type: "input_text", text: text.slice(text.length - budget) }] });
    break;
  }
  return kept.reverse();
}

/**
 * Indices a chat backend does not see because a later compaction item summarises them: before
 * the LAST compaction item only system/developer messages and the kept user messages stay (as
 * after a compaction); assistant turns, tool calls and outputs, reasoning and older compaction
 * items go. Null when there is no compaction item.
 */
export function supersededByCompaction(items: Item[], maxUserTokens: number): Set<number> | null {
  let last = -1;
  for (let i = items.length - 1; i >= 0; i--) {
    if (items[i]!.type === "compaction") {
      last = i;
      break;
    }
  }
  if (last < 0) return null;
  const before = items.slice(0, last);
  const kept = new Set(keptUserMessages(before, maxUserTokens).map((m) => m.id));
  const skip = new Set<number>();
  before.forEach((item, i) => {
    const type = item.type ?? (typeof item.role === "string" ? "message" : undefined);
    if (type === "message" && (item.role === "system" || item.role === "developer")) return;
    if (type === "message" && item.role === "user" && kept.has(item.id)) return;
    skip.add(i);
  });
  return skip;
}
