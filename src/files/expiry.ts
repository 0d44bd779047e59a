/**
 * The expiry sweep: every `everyMs` (a minute by default) it removes the files whose
 * `expires_after` passed and drops the chunks of the vector stores that expired, whoever owns
 * them, so that what nobody reads again does not stay on disk and in the index. Reads enforce
 * expiry on their own (files-api.ts, vector-stores.ts): the sweep is what keeps storage honest,
 * not what keeps answers right. Each instance sweeps; the store's expiring-id lists
 * (`FileStore.expiredFiles`, `expiredVectorStores`) are shared, and removing twice is harmless.
 * A pass takes `BATCH` of each at a time and goes on while a batch came back full, up to
 * `MAX_BATCHES` (a store that keeps failing a removal cannot hold a pass in a loop).
 */
import type { Logger } from "pino";
import type { FilesApi } from "./files-api.js";
import type { VectorStoresApi } from "./vector-stores.js";

const BATCH = 100;
const MAX_BATCHES = 20;

export class ExpirySweep {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  constructor(
    private readonly files: FilesApi,
    private readonly stores: VectorStoresApi,
    private readonly log: Logger,
  ) {}

  start(everyMs: number): void {
    if (this.timer || everyMs <= 0) return;
    this.timer = setInterval(() => void this.sweep(), everyMs);
    this.timer.unref();
  }

  /** One pass (a pass already running is waited for, not doubled). */
  sweep(): Promise<void> {
    this.running ??= this.pass().finally(() => (this.running = null));
    return this.running;
  }

  private async pass(): Promise<void> {
    try {
      const files = await drain((limit) => this.files.sweep(limit));
      const stores = await drain((limit) => this.stores.sweep(limit));
      if (files + stores > 0) this.log.info({ files, vector_stores: stores }, "expired files removed and expired vector stores emptied");
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, "the expiry sweep failed; the next one tries again");
    }
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}

/** Calls `batch` while it removes a full batch, at most MAX_BATCHES times; how many it removed. */
async function drain(batch: (limit: number) => Promise<number>): Promise<number> {
  let total = 0;
  for (let i = 0; i < MAX_BATCHES; i++) {
    const n = await batch(BATCH);
    total += n;
    if (n < BATCH) break;
  }
  return total;
}
