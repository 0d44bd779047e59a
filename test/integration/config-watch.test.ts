import { mkdirSync, mkdtempSync, renameSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { RouterConfig } from "../../src/config/load.js";
import { watchConfig } from "../../src/config/watch.js";
import { waitUntil } from "../helpers/wait.js";

/**
 * Hot reload survives the ways a config file really changes: in place, replaced by an editor
 * (write a temp file, rename over), and a Kubernetes ConfigMap update (a `..data` symlink swap)
 * - and keeps working after each, since the directory is watched, not the file's inode.
 */
const config = (model: string) => `endpoints: [{ name: a, url: "http://127.0.0.1:9/v1", kind: chat }]\nmodels: { ${model}: { endpoints: [a] } }\n`;
const watchers: { close(): void }[] = [];
afterEach(() => {
  for (const w of watchers.splice(0)) w.close();
});

function watch(file: string): { models: () => string[][] } {
  const seen: string[][] = [];
  watchers.push(watchConfig(file, { onReload: (c: RouterConfig) => seen.push(Object.keys(c.models)), onError: () => {} }, 30));
  return { models: () => seen };
}
const last = (w: { models: () => string[][] }) => w.models().at(-1)?.[0];

describe("config file watcher", () => {
  it("reloads a file written in place and a file replaced by rename, again and again", async () => {
    const dir = mkdtempSync(join(tmpdir(), "rr-watch-"));
    const file = join(dir, "router.yaml");
    writeFileSync(file, config("m0"));
    const w = watch(file);
    writeFileSync(file, config("m1"));
    await waitUntil("the in-place write", () => last(w) === "m1");
    for (const n of [2, 3, 4]) {
      writeFileSync(`${file}.swp`, config(`m${n}`));
      renameSync(`${file}.swp`, file);
      await waitUntil(`replace ${n}`, () => last(w) === `m${n}`);
    }
    writeFileSync(file, config("m5"));
    await waitUntil("an in-place write after the replaces", () => last(w) === "m5");
  });

  it("reloads a ConfigMap-style mount when the ..data symlink is swapped", async () => {
    const dir = mkdtempSync(join(tmpdir(), "rr-cm-"));
    const version = (n: number) => {
      const d = join(dir, `..2026_${n}`);
      mkdirSync(d);
      writeFileSync(join(d, "router.yaml"), config(`cm${n}`));
      return `..2026_${n}`;
    };
    symlinkSync(version(1), join(dir, "..data"));
    symlinkSync(join("..data", "router.yaml"), join(dir, "router.yaml"));
    const w = watch(join(dir, "router.yaml"));
    for (const n of [2, 3]) {
      // What the kubelet does: a new timestamped dir, a temp symlink to it, renamed over ..data.
      symlinkSync(version(n), join(dir, "..data_tmp"));
      renameSync(join(dir, "..data_tmp"), join(dir, "..data"));
      await waitUntil(`ConfigMap update ${n}`, () => last(w) === `cm${n}`);
    }
    expect(w.models().map((m) => m[0])).toEqual(["cm2", "cm3"]);
  });
});
