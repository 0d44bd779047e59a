import { writeFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { createBlobStore, DirectoryBlobStore, isObjectStorage, LanceBlobStore } from "../../src/files/blobs.js";
import { tempStorage } from "../helpers/files.js";

describe("where uploaded bytes live", () => {
  const storage = tempStorage();
  afterAll(() => storage.cleanup());

  it("a directory for a path, a LanceDB table for an object-storage URI", () => {
    expect(isObjectStorage("s3://bucket/router")).toBe(true);
    expect(isObjectStorage("./data")).toBe(false);
    expect(isObjectStorage("file:///srv/data")).toBe(false);
    expect(createBlobStore(storage.dir)).toBeInstanceOf(DirectoryBlobStore);
    expect(createBlobStore("s3://bucket/router")).toBeInstanceOf(LanceBlobStore);
  });

  it.each([
    ["directory", () => new DirectoryBlobStore(`${storage.dir}/files`)],
    // The table object storage would hold, on a local path: parts of 4 MB, read back whole.
    ["LanceDB table", () => new LanceBlobStore(`${storage.dir}/blobs`)],
  ])("%s: commit moves a temporary file under its id; read, remove", async (_name, make) => {
    const blobs = make();
    const big = Buffer.alloc(9 * 1024 * 1024 + 7, 7);
    big.write("head", 0);
    const temp = await blobs.tempPath();
    writeFileSync(temp, big);
    await blobs.commit(temp, "file-abc");
    expect((await blobs.read("file-abc")).equals(big)).toBe(true);
    await blobs.remove("file-abc");
    await expect(blobs.read("file-abc")).rejects.toThrow();
    await expect(blobs.commit(temp, "../escape")).rejects.toThrow();
  });
});
