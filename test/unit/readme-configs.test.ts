import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseConfigText } from "../../src/config/load.js";

/** The README's router.yaml examples are what a newcomer copies first: each must be a valid config. */
describe("the README's router.yaml examples", () => {
  const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
  const examples = [...readme.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]!);
  const env = { OPENAI_API_KEY: "sk-test", ANTHROPIC_API_KEY: "sk-ant-test", TEAM_A_KEY: "team-a-secret" };

  it("there are the four of them: Ollama, OpenAI, Anthropic, and both behind one model", () => {
    expect(examples.map((e) => [...e.matchAll(/kind: (\w+)/g)].map((m) => m[1]))).toEqual([["chat"], ["openai"], ["anthropic"], ["chat", "openai"]]);
  });

  it.each(examples.map((e, i) => [i, e] as const))("example %i parses", (_i, example) => {
    expect(() => parseConfigText(example, "README.md", env)).not.toThrow();
  });

  it("the last one puts both endpoints behind one model, with a key", () => {
    const cfg = parseConfigText(examples[3]!, "README.md", env);
    expect(cfg.models.assistant!.endpoints.map((e) => (typeof e === "string" ? e : e.name))).toEqual(["ollama", "openai"]);
    expect(cfg.server.api_keys[0]).toMatchObject({ name: "team-a", key: "team-a-secret" });
  });
});
