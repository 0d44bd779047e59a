import type { Runtime } from "../../runtime/runtime.js";
import type { ResponseObject } from "../../wire/types.js";
import { itemIdsOf } from "../../wire/ids.js";
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
 *
 * `then` (storing the response) runs after the append, also when there is nothing to append.
 * When the append or `then` fails, the client is told the turn failed and retries it: the
 * turn's items are taken out of the conversation again (their places emptied, best effort),
 * or the retry would find them there and the conversation would hold the turn twice. An
 * append can fail after it was made: `durability: replica` answers 503 when no replica
 * confirmed the write in time, though the primary has it.
 */
export async function appendTurn(
  rt: Runtime,
  plan: Pick<Plan, "conversationId" | "input" | "history">,
  response: ResponseObject,
  endpoint: string | undefined,
  outputSent = false,
  then: () => Promise<void> = async () => {},
): Promise<void> {
  const id = plan.conversationId;
  if (!id || !APPENDED.has(response.status)) return then();
  const taken = new Set(plan.history.map((i) => i.id));
  const input = uniqueIds(plan.input.map(inputItemView), taken, rt.ids);
  if (!outputSent) response.output = uniqueIds(response.output, taken, rt.ids);
  const items = [...input, ...response.output];
  try {
    await callStore(() => rt.tracing.store("conversations.append", () => rt.stores.conversations.append(id, items, endpoint)));
  } catch (err) {
    rt.metrics.storeErrors.inc({ store: "conversations", op: "append" });
    await withdraw(rt, id, items);
    throw err;
  }
  try {
    await then();
  } catch (err) {
    await withdraw(rt, id, items);
    throw err;
  }
}

/** Empties the places of a failed turn's items in its conversation; those never appended are not found. Never throws. */
async function withdraw(rt: Runtime, conversationId: string, items: readonly { id?: unknown }[]): Promise<void> {
  const ids = itemIdsOf(items);
  const withdrawn = await Promise.all(ids.map((itemId) => rt.stores.conversations.deleteItem(conversationId, itemId).catch(() => null)));
  if (withdrawn.includes(null)) rt.log.warn({ conversation: conversationId }, "a failed turn's items could not all be taken out of its conversation");
}
