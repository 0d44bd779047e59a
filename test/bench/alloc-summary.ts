/**
 * Summarises a sampling heap profile of allocations (ab.ts --prof with PROF_KIND=alloc:
 * everything allocated in the window, collected or not): bytes by package and by function,
 * self (the function that allocated) and inclusive (every function on the stack), top N.
 * With the window's request count, bytes per request.
 *   npx tsx test/bench/alloc-summary.ts .bench/prof/steady.heapprofile [N] [requests]
 */
import { readFileSync } from "node:fs";
import { where } from "./prof-summary.js";

interface AllocNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: AllocNode[];
}

export function summarizeAlloc(file: string, top = 40, requests = 0): string {
  const head = (JSON.parse(readFileSync(file, "utf8")) as { head: AllocNode }).head;
  const byPkg = new Map<string, number>();
  const byFn = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let total = 0;
  const add = (m: Map<string, number>, k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v);
  // Returns the bytes allocated at and under a node; a function's inclusive figure counts it once per stack.
  const walk = (n: AllocNode, onStack: Set<string>): void => {
    const f = n.callFrame;
    const key = `${f.functionName || "(anonymous)"}  ${where(f.url)}:${f.lineNumber + 1}`;
    const fresh = f.url !== "" && !onStack.has(key);
    if (fresh) onStack.add(key);
    if (n.selfSize > 0) {
      total += n.selfSize;
      add(byFn, key, n.selfSize);
      add(byPkg, where(f.url), n.selfSize);
      for (const k of onStack) add(inclusive, k, n.selfSize);
    }
    for (const c of n.children) walk(c, onStack);
    if (fresh) onStack.delete(key);
  };
  walk(head, new Set());
  const unit = requests > 0 ? (b: number) => `${((b / requests) / 1024).toFixed(2).padStart(8)} KB/req` : (b: number) => `${(b / 1048576).toFixed(1).padStart(8)} MB`;
  const fmt = (m: Map<string, number>) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([k, b]) => `${((100 * b) / total).toFixed(1).padStart(5)}%  ${unit(b)}  ${k}`)
      .join("\n");
  return `allocated ${unit(total).trim()}\n\nby package:\n${fmt(byPkg)}\n\nby function (self):\n${fmt(byFn)}\n\nby function (inclusive):\n${fmt(inclusive)}`;
}

const isMain = process.argv[1] && import.meta.url.endsWith(process.argv[1].replace(/^.*\//, ""));
if (isMain) {
  if (!process.argv[2]) throw new Error("usage: alloc-summary.ts FILE.heapprofile [N] [requests]");
  console.log(summarizeAlloc(process.argv[2], Number(process.argv[3] ?? 40), Number(process.argv[4] ?? 0)));
}
