import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The Codex CLI that `npm run test:codex` installs into test/e2e/codex (kept out of the root install: ~400 MB). */
export const CODEX_BIN = join(dirname(fileURLToPath(import.meta.url)), "codex", "node_modules", "@openai", "codex", "bin", "codex.js");

export function assertCodexInstalled(): void {
  if (!existsSync(CODEX_BIN)) throw new Error(`The Codex CLI is not installed at ${CODEX_BIN}: run \`npm run test:codex\`, which installs it first.`);
}

/**
 * The config.toml a team uses to point Codex at the router: a model provider that
 * speaks the Responses API on the router's URL, the key from an env variable.
 * Everything that would reach out to the internet (plugins, apps, update checks,
 * analytics) is off, so a run talks to the router on loopback and nothing else.
 */
export function codexConfig(routerUrl: string, model: string, opts: CodexOptions = {}): string {
  return `${opts.extra ?? ""}model = "${model}"
model_provider = "router"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false

[analytics]
enabled = false

[features]
plugins = false
remote_plugin = false
apps = false
in_app_updates = false
browser_use = false
computer_use = false
${Object.entries(opts.features ?? {}).map(([k, v]) => `${k} = ${v}\n`).join("")}
[model_providers.router]
name = "${opts.providerName ?? "responses-router"}"
base_url = "${routerUrl}/v1"
wire_api = "responses"
env_key = "ROUTER_API_KEY"
request_max_retries = 0
stream_max_retries = 0
${opts.websockets ? "supports_websockets = true\n" : ""}`;
}

export interface CodexOptions {
  /** The provider speaks Responses over a WebSocket (`supports_websockets = true`): Codex opens wss://…/v1/responses. */
  websockets?: boolean;
  /** TOML put before the rest (top-level keys such as a small context window). */
  extra?: string;
  /** The provider's display name: Codex compacts remotely only for a provider named "OpenAI". */
  providerName?: string;
  /** More `[features]` switches (e.g. `apply_patch_freeform`). */
  features?: Record<string, boolean>;
  /** Files of the work dir to read back after the run (relative paths). */
  readFiles?: string[];
}

/** One JSONL event of `codex exec --json`. */
export interface CodexEvent {
  type: string;
  item?: { id: string; type: string; text?: string; command?: string; aggregated_output?: string; exit_code?: number | null; status?: string; message?: string };
  usage?: Record<string, number>;
  error?: { message: string };
}

export interface CodexRun {
  code: number | null;
  events: CodexEvent[];
  stderr: string;
  /** The work dir's files named in `opts.readFiles`, as they were when Codex exited (null: missing). */
  files: Record<string, string | null>;
}

/** Runs `codex exec --json PROMPT` non-interactively in a fresh CODEX_HOME and work dir, then removes both. */
export async function codexExec(routerUrl: string, model: string, prompt: string, apiKey = "test-key", opts: CodexOptions = {}): Promise<CodexRun> {
  const home = mkdtempSync(join(tmpdir(), "rr-codex-home-"));
  const work = mkdtempSync(join(tmpdir(), "rr-codex-work-"));
  writeFileSync(join(home, "config.toml"), codexConfig(routerUrl, model, opts));
  try {
    const child = spawn(process.execPath, [CODEX_BIN, "exec", "--json", "--skip-git-repo-check", "-C", work, prompt], {
      // A bare environment: no OPENAI_* variable of the machine can redirect Codex.
      env: { PATH: process.env.PATH, HOME: home, CODEX_HOME: home, ROUTER_API_KEY: apiKey, RUST_LOG: process.env.CODEX_RUST_LOG ?? "error", NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once("error", reject);
      child.once("close", resolve);
    });
    const events = stdout
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as CodexEvent);
    const files: Record<string, string | null> = {};
    for (const f of opts.readFiles ?? []) files[f] = existsSync(join(work, f)) ? readFileSync(join(work, f), "utf8") : null;
    return { code, events, stderr, files };
  } finally {
    rmSync(home, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  }
}
