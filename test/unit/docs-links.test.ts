import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * Every relative link and #anchor in the manual resolves: README.md, BENCHMARKS.md and docs/*.md.
 * Anchors follow GitHub's heading ids: the heading's text (inline code and link text kept,
 * markup dropped), lower-cased, every character that is not a letter, digit, space, `-` or `_`
 * removed, spaces turned into `-`; a repeated id gets `-1`, `-2`, ...
 */
const root = resolve(import.meta.dirname, "../..");
const pages = ["README.md", "BENCHMARKS.md", ...readdirSync(join(root, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)];

/** The text outside fenced code blocks and inline code, where links are links. */
function prose(md: string): string[] {
  let fenced = false;
  return md.split("\n").map((line) => {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      return "";
    }
    return fenced ? "" : line.replace(/`[^`]*`/g, "``");
  });
}

export function githubSlug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/[`*]/g, "")
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

function anchorsOf(file: string): Set<string> {
  const ids = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const m = fenced ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = githubSlug(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    ids.add(n === 0 ? base : `${base}-${n}`);
  }
  for (const m of readFileSync(file, "utf8").matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) ids.add(m[1]!);
  return ids;
}

function brokenLinks(page: string, file = join(root, page)): string[] {
  const bad: string[] = [];
  for (const line of prose(readFileSync(file, "utf8"))) {
    for (const m of line.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      const target = m[1]!;
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:
      const [path, anchor] = target.split("#", 2) as [string, string | undefined];
      const dest = path ? resolve(dirname(file), decodeURIComponent(path)) : file;
      if (!existsSync(dest)) {
        bad.push(`${page}: ${target} (no such file)`);
        continue;
      }
      if (anchor === undefined) continue;
      if (statSync(dest).isDirectory() || !dest.endsWith(".md")) bad.push(`${page}: ${target} (an anchor into a file that is not markdown)`);
      else if (!anchorsOf(dest).has(anchor)) bad.push(`${page}: ${target} (no heading #${anchor} in ${relative(root, dest)})`);
    }
  }
  return bad;
}

describe("links in the manual", () => {
  it("slugs headings as GitHub does", () => {
    expect(githubSlug("Chat endpoints: the mapping (`kind: chat`, `src/translate/chat/`)")).toBe("chat-endpoints-the-mapping-kind-chat-srctranslatechat");
    expect(githubSlug("storage.durability")).toBe("storagedurability");
    expect(githubSlug("Keys, limits and usage")).toBe("keys-limits-and-usage");
    expect(githubSlug("What is left -- and why")).toBe("what-is-left----and-why");
  });

  it("finds a broken link and a broken anchor, and passes over code and absolute URLs", () => {
    const file = join(root, "docs", `.links-probe-${process.pid}.md`);
    writeFileSync(
      file,
      "# Probe\n\n## A b\n\n## A b\n\n[ok](#a-b-1) [ok](api.md#routes) [gone](nowhere.md) [bad](api.md#no-such-heading) [bad](#a-c)\n" +
        "[web](https://example.com/x#y) `[code](nowhere.md)`\n\n```md\n[fenced](nowhere.md)\n```\n",
    );
    try {
      expect(brokenLinks("docs/probe.md", file)).toEqual([
        "docs/probe.md: nowhere.md (no such file)",
        "docs/probe.md: api.md#no-such-heading (no heading #no-such-heading in docs/api.md)",
        `docs/probe.md: #a-c (no heading #a-c in docs/.links-probe-${process.pid}.md)`,
      ]);
    } finally {
      rmSync(file);
    }
  });

  it.each(pages)("every code fence in %s is closed (an open one swallows the rest of the page)", (page) => {
    const fences = readFileSync(join(root, page), "utf8").split("\n").filter((line) => /^\s*(```|~~~)/.test(line));
    expect(fences.length % 2).toBe(0);
  });

  it.each(pages)("every relative link and #anchor in %s resolves", (page) => {
    expect(brokenLinks(page)).toEqual([]);
  });
});
