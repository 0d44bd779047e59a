import type { Runtime } from "../runtime.js";
import type { IdGenerator } from "../ids.js";
import type { Item, ResponseObject } from "../types.js";
import { inputItemView } from "./input-items.js";
import { withIds, type Plan } from "./plan.js";
import { callStore } from "./store-access.js";

/** Statuses after which a turn belongs to its conversation (a failed or cancelled one does not). */
const APPENDED = new Set(["completed", "incomplete"]);

/**
 * Appends a finished turn to its conversation: this turn's input items, then the response's
 * output, in one atomic store write, with the endpoint that served it (routing affinity).
 * A conversation deleted meanwhile stays deleted. Store failures reach the caller (503).
 * Call it before the response is stored or sent: an output item whose id is already taken
 * gets a fresh one in `response.output` too, so the response and the conversation agree.
 */
export async function appendTurn(rt: Runtime, plan: Pick<Plan, "conversationId" | "input" | "history">, response: ResponseObject, endpoint: string | undefined): Promise<void> {
  const id = plan.conversationId;
  if (!id || !APPENDED.has(response.status)) return;
  const taken = new Set(plan.history.map((i) => i.id));
  const input = plan.input.map((item) => unique(inputItemView(item), taken, rt.ids));
  response.output = response.output.map((item) => unique(item, taken, rt.ids));
  try {
    await callStore(() => rt.stores.conversations.append(id, [...input, ...response.output], endpoint));
  } catch (err) {
    rt.metrics.storeErrors.inc({ store: "conversations", op: "append" });
    throw err;
  }
}

/**
 * Item ids must be unique in a conversation: `after` cursors and the item routes find items
 * by id. A backend that repeats its output ids turn after turn, or a client re-sending items
 * with their ids, would otherwise make paging loop; such an item gets a fresh id.
 */
function unique<T extends Item>(item: T, taken: Set<string | undefined>, ids: IdGenerator): T {
  if (!taken.has(item.id)) {
    taken.add(item.id);
    return item;
  }
  const { id: _repeated, ...rest } = item;
  const fresh = withIds([rest], ids)[0] as T;
  taken.add(fresh.id);
  return fresh;
}
