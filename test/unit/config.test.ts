import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { routerJsonSchema } from "../../src/config/json-schema.js";
import { ConfigError, interpolateEnv, loadConfigFile, parseConfigText } from "../../src/config/load.js";

const minimal = `
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

describe("config loading", () => {
  it("applies defaults and derives model targets", () => {
    const cfg = parseConfigText(`${minimal}\n  n: { endpoints: [{ name: a, upstream_model: x, weight: 3 }], upstream_model: y }`, "t", {});
    expect(cfg.server.port).toBe(8080);
    expect(cfg.endpoints[0]!.timeouts).toEqual({ connect: 5000, first_byte: 300000, idle: 120000 });
    expect(cfg.targets.get("m")).toEqual([{ endpoint: "a", upstreamModel: "m", weight: 1 }]);
    expect(cfg.targets.get("n")).toEqual([{ endpoint: "a", upstreamModel: "x", weight: 3 }]);
    expect(cfg.storage.redis_url).toBe("");
  });

  it("interpolates ${VAR} and ${VAR:-default} in values only, and reports unset variables by path", () => {
    expect(interpolateEnv({ a: "${X}", b: ["${Y:-dflt}"], "${X}": 1 }, { X: "x" })).toEqual({ a: "x", b: ["dflt"], "${X}": 1 });
    const cfg = parseConfigText(minimal.replace("chat }", 'chat, api_key: "${KEY}" }'), "t", { KEY: "s3cr:et #x" });
    expect(cfg.endpoints[0]!.api_key).toBe("s3cr:et #x");
    expect(issuesOf(minimal.replace("chat }", 'chat, api_key: "${MISSING_KEY}" }'))).toEqual([
      "endpoints.0.api_key: environment variable MISSING_KEY is not set (write ${MISSING_KEY:-default} for a default)",
    ]);
  });

  it("reports every problem with its path at once", () => {
    const issues = issuesOf(`
server: { port: "x" }
endpoints:
  - { name: a, url: "ftp://x", kind: foo, extra: 1 }
models:
  m: { endpoints: [b] }
