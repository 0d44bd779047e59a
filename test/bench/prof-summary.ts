/**
 * Summarises a V8 .cpuprofile (from `npm run bench -- --profile`, which runs the router
 * child under --cpu-prof): self time by function and by package, top N.
 *   node --import tsx test/bench/prof-summary.ts FILE.cpuprofile [N]
 */
import { readFileSync } from "node:fs";

interface ProfNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfNode[];
  samples: number[];
  timeDeltas: number[];
}

export function where(url: string): string {
  if (!url) return "(native/gc)";
  if (url.startsWith("node:")) return url.replace(/^node:internal\/(deps\/)?/, "node:").split("/").slice(0, 2).join("/");
  const nm = url.lastIndexOf("node_modules/");
  if (nm !== -1) {
    const rest = url.slice(nm + 13).split("/");
    return rest[0]!.startsWith("@") ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  const src = url.indexOf("/dist/");
  return src !== -1 ? `router:${url.slice(src + 6)}` : url.replace(/^file:\/\//, "");
}

export function summarize(file: string, top = 40): string {
  const p = JSON.parse(readFileSync(file, "utf8")) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  for (let i = 0; i < p.samples.length; i++) self.set(p.samples[i]!, (self.get(p.samples[i]!) ?? 0) + (p.timeDeltas[i] ?? 0));
  let total = 0;
  const byFn = new Map<string, number>();
  const byPkg = new Map<string, number>();
  for (const [id, us] of self) {
    const n = byId.get(id)!;
    const name = n.callFrame.functionName || "(anonymous)";
    if (name === "(idle)" || name === "(program)") continue;
    total += us;
    const key = `${name}  ${where(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`;
    byFn.set(key, (byFn.get(key) ?? 0) + us);
    const pkg = name === "(garbage collector)" ? "(gc)" : where(n.callFrame.url);
    byPkg.set(pkg, (byPkg.get(pkg) ?? 0) + us);
  }
  // Inclusive ("total") time: every function on a sample's stack gets the sample once.
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const inclusive = new Map<string, number>();
  for (let i = 0; i < p.samples.length; i++) {
    const leaf = byId.get(p.samples[i]!)!;
    if (leaf.callFrame.functionName === "(idle)" || leaf.callFrame.functionName === "(program)") continue;
    const seen = new Set<string>();
    for (let id: number | undefined = p.samples[i]; id !== undefined; id = parent.get(id)) {
      const n = byId.get(id)!;
      if (!n.callFrame.url) continue;
      seen.add(`${n.callFrame.functionName || "(anonymous)"}  ${where(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`);
    }
    for (const k of seen) inclusive.set(k, (inclusive.get(k) ?? 0) + (p.timeDeltas[i] ?? 0));
  }
  const fmt = (m: Map<string, number>, n: number) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, us]) => `${((100 * us) / total).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(7)} ms  ${k}`)
      .join("\n");
  return `busy ${(total / 1000).toFixed(0)} ms\n\nby package:\n${fmt(byPkg, 25)}\n\nby function (self):\n${fmt(byFn, top)}\n\nby function (inclusive):\n${fmt(inclusive, top)}`;
}

const isMain = process.argv[1] && import.meta.url.endsWith(process.argv[1].replace(/^.*\//, ""));
if (isMain) {
  if (!process.argv[2]) throw new Error("usage: prof-summary.ts FILE.cpuprofile [N]");
  console.log(summarize(process.argv[2], Number(process.argv[3] ?? 40)));
}
