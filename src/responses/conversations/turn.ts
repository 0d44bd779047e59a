import type { Runtime } from "../../runtime/runtime.js";
import type { ResponseObject } from "../../wire/types.js";
import { inputItemView } from "../items/input-items.js";
import { uniqueIds, type Plan } from "../create/plan.js";
import { callStore } from "../create/store-access.js";

/** Statuses after which a turn belongs to its conversation (a failed or cancelled one does not). */
const APPENDED = new Set(["completed", "incomplete"]);

/**
 * Appends a finished turn to its conversation: this turn's input items, then the response's
 * output, in one atomic store write, with the endpoint that served it (routing affinity).
 * A conversation deleted meanwhile stays deleted. Store failures reach the caller (503).
 * Item ids stay unique in the conversation (see uniqueIds): a repeated input id is replaced;
 * a repeated output id too, in `response.output` as well, unless `outputSent` (its items
 * already went out in a stream, whose ids the client keeps), so call this before the
 * response is stored or sent.
 */
export async function appendTurn(
  rt: Runtime,
  plan: Pick<Plan, "conversationId" | "input" | "history">,
  response: ResponseObject,
  endpoint: string | undefined,
  outputSent = false,
): Promise<void> {
  const id = plan.conversationId;
  if (!id || !APPENDED.has(response.status)) return;
  const taken = new Set(plan.history.map((i) => i.id));
  const input = uniqueIds(plan.input.map(inputItemView), taken, rt.ids);
  if (!outputSent) response.output = uniqueIds(response.output, taken, rt.ids);
  try {
    await callStore(() => rt.tracing.store("conversations.append", () => rt.stores.conversations.append(id, [...input, ...response.output], endpoint)));
  } catch (err) {
    rt.metrics.storeErrors.inc({ store: "conversations", op: "append" });
    throw err;
  }
}

