import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ConfigError, parseConfigText } from "../../src/config/load.js";

const base = `
endpoints:
  - { name: a, url: "http://127.0.0.1:9/v1", kind: chat }
models:
  m: { endpoints: [a] }
`;

function issuesOf(text: string, env: NodeJS.ProcessEnv = {}): string[] {
  try {
    parseConfigText(text, "t.yaml", env);
  } catch (err) {
    if (err instanceof ConfigError) return err.issues.map((i) => `${i.path}: ${i.message}`);
    throw err;
  }
  return [];
}

describe("tools.web_search config", () => {
  it("is optional", () => {
    expect(parseConfigText(base, "t", {}).tools.web_search).toBeUndefined();
  });

  it("parses a searxng provider with the default 15s timeout", () => {
    const cfg = parseConfigText(`${base}tools:\n  web_search:\n    provider: searxng\n    url: http://127.0.0.1:8888\n`, "t", {});
    expect(cfg.tools?.web_search).toEqual({ provider: "searxng", url: "http://127.0.0.1:8888", timeout: 15_000 });
  });

  it("takes the key from the environment and a duration timeout", () => {
    const cfg = parseConfigText(`${base}tools:\n  web_search: { provider: brave, api_key: "\${SEARCH_KEY}", timeout: 2.5s }\n`, "t", { SEARCH_KEY: "bsk-1" });
    expect(cfg.tools?.web_search).toEqual({ provider: "brave", api_key: "bsk-1", timeout: 2_500 });
  });

  it("needs a url for searxng and a key for brave and tavily", () => {
    expect(issuesOf(`${base}tools:\n  web_search: { provider: searxng }\n`)).toEqual(["tools.web_search.url: provider searxng needs the url of a SearXNG instance"]);
    expect(issuesOf(`${base}tools:\n  web_search: { provider: brave }\n`)).toEqual(["tools.web_search.api_key: provider brave needs an api_key"]);
    expect(issuesOf(`${base}tools:\n  web_search: { provider: tavily, url: "http://127.0.0.1:1" }\n`)).toEqual(["tools.web_search.api_key: provider tavily needs an api_key"]);
  });

  it("refuses an unknown provider, a url that is not http(s), an unknown field and a bad timeout", () => {
    expect(issuesOf(`${base}tools:\n  web_search: { provider: bing, api_key: k }\n`)).toHaveLength(1);
    expect(issuesOf(`${base}tools:\n  web_search: { provider: searxng, url: "ftp://x" }\n`)[0]).toMatch(/^tools\.web_search\.url: /);
    expect(issuesOf(`${base}tools:\n  web_search: { provider: searxng, url: "http://x", key: k }\n`)[0]).toMatch(/^tools\.web_search: .*key/);
    expect(issuesOf(`${base}tools:\n  web_search: { provider: searxng, url: "http://x", timeout: soon }\n`)[0]).toMatch(/^tools\.web_search\.timeout: invalid duration/);
    expect(issuesOf(`${base}tools:\n  search: {}\n`)[0]).toMatch(/^tools: .*search/);
  });

  it("docs/tools.md's Web search example is a valid config", () => {
    const readme = readFileSync(new URL("../../docs/tools.md", import.meta.url), "utf8");
    const example = /## Web search\n[\s\S]*?```yaml\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(example).toContain("web_search:");
    const cfg = parseConfigText(base + example, "docs/tools.md", { SEARCH_KEY: "k" });
    expect(cfg.tools?.web_search).toEqual({ provider: "searxng", url: "http://127.0.0.1:8888", api_key: "k", timeout: 15_000 });
  });
});
