import type { HistorySource } from "../responses/create/plan.js";
import { itemOfRecord, type StoredResponse } from "../store/types.js";
import type { Item } from "../wire/types.js";

/**
 * A connection's most recent responses (`store: false` ones included), newest kept: what
 * `previous_response_id` chains from on the same socket without the store. Bounded, and
 * gone with the connection (OpenAI's behaviour: another socket does not see them).
 */
export class RecentResponses implements HistorySource {
  private readonly byId = new Map<string, StoredResponse>();

  constructor(private readonly max: number) {}

  get(id: string): StoredResponse | undefined {
    return this.byId.get(id);
  }

  /** An item of one of these responses (input or output) by id, the newest response first. */
  findItem(id: string): Item | undefined {
    const records = [...this.byId.values()];
    for (let r = records.length - 1; r >= 0; r--) {
      const found = itemOfRecord(records[r]!, id);
      if (found) return found.item;
    }
    return undefined;
  }

  add(record: StoredResponse): void {
    this.byId.delete(record.response.id);
    this.byId.set(record.response.id, record);
    if (this.byId.size > this.max) this.byId.delete(this.byId.keys().next().value!);
  }

  get size(): number {
    return this.byId.size;
  }

  clear(): void {
    this.byId.clear();
  }
}
