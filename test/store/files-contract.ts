import { describe, expect, it } from "vitest";
import type { StoredFile, StoredVectorStoreFile, Stores } from "../../src/store/index.js";

let n = 0;
const uid = (p: string) => `${p}_${process.pid}_${++n}_${Math.random().toString(36).slice(2, 8)}`;

const file = (id: string, owner: string): StoredFile => ({
  file: { id, object: "file", bytes: 10, created_at: 1, filename: "a.txt", purpose: "assistants", status: "processed" },
  owner,
  mime: "text/plain",
});

const storeFile = (vs: string, id: string, attributes: StoredVectorStoreFile["file"]["attributes"] = {}): StoredVectorStoreFile => ({
  file: {
    id,
    object: "vector_store.file",
    created_at: 1,
    vector_store_id: vs,
    status: "in_progress",
    usage_bytes: 0,
    last_error: null,
    attributes,
    chunking_strategy: { type: "static", static: { max_chunk_size_tokens: 800, chunk_overlap_tokens: 400 } },
  },
  owner: "k",
  batch_id: null,
});

/** The Files and Vector Stores records part of the store contract (called from contract.ts). */
export function describeFilesContract(open: () => Promise<Stores>): void {
  describe("files", () => {
    it("keeps files per owner; delete removes them", async () => {
      const { files } = await open();
      const [a, b, c] = [uid("file"), uid("file"), uid("file")];
      const owner = uid("owner");
      await files.putFile(file(a, owner));
      await files.putFile(file(b, owner));
      await files.putFile(file(c, uid("other")));
      expect(await files.getFile(a)).toEqual(file(a, owner));
      expect((await files.listFiles(owner)).map((f) => f.file.id).sort()).toEqual([a, b].sort());
      expect(await files.deleteFile(a)).toBe(true);
      expect(await files.deleteFile(a)).toBe(false);
      expect(await files.getFile(a)).toBeNull();
      expect((await files.listFiles(owner)).map((f) => f.file.id)).toEqual([b]);
    });

    it("vector stores, their files and batches; an update never brings a detached file back", async () => {
      const { files } = await open();
      const owner = uid("owner");
      const vs = uid("vs");
      const [f1, f2] = [uid("file"), uid("file")];
      await files.putVectorStore({ store: { id: vs, object: "vector_store", created_at: 1, name: "n", metadata: {}, last_active_at: 1 }, owner });
      expect((await files.listVectorStores(owner)).map((s) => s.store.id)).toEqual([vs]);
      await files.putStoreFile(storeFile(vs, f1, { year: 2024, team: "a", ok: true }));
      await files.putStoreFile(storeFile(vs, f2));
      expect(await files.storesHolding(f1)).toEqual([vs]);
      const updated = await files.updateStoreFile(vs, f1, { status: "completed", usage_bytes: 42, last_error: null });
      expect(updated?.file).toMatchObject({ status: "completed", usage_bytes: 42, last_error: null, attributes: { year: 2024, team: "a", ok: true } });
      expect((await files.getStoreFile(vs, f2))?.file.attributes).toEqual({});
      expect((await files.updateStoreFile(vs, f2, { attributes: {} }))?.file.attributes).toEqual({});
      expect((await files.updateStoreFile(vs, f2, { status: "failed", last_error: { code: "server_error", message: "down" } }))?.file.last_error).toEqual({ code: "server_error", message: "down" });
      expect((await files.listStoreFiles(vs)).map((f) => f.file.id).sort()).toEqual([f1, f2].sort());
      expect(await files.deleteStoreFile(vs, f1)).toBe(true);
      expect(await files.updateStoreFile(vs, f1, { status: "completed" })).toBeNull();
      expect(await files.getStoreFile(vs, f1)).toBeNull();
      expect(await files.storesHolding(f1)).toEqual([]);

      const batch = uid("vsfb");
      await files.putBatch({ batch: { id: batch, object: "vector_store.files_batch", created_at: 1, vector_store_id: vs, cancelled: false }, owner, file_ids: [f2] });
      expect(await files.cancelBatch(batch)).toBe(true);
      expect(await files.getBatch(batch)).toMatchObject({ batch: { cancelled: true }, file_ids: [f2] });
      expect(await files.cancelBatch(uid("vsfb"))).toBe(false);

      expect(await files.deleteVectorStore(vs)).toBe(true);
      expect(await files.getVectorStore(vs)).toBeNull();
      expect(await files.listStoreFiles(vs)).toEqual([]);
      expect(await files.storesHolding(f2)).toEqual([]);
      expect(await files.getBatch(batch)).toBeNull();
      expect(await files.listVectorStores(owner)).toEqual([]);
      expect(await files.deleteVectorStore(vs)).toBe(false);
    });

    it("finds the expired files and vector stores, whoever owns them, until deleted or swept", async () => {
      const { files } = await open();
      const [soon, later, never] = [uid("file"), uid("file"), uid("file")];
      const expiring = (id: string, owner: string, expires_at?: number): StoredFile => ({ ...file(id, owner), file: { ...file(id, owner).file, expires_at } });
      await files.putFile(expiring(soon, uid("a"), 1_000));
      await files.putFile(expiring(later, uid("b"), 2_000));
      await files.putFile(expiring(never, uid("c")));
      const mine = (ids: string[], of: string[]) => ids.filter((id) => of.includes(id)).sort();
      const all = [soon, later, never];
      expect(mine(await files.expiredFiles(999, 10_000), all)).toEqual([]);
      expect(mine(await files.expiredFiles(1_000, 10_000), all)).toEqual([soon]);
      expect(mine(await files.expiredFiles(5_000, 10_000), all)).toEqual([soon, later].sort());
      await files.putFile(expiring(later, "b")); // no expiry any more
      await files.deleteFile(soon);
      expect(mine(await files.expiredFiles(5_000, 10_000), all)).toEqual([]);

      const [vs1, vs2] = [uid("vs"), uid("vs")];
      const store = (id: string, expires_at: number | null) => ({ store: { id, object: "vector_store" as const, created_at: 1, name: "", metadata: {}, last_active_at: 1, expires_after: expires_at ? { anchor: "last_active_at" as const, days: 1 } : null, expires_at }, owner: uid("o") });
      await files.putVectorStore(store(vs1, 1_000));
      await files.putVectorStore(store(vs2, 3_000));
      expect(mine(await files.expiredVectorStores(2_000, 10_000), [vs1, vs2])).toEqual([vs1]);
      await files.sweptVectorStore(vs1);
      expect(mine(await files.expiredVectorStores(5_000, 10_000), [vs1, vs2])).toEqual([vs2]);
      expect((await files.getVectorStore(vs1))?.store.expires_at).toBe(1_000); // swept, still there (reported expired)
      await files.putVectorStore(store(vs2, 9_000)); // used again: the expiry moved
      expect(mine(await files.expiredVectorStores(5_000, 10_000), [vs1, vs2])).toEqual([]);
      await files.deleteVectorStore(vs2);
      expect(mine(await files.expiredVectorStores(10_000, 10_000), [vs1, vs2])).toEqual([]);
      await files.deleteVectorStore(vs1);
      await files.deleteFile(later);
      await files.deleteFile(never);
    });
  });
}
