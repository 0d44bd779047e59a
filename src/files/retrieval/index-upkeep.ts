/**
 * The upkeep of a store's table: folding newly written rows into its indexes, several files at
 * a time, and building the approximate vector index once the table is large.
 *
 * Why a fold before a file is `completed`: LanceDB's full-text (BM25) search sees only the rows
 * its inverted index holds (a vector search scans the rest, a BM25 search does not: rows added
 * after the index are invisible to it until `optimize` folds them in). So a file's rows are
 * folded in before its indexing ends, or an exact identifier in it would not be found.
 *
 * Why batched: `optimize` (compaction + index update) costs about the same for one file's rows
 * as for fifty (~0.2 s at 20k rows, more as the table grows), so one fold per file made
 * ingestion crawl (13 chunks/s). Folds here are group commits: a file whose rows are written
 * waits for the next fold of its table; one fold runs at a time, and every file that finished
 * writing while it ran is folded by the one after. With `indexing_concurrency` files in flight,
 * up to that many share a fold; a lone file pays one fold, as before.
 *
 * Why a vector index only past `vectorIndexMinRows`, and only when the table is idle: a flat
 * (exact) vector search is fast on a small table and grows with it (354 ms p50 at 100k chunks
 * of 256 dimensions); HNSW over scalar-quantised vectors, re-ranked on the full vectors
 * (`refineFactor` in vector-index.ts), answers in milliseconds with recall close to exact. Its
 * build takes long (tens of seconds at 100k rows) and a fold's compaction committed meanwhile
 * preempts it (LanceDB refuses the index then), so it starts once the table had no write for
 * `idleBeforeVectorIndexMs`; a file written during the build waits for its fold until the build
 * ends. Once built, `optimize` adds later rows to it.
 *
 * A fold that fails (another instance's commit won the race) is retried; one that keeps failing
 * fails its files' indexing (they end `failed`, never `completed` unsearchable).
 */
import type { Table } from "@lancedb/lancedb";

export interface UpkeepOptions {
  /** false: every write runs its own fold at once, its failure ignored (ingestion before the shared folds: the bench's "before"). */
  batchFolds: boolean;
  /** Rows from which a table gets an approximate (HNSW) vector index (`tools.file_search.vector_index_min_chunks`; Infinity: never). */
  vectorIndexMinRows: number;
  /** Quiet time after a table's last write before its vector index is built. */
  idleBeforeVectorIndexMs: number;
}

export const UPKEEP_DEFAULTS: UpkeepOptions = { batchFolds: true, vectorIndexMinRows: 20_000, idleBeforeVectorIndexMs: 5_000 };

const FOLD_ATTEMPTS = 5;

interface Waiter {
  resolve(): void;
  reject(err: unknown): void;
}

interface TableUpkeep {
  table: Table;
  /** Writers waiting for the next fold. */
  waiters: Waiter[];
  /** The fold or the vector index build running now. */
  running: Promise<void> | null;
  buildTimer: NodeJS.Timeout | null;
  /** The vector index exists (or was just built): no more builds. */
  vectorIndexed: boolean;
  /** Written to since the last look at whether it needs its vector index. */
  unchecked: boolean;
}

export class IndexUpkeep {
  private readonly tables = new Map<string, TableUpkeep>();
  private closed = false;

  constructor(
    private readonly opts: UpkeepOptions,
    private readonly onError: (table: string, task: string, err: unknown) => void,
  ) {}

  /** Resolves once a fold that began after this call has folded `table`'s rows into its indexes. */
  folded(name: string, table: Table): Promise<void> {
    if (!this.opts.batchFolds) return table.optimize().then(() => {}, () => {});
    let st = this.tables.get(name);
    if (!st) this.tables.set(name, (st = { table, waiters: [], running: null, buildTimer: null, vectorIndexed: false, unchecked: true }));
    st.table = table;
    st.unchecked = true;
    if (st.buildTimer) clearTimeout(st.buildTimer);
    st.buildTimer = null;
    const done = new Promise<void>((resolve, reject) => st.waiters.push({ resolve, reject }));
    if (!st.running) this.fold(name, st);
    return done;
  }

  private fold(name: string, st: TableUpkeep): void {
    const waiters = st.waiters.splice(0);
    st.running = foldWithRetries(st.table).then(
      () => waiters.forEach((w) => w.resolve()),
      (err) => {
        this.onError(name, "fold", err);
        waiters.forEach((w) => w.reject(err));
      },
    );
    void st.running.finally(() => this.next(name, st));
  }

  /** After a task: the writers who came meanwhile get their fold; an idle table may get its vector index. */
  private next(name: string, st: TableUpkeep): void {
    st.running = null;
    if (st.waiters.length > 0) return this.fold(name, st);
    if (this.closed || st.vectorIndexed || !st.unchecked) return;
    st.buildTimer = setTimeout(() => {
      st.buildTimer = null;
      if (st.running || st.waiters.length > 0 || this.closed) return;
      st.running = this.ensureVectorIndex(st).catch((err) => this.onError(name, "vector index", err));
      void st.running.finally(() => this.next(name, st));
    }, this.opts.idleBeforeVectorIndexMs);
    st.buildTimer.unref();
  }

  private async ensureVectorIndex(st: TableUpkeep): Promise<void> {
    const { table } = st;
    st.unchecked = false;
    if ((await table.listIndices()).some((i) => i.columns.length === 1 && i.columns[0] === "vector")) {
      st.vectorIndexed = true;
      return;
    }
    if ((await table.countRows()) < this.opts.vectorIndexMinRows) return;
    const { Index } = await import("@lancedb/lancedb");
    // HNSW needs no partitions trained (one IVF partition); the quantised vectors are refined
    // on the full ones at query time.
    await table.createIndex("vector", { config: Index.hnswSq({ distanceType: "cosine", numPartitions: 1 }), replace: false });
    st.vectorIndexed = true;
  }

  /** Runs a vector index build that waits for its quiet time now, and resolves when every table is idle (tests, the bench). */
  async idle(): Promise<void> {
    for (;;) {
      const busy = [...this.tables.entries()].filter(([, st]) => st.running || st.buildTimer);
      if (busy.length === 0) return;
      for (const [name, st] of busy) {
        if (st.running || !st.buildTimer) continue;
        clearTimeout(st.buildTimer);
        st.buildTimer = null;
        st.running = this.ensureVectorIndex(st).catch((err) => this.onError(name, "vector index", err));
        void st.running.finally(() => this.next(name, st));
      }
      await Promise.all(busy.map(([, st]) => st.running?.catch(() => {})));
    }
  }

  /** Forgets a table (dropped): no vector index is built for it. */
  forget(name: string): void {
    const st = this.tables.get(name);
    if (st?.buildTimer) clearTimeout(st.buildTimer);
    if (st) st.vectorIndexed = true;
    this.tables.delete(name);
  }

  /** Stops scheduling builds; folds already asked for still run (their files wait for them). */
  close(): void {
    this.closed = true;
    for (const st of this.tables.values()) {
      if (st.buildTimer) clearTimeout(st.buildTimer);
      st.buildTimer = null;
    }
  }
}

async function foldWithRetries(table: Table): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await table.optimize();
      return;
    } catch (err) {
      if (attempt >= FOLD_ATTEMPTS) throw err;
      // Another instance's fold won the commit: try again on top of it, a little later each time.
      await new Promise((r) => setTimeout(r, 100 * attempt + Math.random() * 100));
    }
  }
}
