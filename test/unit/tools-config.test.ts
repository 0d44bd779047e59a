import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ConfigError, parseConfigText } from "../../src/config/load.js";
import { mayUseTool } from "../../src/keys/policy.js";

const base = `
endpoints: [{ name: box, url: "http://127.0.0.1:11434/v1", kind: chat }]
models: { m: { endpoints: [box] } }
`;

const issuesOf = (text: string): string[] => {
  try {
    parseConfigText(text, "t", {});
    return [];
  } catch (err) {
    return (err as ConfigError).issues.map((i) => `${i.path}: ${i.message}`);
  }
};

describe("tools config", () => {
  it("defaults: 10 rounds, no allowed URLs, 60s calls, 1 MB results, no servers", () => {
    const cfg = parseConfigText(base, "t", {});
    expect(cfg.tools.max_rounds).toBe(10);
    expect(cfg.tools.mcp).toEqual({ allowed_urls: [], call_timeout: 60_000, max_result_bytes: 1_000_000, servers: [] });
    expect(cfg.models.m!.hosted_tools).toBeUndefined();
  });

  it("docs/tools.md's MCP example is a valid config, ${ENV} expanded in the headers", () => {
    const readme = readFileSync(new URL("../../docs/tools.md", import.meta.url), "utf8");
    const example = /## MCP\n[\s\S]*?```yaml\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(example).toContain("mcp:");
    const cfg = parseConfigText(base + example, "docs/tools.md", { WIKI_TOKEN: "t0k" });
    expect(cfg.tools.mcp.servers[0]).toMatchObject({ label: "wiki", url: "http://10.0.0.5:9000/mcp", headers: { Authorization: "Bearer t0k" }, allowed_tools: ["search", "read_page"], require_approval: "never" });
    expect(cfg.tools.mcp.allowed_urls).toEqual(["https://mcp.example.com/*"]);
  });

  it("refuses duplicate server labels, bad URLs and unknown keys", () => {
    const servers = (list: string) => `${base}tools:\n  mcp:\n    servers: ${list}\n`;
    expect(issuesOf(servers(`[{ label: a, url: "http://x/mcp" }, { label: a, url: "http://y/mcp" }]`))[0]).toMatch(/duplicate MCP server label "a"/);
    expect(issuesOf(servers(`[{ label: a, url: "ftp://x" }]`))[0]).toMatch(/^tools\.mcp\.servers\.0\.url/);
    expect(issuesOf(servers(`[{ label: "a b", url: "http://x" }]`))[0]).toMatch(/label/);
    expect(issuesOf(`${base}tools:\n  mcp: { allow: [] }\n`)[0]).toMatch(/^tools\.mcp/);
  });

  it("a key's tools list: types (dated variants match their base), server labels; unset all, [] none", () => {
    const key = (tools?: string[]) => ({ name: "k", key: "k", role: "user" as const, tools });
    expect(mayUseTool(key(), "mcp", "x")).toBe(true);
    expect(mayUseTool(key([]), "mcp", "x")).toBe(false);
    expect(mayUseTool(key([]), "function")).toBe(true);
    expect(mayUseTool(key(["wiki"]), "mcp", "wiki")).toBe(true);
    expect(mayUseTool(key(["wiki"]), "mcp", "other")).toBe(false);
    expect(mayUseTool(key(["mcp"]), "mcp", "other")).toBe(true);
    expect(mayUseTool(key(["web_search"]), "web_search_preview_2025_03_11")).toBe(true);
    expect(mayUseTool(key(["web_search"]), "file_search")).toBe(false);
  });
});
