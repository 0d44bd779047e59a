/**
 * The upkeep of a store's table, off the ingestion path: folding new rows into the full-text
 * (and vector) index, and building the approximate vector index once the table is large.
 *
 * Why batched: LanceDB's `optimize` (compaction + index update) costs about the same whether
 * one file or fifty arrived since the last one (~0.2 s at 20k rows, more as the table grows),
 * so running it after every file made ingestion crawl (13 chunks/s). Rows not yet folded in are
 * still searched (LanceDB scans them, by vector and by BM25), so a file is findable the moment
 * its write returns; folding only keeps that scan short. So a fold runs when a table's
 * unfolded rows pass `foldAfterRows`, or `foldDelayMs` after the last write (the ingestion
 * queue drained), and never later than `foldMaxWaitMs` after the first unfolded write.
 *
 * Why a vector index only past `vectorIndexMinRows`: a flat (exact) vector search is fast on a
 * small table and grows with it (354 ms p50 at 100k chunks of 256 dimensions); HNSW over
 * scalar-quantised vectors, with the top candidates re-ranked on the full vectors
 * (`refineFactor` in vector-index.ts), answers in milliseconds with recall close to exact. It
 * is built once, in the background; `optimize` then adds later rows to it.
 *
 * One task at a time per table (a fold and an index build on the same fragments would conflict
 * at commit); writes are never held: LanceDB commits appends and deletes alongside them. A task
 * that fails (another instance's commit won the race) is logged and retried at the next write.
 */
import type { Table } from "@lancedb/lancedb";

export interface UpkeepOptions {
  /** Unfolded rows that start a fold at once. */
  foldAfterRows: number;
  /** Quiet time after a table's last write before its fold. */
  foldDelayMs: number;
  /** The longest a written row waits for its fold while writes keep coming. */
  foldMaxWaitMs: number;
  /** Rows from which a table gets an approximate (HNSW) vector index. */
  vectorIndexMinRows: number;
}

export const UPKEEP_DEFAULTS: UpkeepOptions = { foldAfterRows: 5_000, foldDelayMs: 1_000, foldMaxWaitMs: 15_000, vectorIndexMinRows: 20_000 };

interface TableUpkeep {
  table: Table;
  /** Rows written since the last fold began. */
  pending: number;
  /** When the oldest of them was written (0: none). */
  since: number;
  timer: NodeJS.Timeout | null;
  running: Promise<void> | null;
}

export class IndexUpkeep {
  private readonly tables = new Map<string, TableUpkeep>();
  private closed = false;

  constructor(
    private readonly opts: UpkeepOptions,
    private readonly onError: (table: string, task: string, err: unknown) => void,
  ) {}

  /** `rows` were written to `name` (0: updated or deleted): schedules its fold. */
  wrote(name: string, table: Table, rows: number): void {
    if (this.closed) return;
    let st = this.tables.get(name);
    if (!st) this.tables.set(name, (st = { table, pending: 0, since: 0, timer: null, running: null }));
    st.table = table;
    st.pending += rows;
    if (st.since === 0) st.since = Date.now();
    this.plan(name, st);
  }

  private plan(name: string, st: TableUpkeep): void {
    if (st.running || this.closed || st.since === 0) return;
    if (st.timer) clearTimeout(st.timer);
    const maxWaitLeft = st.since + this.opts.foldMaxWaitMs - Date.now();
    const wait = st.pending >= this.opts.foldAfterRows ? 0 : Math.max(0, Math.min(this.opts.foldDelayMs, maxWaitLeft));
    st.timer = setTimeout(() => this.run(name, st), wait);
    st.timer.unref();
  }

  private run(name: string, st: TableUpkeep): Promise<void> {
    if (st.timer) clearTimeout(st.timer);
    st.timer = null;
    st.pending = 0;
    st.since = 0;
    st.running = this.fold(name, st.table).finally(() => {
      st.running = null;
      // Written to while it ran: those rows get their own fold.
      this.plan(name, st);
    });
    return st.running;
  }

  private async fold(name: string, table: Table): Promise<void> {
    try {
      await table.optimize();
    } catch (err) {
      this.onError(name, "fold", err);
      return;
    }
    try {
      await this.ensureVectorIndex(table);
    } catch (err) {
      this.onError(name, "vector index", err);
    }
  }

  private async ensureVectorIndex(table: Table): Promise<void> {
    if ((await table.listIndices()).some((i) => i.columns.length === 1 && i.columns[0] === "vector")) return;
    if ((await table.countRows()) < this.opts.vectorIndexMinRows) return;
    const { Index } = await import("@lancedb/lancedb");
    // HNSW needs no partitions to train (one IVF partition); the quantised vectors are refined
    // on the full ones at query time.
    await table.createIndex("vector", { config: Index.hnswSq({ distanceType: "cosine", numPartitions: 1 }), replace: false });
  }

  /** Runs every scheduled fold now and resolves when none is left (tests, the bench, shutdown). */
  async idle(): Promise<void> {
    for (;;) {
      const busy = [...this.tables.entries()].filter(([, st]) => st.running || st.timer);
      if (busy.length === 0) return;
      await Promise.all(busy.map(([name, st]) => st.running ?? this.run(name, st)));
    }
  }

  /** Forgets a table (dropped): its scheduled fold does not run. */
  forget(name: string): void {
    const st = this.tables.get(name);
    if (st?.timer) clearTimeout(st.timer);
    this.tables.delete(name);
  }

  /** Stops scheduling; a task already running ends on its own, pending folds wait for the next writer. */
  close(): void {
    this.closed = true;
    for (const st of this.tables.values()) if (st.timer) clearTimeout(st.timer);
    this.tables.clear();
  }
}
