/**
 * Where uploaded bytes live. The upload streams to a temporary file on local disk first (never
 * held whole in memory), then `commit` moves it under its id:
 * - a directory `files.storage`: `<storage>/files/<id>`, renamed into place when complete (a
 *   crash leaves no half-written file under an id); instances sharing the directory (a shared
 *   volume) read each other's uploads;
 * - an object-storage URI (`s3://…`): a LanceDB table `file_blobs` next to the index, the bytes
 *   in parts of 4 MB read from the temporary file one at a time, so every instance reads them
 *   where it reads the index.
 */
import { createReadStream } from "node:fs";
import { mkdir, readFile, rename, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import type { Connection, Table } from "@lancedb/lancedb";

export interface BlobStore {
  /** A fresh path to stream an upload to (its directory made on first use). */
  tempPath(): Promise<string>;
  /** Keeps a complete temporary file under `id` (the temporary file is gone after). */
  commit(temp: string, id: string): Promise<void>;
  read(id: string): Promise<Buffer>;
  remove(id: string): Promise<void>;
  discard(temp: string): Promise<void>;
}

/** True for a storage given as a URI (`s3://`, `gs://`, `az://`, …) rather than a directory. */
export function isObjectStorage(storage: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(storage) && !storage.startsWith("file://");
}

export function createBlobStore(storage: string): BlobStore {
  if (isObjectStorage(storage)) return new LanceBlobStore(storage.replace(/\/+$/, "") + "/blobs");
  return new DirectoryBlobStore(join(storage, "files"));
}

function checkId(id: string): string {
  if (!/^[A-Za-z0-9_-]+$/.test(id)) throw new Error(`not a file id: ${id}`);
  return id;
}

export class DirectoryBlobStore implements BlobStore {
  private made: Promise<unknown> | null = null;

  constructor(private readonly dir: string) {}

  /** In the same directory, so the rename is atomic. */
  async tempPath(): Promise<string> {
    await (this.made ??= mkdir(this.dir, { recursive: true }));
    return join(this.dir, `.upload-${randomBytes(8).toString("hex")}`);
  }

  async commit(temp: string, id: string): Promise<void> {
    await rename(temp, join(this.dir, checkId(id)));
  }

  read(id: string): Promise<Buffer> {
    return readFile(join(this.dir, checkId(id)));
  }

  async remove(id: string): Promise<void> {
    await rm(join(this.dir, checkId(id)), { force: true });
  }

  async discard(temp: string): Promise<void> {
    await rm(temp, { force: true });
  }
}

const PART_BYTES = 4 * 1024 * 1024;

export class LanceBlobStore implements BlobStore {
  private table: Promise<Table> | null = null;

  constructor(private readonly uri: string) {}

  private open(): Promise<Table> {
    return (this.table ??= (async () => {
      const [lancedb, arrow] = await Promise.all([import("@lancedb/lancedb"), import("apache-arrow")]);
      const db: Connection = await lancedb.connect(this.uri, { readConsistencyInterval: 0 });
      const schema = new arrow.Schema([new arrow.Field("id", new arrow.Utf8(), false), new arrow.Field("part", new arrow.Int32(), false), new arrow.Field("data", new arrow.Binary(), false)]);
      return db.createEmptyTable("file_blobs", schema, { mode: "create", existOk: true });
    })());
  }

  async tempPath(): Promise<string> {
    return join(tmpdir(), `rr-upload-${randomBytes(8).toString("hex")}`);
  }

  async commit(temp: string, id: string): Promise<void> {
    const table = await this.open();
    let part = 0;
    try {
      for await (const chunk of createReadStream(temp, { highWaterMark: PART_BYTES })) {
        await table.add([{ id: checkId(id), part: part++, data: chunk as Buffer }]);
      }
      if (part === 0) await table.add([{ id, part: 0, data: Buffer.alloc(0) }]);
    } catch (err) {
      await table.delete(`id = '${id}'`).catch(() => {});
      throw err;
    } finally {
      await rm(temp, { force: true });
    }
  }

  async read(id: string): Promise<Buffer> {
    const table = await this.open();
    const rows = (await table.query().where(`id = '${checkId(id)}'`).select(["part", "data"]).toArray()) as Array<{ part: number; data: Uint8Array }>;
    if (rows.length === 0) throw Object.assign(new Error(`no bytes for ${id}`), { code: "ENOENT" });
    return Buffer.concat(rows.sort((a, b) => a.part - b.part).map((r) => r.data));
  }

  async remove(id: string): Promise<void> {
    await (await this.open()).delete(`id = '${checkId(id)}'`);
  }

  async discard(temp: string): Promise<void> {
    await rm(temp, { force: true });
  }
}


