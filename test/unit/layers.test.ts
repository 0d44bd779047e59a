import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * The import rule (docs/architecture.md, "Layers"): a src/ file may import its own
 * folder and anything in a LOWER layer, nothing in its own layer's other units and
 * nothing above. The order is read from the ```layers block of that doc, so the doc is
 * the one place it is declared. A plain scan of import/export specifiers (type-only
 * imports included: a type cycle is a cycle) instead of dependency-cruiser: no
 * dependency, and the rule is a dozen lines.
 */
const root = resolve(import.meta.dirname, "../..");
const src = join(root, "src");

function declaredLayers(): string[][] {
  const doc = readFileSync(join(root, "docs/architecture.md"), "utf8");
  const block = /```layers\n([\s\S]*?)```/.exec(doc);
  if (!block) throw new Error("docs/architecture.md has no ```layers block");
  return block[1]!
    .split("\n")
    .map((line) => line.replace(/#.*/, "").trim())
    .filter(Boolean)
    .map((line) => line.split(/\s+/).map((unit) => unit.replace(/\/$/, "")));
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

/** The unit a src file belongs to: its top folder, or the file itself at the top. */
const unitOf = (file: string) => relative(src, file).split("/")[0]!;

const SPECIFIER = /(?:^|[\s;])(?:import|export)\s(?:[^'"`;]*?\sfrom\s*)?["'](\.{1,2}\/[^"']+)["']|import\(\s*["'](\.{1,2}\/[^"']+)["']\s*\)/g;

/** Relative imports of a file, resolved to .ts paths. */
export function localImports(file: string, text = readFileSync(file, "utf8")): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(SPECIFIER)) {
    const spec = (m[1] ?? m[2])!;
    out.push(resolve(dirname(file), spec.replace(/\.js$/, ".ts")));
  }
  return out;
}

describe("import layers", () => {
  const layers = declaredLayers();
  const layerOf = new Map<string, number>();
  layers.forEach((units, i) => units.forEach((u) => layerOf.set(u, i)));
  const files = sourceFiles(src);

  it("the scanner sees every form of import", () => {
    const f = join(src, "a/x.ts");
    const text = `import { a } from "./a.js";\nimport type { B } from "../b/b.js";\nexport { c } from "../c.js";\nexport type * from "./d.js";\nimport {\n  e,\n} from "../e/e.js";\nimport "../g.js";\nconst f = await import("../f.js");\nimport x from "hono";`;
    expect(localImports(f, text).map((p) => relative(src, p))).toEqual(["a/a.ts", "b/b.ts", "c.ts", "a/d.ts", "e/e.ts", "g.ts", "f.ts"]);
  });

  it("declares every src folder and top-level file exactly once", () => {
    const declared = layers.flat();
    expect(new Set(declared).size).toBe(declared.length);
    const units = [...new Set(files.map(unitOf))].sort();
    expect(units.filter((u) => !layerOf.has(u))).toEqual([]);
    expect(declared.filter((u) => !units.includes(u))).toEqual([]);
  });

  it("the top of src/ holds only the entry files", () => {
    const top = files.filter((f) => dirname(f) === src).map((f) => relative(src, f)).sort();
    expect(top).toEqual(["app.ts", "cli.ts", "main.ts", "server.ts"]);
  });

  it("no folder under src/ holds more than 15 source files (a room that grows is split by capability)", () => {
    const perFolder = new Map<string, number>();
    for (const f of files) perFolder.set(dirname(f), (perFolder.get(dirname(f)) ?? 0) + 1);
    const crowded = [...perFolder].filter(([dir, n]) => dir !== src && n > 15).map(([dir, n]) => `${relative(src, dir)}/: ${n} files`);
    expect(crowded).toEqual([]);
  });

  it("the README's Layout and the architecture doc's folder table name every unit", () => {
    const readme = readFileSync(join(root, "README.md"), "utf8");
    const layout = /## Layout\n+```\n([\s\S]*?)```/.exec(readme)?.[1] ?? "";
    const arch = readFileSync(join(root, "docs/architecture.md"), "utf8");
    const table = /## Folders\n([\s\S]*?)\n## /.exec(arch)?.[1] ?? "";
    const units = [...new Set(files.map(unitOf))].map((u) => (u.endsWith(".ts") ? u : `${u}/`));
    expect(units.filter((u) => !layout.includes(u))).toEqual([]);
    expect(units.filter((u) => !table.includes(`\`${u}\``))).toEqual([]);
    // Every folder, sub-folders too, has its line in the folder table.
    const folders = [...new Set(files.map((f) => relative(src, dirname(f))).filter(Boolean))].map((d) => `${d}/`);
    expect(folders.filter((d) => !table.includes(`\`${d}\``))).toEqual([]);
  });

  it("every import resolves and points down (or stays in its folder)", () => {
    const bad: string[] = [];
    for (const file of files) {
      const from = unitOf(file);
      for (const target of localImports(file)) {
        const name = `${relative(src, file)} -> ${relative(root, target)}`;
        if (!existsSync(target)) bad.push(`${name}: does not resolve`);
        else if (!target.startsWith(src + "/")) bad.push(`${name}: leaves src/`);
        else {
          const to = unitOf(target);
          if (to !== from && !(layerOf.get(to)! > layerOf.get(from)!)) bad.push(`${name}: ${from} may not import ${to}`);
        }
      }
    }
    expect(bad).toEqual([]);
  });

  it("no file imports itself back through a cycle", () => {
    const graph = new Map(files.map((f) => [f, localImports(f).filter((t) => existsSync(t))]));
    const state = new Map<string, "open" | "done">();
    const cycles: string[] = [];
    const visit = (f: string, path: string[]) => {
      if (state.get(f) === "done") return;
      if (state.get(f) === "open") {
        cycles.push([...path.slice(path.indexOf(f)), f].map((p) => relative(src, p)).join(" -> "));
        return;
      }
      state.set(f, "open");
      for (const t of graph.get(f) ?? []) visit(t, [...path, f]);
      state.set(f, "done");
    };
    for (const f of files) visit(f, []);
    expect(cycles).toEqual([]);
  });
});
