/**
 * Prompt caching: `cache_control` breakpoints on the stable prefix of a request, at most
 * Anthropic's four: the last tool, the last system block, and the last block of the history
 * before the newest user turn (what the next turn sends again unchanged, so it reads it back).
 * Thinking blocks cannot carry a breakpoint; the last other block of the message does.
 */
import type { ContentBlockParam, TextBlockParam, Tool } from "./types.js";
import type { BuiltMessage } from "./request-input.js";

const EPHEMERAL = { type: "ephemeral" } as const;
export const MAX_BREAKPOINTS = 4;

export function placeBreakpoints(tools: Tool[], system: TextBlockParam[], messages: BuiltMessage[]): number {
  let placed = 0;
  const lastTool = tools.at(-1);
  if (lastTool) {
    lastTool.cache_control = EPHEMERAL;
    placed++;
  }
  const lastSystem = system.at(-1);
  if (lastSystem) {
    lastSystem.cache_control = EPHEMERAL;
    placed++;
  }
  const newest = messages.findLastIndex((m) => m.role === "user");
  for (let i = newest - 1; i >= 0 && placed < MAX_BREAKPOINTS; i--) {
    const block = markable(messages[i]!.content);
    if (!block) continue;
    (block as { cache_control?: unknown }).cache_control = EPHEMERAL;
    placed++;
    break;
  }
  return placed;
}

function markable(blocks: ContentBlockParam[]): ContentBlockParam | null {
  for (let i = blocks.length - 1; i >= 0; i--) {
    const b = blocks[i]!;
    if (b.type !== "thinking" && b.type !== "redacted_thinking") return b;
  }
  return null;
}
