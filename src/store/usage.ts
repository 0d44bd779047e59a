/**
 * Token and request counts per key, model and UTC day, for charge-back without Prometheus
 * (GET /v1/usage). Adapters: memory and Redis, one contract suite. Counts only grow; days
 * older than USAGE_RETENTION_DAYS are dropped.
 */
export interface UsageRow {
  /** UTC day, YYYY-MM-DD. */
  day: string;
  /** The key's configured name ("" without keys). */
  key: string;
  model: string;
  requests: number;
  input_tokens: number;
  output_tokens: number;
}

export interface UsageQuery {
  /** One key's rows only; unset: every key. */
  key?: string;
  /** First and last UTC day, inclusive (YYYY-MM-DD). */
  from: string;
  to: string;
}

export interface UsageStore {
  /** Adds the row's counts to what is recorded for its day, key and model. */
  record(row: UsageRow): Promise<void>;
  /** Rows in [from, to], ordered by day, key, model. */
  query(q: UsageQuery): Promise<UsageRow[]>;
  close(): Promise<void>;
}

export const USAGE_RETENTION_DAYS = 400;

/** Every UTC day from `from` to `to` inclusive (both YYYY-MM-DD). */
export function daysBetween(from: string, to: string): string[] {
  const days: string[] = [];
  for (let t = Date.parse(`${from}T00:00:00Z`), end = Date.parse(`${to}T00:00:00Z`); t <= end; t += 86_400_000) days.push(new Date(t).toISOString().slice(0, 10));
  return days;
}

/** Fields of one day's counters: key, model and the counter, joined by NUL (names never hold it). */
export const SEP = "\u0000";
export const COUNTERS = { r: "requests", i: "input_tokens", o: "output_tokens" } as const;

/** Turns one day's `key NUL model NUL counter -> n` entries into rows, sorted by key and model. */
export function rowsOfDay(day: string, entries: Iterable<[string, number]>, onlyKey: string | undefined): UsageRow[] {
  const rows = new Map<string, UsageRow>();
  for (const [field, n] of entries) {
    const [key, model, c] = field.split(SEP) as [string, string, keyof typeof COUNTERS];
    if (onlyKey !== undefined && key !== onlyKey) continue;
    const id = key + SEP + model;
    let row = rows.get(id);
    if (!row) rows.set(id, (row = { day, key, model, requests: 0, input_tokens: 0, output_tokens: 0 }));
    row[COUNTERS[c]] += n;
  }
  return [...rows.values()].sort((a, b) => (a.key === b.key ? (a.model < b.model ? -1 : 1) : a.key < b.key ? -1 : 1));
}
