import { daysBetween, rowsOfDay, SEP, USAGE_RETENTION_DAYS, type UsageQuery, type UsageRow, type UsageStore } from "../usage.js";

/** Usage counts of this instance (memory mode). */
export class MemoryUsageStore implements UsageStore {
  private readonly days = new Map<string, Map<string, number>>();

  async record(row: UsageRow): Promise<void> {
    let day = this.days.get(row.day);
    if (!day) {
      day = new Map();
      this.days.set(row.day, day);
      this.prune();
    }
    const base = row.key + SEP + row.model + SEP;
    add(day, `${base}r`, row.requests);
    add(day, `${base}i`, row.input_tokens);
    add(day, `${base}o`, row.output_tokens);
  }

  async query(q: UsageQuery): Promise<UsageRow[]> {
    return daysBetween(q.from, q.to).flatMap((d) => {
      const day = this.days.get(d);
      return day ? rowsOfDay(d, day, q.key) : [];
    });
  }

  async close(): Promise<void> {}

  private prune(): void {
    if (this.days.size <= USAGE_RETENTION_DAYS) return;
    const oldest = [...this.days.keys()].sort().slice(0, this.days.size - USAGE_RETENTION_DAYS);
    for (const d of oldest) this.days.delete(d);
  }
}

function add(day: Map<string, number>, field: string, n: number): void {
  if (n) day.set(field, (day.get(field) ?? 0) + n);
  else if (!day.has(field)) day.set(field, 0);
}
