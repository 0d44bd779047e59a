import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * The openai package types what the router emits (compile time) and is the tests' client;
 * the running router never loads it: a production install (`npm ci --omit=dev`) has no openai.
 */
const root = join(import.meta.dirname, "../..");
function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : path.endsWith(".ts") ? [path] : [];
  });
}

describe("openai is a build-time dependency only", () => {
  it("src/ imports only types from openai", () => {
    const offenders: string[] = [];
    for (const file of files(join(root, "src"))) {
      const text = readFileSync(file, "utf8");
      for (const m of text.matchAll(/^\s*(import|export)\s+([^;]*?)\s+from\s+["'](openai(?:\/[^"']*)?)["']/gm)) {
        if (!/^(import|export)\s+type\s/.test(m[0].trim())) offenders.push(`${file.slice(root.length + 1)}: ${m[0].trim()}`);
      }
      if (/\b(require|import)\(\s*["']openai/.test(text)) offenders.push(`${file.slice(root.length + 1)}: dynamic import of openai`);
    }
    expect(offenders).toEqual([]);
  });

  it("package.json lists openai under devDependencies only", () => {
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { dependencies?: Record<string, string>; devDependencies?: Record<string, string> };
    expect(pkg.dependencies ?? {}).not.toHaveProperty("openai");
    expect(pkg.devDependencies).toHaveProperty("openai");
  });
});