storage: { ttl: "3 weeks" }
`);
    expect(issues).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^server\.port: /),
        expect.stringMatching(/^endpoints\.0\.url: /),
        expect.stringMatching(/^endpoints\.0\.kind: /),
        expect.stringMatching(/^endpoints\.0: .*extra/),
        expect.stringMatching(/^storage\.ttl: invalid duration/),
        'models.m.endpoints.0: unknown endpoint "b"',
      ]),
    );
  });

  it("rejects duplicate endpoint names and YAML syntax errors", () => {
    expect(issuesOf(`${minimal}\n  - x`).length).toBeGreaterThan(0);
    expect(issuesOf(minimal.replace("models:", '  - { name: a, url: "http://127.0.0.1:8/v1", kind: chat }\nmodels:'))).toEqual(['endpoints.1.name: duplicate endpoint name "a"']);
    expect(issuesOf("endpoints: [")[0]).toMatch(/YAML syntax/);
  });

  it("ships a JSON Schema that matches the zod schema", () => {
    const committed = JSON.parse(readFileSync(new URL("../../config/router.schema.json", import.meta.url), "utf8"));
    expect(committed).toEqual(routerJsonSchema());
  });

  it("validates router.example.yaml", () => {
    expect(() => loadConfigFile("router.example.yaml", {})).not.toThrow();
  });
});

describe("CLI check", () => {
  const dir = mkdtempSync(join(tmpdir(), "rr-cli-"));
  const run = (...args: string[]) => spawnSync(process.execPath, ["--import", "tsx", "src/main.ts", ...args], { encoding: "utf8", timeout: 30_000 });

  it("exits 0 on a valid file", () => {
    const file = join(dir, "ok.yaml");
    writeFileSync(file, minimal);
    const r = run("check", "--config", file);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain("OK");
  });

  it("prints every problem with its path and exits 1", () => {
    const file = join(dir, "bad.yaml");
    writeFileSync(file, "endpoints: [{ name: a, url: nope, kind: chat }]\nmodels: { m: { endpoints: [zz] } }\n");
    const r = run("check", "--config", file);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("endpoints.0.url");
    expect(r.stderr).toContain('models.m.endpoints.0: unknown endpoint "zz"');
  });

  it("checks the team-gateway keys: key policies and model fallbacks", () => {
    const file = join(dir, "keys.yaml");
    writeFileSync(
      file,
      `${minimal}  n: { endpoints: [a], fallbacks: [m, ghost] }\n  m2: { endpoints: [a], fallbacks: [m2] }\n` +
        "server:\n  api_keys:\n    - { name: k, key: s3cret, models: [nope], limits: { requests_per_minute: 0, burst: 3 }, budget: { tokens_per_day: -1 }, role: root }\n",
    );
    const r = run("check", "--config", file);
    expect(r.status).toBe(1);
    for (const problem of [
      "server.api_keys.0.limits.requests_per_minute",
      "server.api_keys.0.limits",
      "server.api_keys.0.budget.tokens_per_day",
      "server.api_keys.0.role",
    ]) {
      expect(r.stderr).toContain(problem);
    }
    expect(r.stderr).not.toContain("s3cret");
    // A well-formed file: the cross-references.
    writeFileSync(file, `${minimal}  n: { endpoints: [a], fallbacks: [m, ghost] }\n  m2: { endpoints: [a], fallbacks: [m2] }\nserver:\n  api_keys: [{ name: k, key: s3cret, models: [nope] }]\n`);
    const again = run("check", "--config", file);
    expect(again.status).toBe(1);
    expect(again.stderr).toContain('models.n.fallbacks.1: unknown model "ghost"');
    expect(again.stderr).toContain('models.m2.fallbacks.0: model "m2" cannot fall back to itself');
    expect(again.stderr).toContain('server.api_keys.0.models.0: unknown model "nope"');
  });
});

describe("config: api key policy", () => {
  const keyed = (key: string) => `${minimal}\nserver:\n  api_keys:\n    - ${key}\n`;

  it("accepts model lists of names and globs", () => {
    const cfg = parseConfigText(keyed('{ name: a, key: k1, models: [m, "gpt-*"] }'), "t", {});
    expect(cfg.server.api_keys[0]!.models).toEqual(["m", "gpt-*"]);
  });

  it("reports an unknown model name in a key's list (globs may match nothing) and duplicate key names", () => {
    expect(issuesOf(keyed("{ name: a, key: k1, models: [m, typo, \"x-*\"] }"))).toEqual(['server.api_keys.0.models.1: unknown model "typo"']);
    expect(issuesOf(`${minimal}\nserver:\n  api_keys: [{ name: a, key: k1 }, { name: a, key: k2 }]\n`)).toEqual(['server.api_keys.1.name: duplicate api key name "a"']);
  });
});

describe("config: model fallbacks", () => {
  const models = (m: string) => `
endpoints:
  - { name: a, url: "http://127.0.0.1:9/v1", kind: chat }
models:
${m}`;

  it("accepts a chain of configured models", () => {
    const cfg = parseConfigText(models("  m: { endpoints: [a], fallbacks: [n] }\n  n: { endpoints: [a], fallbacks: [o] }\n  o: { endpoints: [a] }\n"), "t", {});
    expect(cfg.models.m!.fallbacks).toEqual(["n"]);
    expect(cfg.models.o!.fallbacks).toEqual([]);
  });

  it("reports unknown models, a model falling back to itself, and cycles", () => {
    expect(issuesOf(models("  m: { endpoints: [a], fallbacks: [nope] }\n"))).toEqual(['models.m.fallbacks.0: unknown model "nope"']);
    expect(issuesOf(models("  m: { endpoints: [a], fallbacks: [m] }\n"))).toEqual(['models.m.fallbacks.0: model "m" cannot fall back to itself']);
    expect(issuesOf(models("  m: { endpoints: [a], fallbacks: [n] }\n  n: { endpoints: [a], fallbacks: [o] }\n  o: { endpoints: [a], fallbacks: [m] }\n"))).toEqual([
      "models.m.fallbacks: fallback cycle: m -> n -> o -> m",
    ]);
  });
});
