import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { waitUntil } from "../helpers/wait.js";

/** The CLI as an operator meets it: mistakes get the usage, logs suit who reads them. */
const cli = (...args: string[]) => spawnSync(process.execPath, ["--import", "tsx", "src/main.ts", ...args], { encoding: "utf8", timeout: 30_000 });

const dir = mkdtempSync(join(tmpdir(), "rr-cli-"));
const config = join(dir, "router.yaml");
writeFileSync(config, "endpoints: [{ name: a, url: http://127.0.0.1:9/v1, kind: chat }]\nmodels: { m: { endpoints: [a] } }\n");

describe("CLI usage errors", () => {
  it.each([
    [["--bogus"], /Unknown option '--bogus'/],
    [["--config"], /--config/],
    [["--log-format", "xml"], /invalid --log-format xml/],
    [["--config", config, "--port", "99999"], /invalid --port 99999/],
    [["serve"], /unknown command: serve/],
  ])("%j prints what is wrong and the usage, exit 2, no stack trace", (args, message) => {
    const r = cli(...args);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).toContain("responses-router [check [--probe]] [--config FILE]");
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(r.stdout).toBe("");
  });

  it("--help prints the usage on stdout, exit 0", () => {
    const r = cli("--help");
    expect(r.status).toBe(0);
    expect(r.stdout).toContain("--log-format F");
  });
});

/** The first lines the router logs when started with `format` (under `prefix`, a command that wraps node). */
async function firstLines(format: string[], prefix: string[] = []): Promise<string[]> {
  // Port 0: the router binds a free port itself (one picked here could be taken before the child binds it).
  const argv = [...prefix, process.execPath, "--import", "tsx", "src/main.ts", "--config", config, "--port", "0", ...format];
  const proc = spawn(argv[0]!, argv.slice(1), { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  proc.stdout.on("data", (d) => (out += d));
  const exited = new Promise((resolve) => proc.once("exit", resolve));
  try {
    await waitUntil("the listening line", () => out.includes("listening on"), 30_000, 50);
  } finally {
    proc.kill("SIGTERM");
    await exited;
  }
  return out.trim().split("\n");
}

describe("--log-format", () => {
  it("pretty: one readable line per event", async () => {
    const [line] = await firstLines(["--log-format", "pretty"]);
    expect(line).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}responses-router listening on http:\/\/127\.0\.0\.1:\d+ {2}url=/);
  });

  it("JSON lines when stdout is not a terminal and no format is given", async () => {
    const [line] = await firstLines([]);
    expect(JSON.parse(line!)).toMatchObject({ level: "info", msg: expect.stringContaining("listening on") });
  });
});

// The young-generation GC suits the cores the process may run on (runtime/gc.ts), and the start line says which.
describe("the cores the router has", () => {
  const taskset = spawnSync("taskset", ["-c", "0", "true"]).status === 0;
  it.skipIf(!taskset)("on one CPU the start line says so and the scavenge runs on the main thread", async () => {
    const [line] = await firstLines(["--log-format", "json"], ["taskset", "-c", "0"]);
    expect(JSON.parse(line!)).toMatchObject({ cores: 1, parallelScavenge: false });
  });

  it("on the machine's own cores the start line reports them", async () => {
    const [line] = await firstLines(["--log-format", "json"]);
    const start = JSON.parse(line!) as { cores: number; parallelScavenge: boolean; pretenuring: boolean };
    expect(start.cores).toBeGreaterThanOrEqual(1);
    expect(start.parallelScavenge).toBe(start.cores > 1);
    expect(start.pretenuring).toBe(false);
  });
});

describe("tracing settings on reload", () => {
  it("a change to tracing: is reported as taking effect on restart; the rest of the file reloads", async () => {
    const file = join(dir, "router-tracing.yaml");
    const base = "endpoints: [{ name: a, url: http://127.0.0.1:9/v1, kind: chat }]\nmodels: { m: { endpoints: [a] } }\n";
    writeFileSync(file, base);
    const env = { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: "", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "" };
    const proc = spawn(process.execPath, ["--import", "tsx", "src/main.ts", "--config", file, "--port", "0"], { stdio: ["ignore", "pipe", "pipe"], env });
    let out = "";
    proc.stdout.on("data", (d) => (out += d));
    const exited = new Promise((resolve) => proc.once("exit", resolve));
    try {
      await waitUntil("the listening line", () => out.includes("listening on"), 30_000, 50);
      expect(out).not.toContain("tracing on");
      writeFileSync(file, `${base}tracing: { endpoint: "http://127.0.0.1:9/v1/traces" }\n`);
      await waitUntil("the reload", () => out.includes("config reloaded"), 30_000, 50);
      await waitUntil("the restart warning", () => out.includes("tracing settings changed: they take effect on restart"), 5_000, 50);
    } finally {
      proc.kill("SIGTERM");
      await exited;
    }
  });
});
