import { spawn, type ChildProcess } from "node:child_process";
import { onFreePort, PortTaken } from "./redis-server.js";

export interface ChildRouter {
  url: string;
  port: number;
  proc: ChildProcess;
  /** Everything the process printed so far (JSON log lines). */
  output(): string;
  /** Resolves with the exit code (or signal name). */
  exited: Promise<number | string>;
  kill(signal?: NodeJS.Signals): void;
}

/**
 * Runs the real CLI (`src/main.ts`) as a child process on a free loopback port,
 * the way an operator starts it, and waits until /healthz answers. The port is
 * picked here and bound by the child a moment later: a child that exits with
 * EADDRINUSE is started again on another port (onFreePort).
 */
export function startChildRouter(configPath: string, env: NodeJS.ProcessEnv = {}, timeoutMs = 20_000): Promise<ChildRouter> {
  return onFreePort((port) => startOn(port, configPath, env, timeoutMs));
}

async function startOn(port: number, configPath: string, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<ChildRouter> {
  const proc = spawn(process.execPath, ["--import", "tsx", "src/main.ts", "--config", configPath, "--port", String(port)], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  proc.stdout!.on("data", (d) => (out += d));
  proc.stderr!.on("data", (d) => (out += d));
  const exited = new Promise<number | string>((resolve) => proc.once("exit", (code, signal) => resolve(code ?? signal ?? -1)));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (proc.exitCode !== null) {
      const message = `router exited early (${proc.exitCode}):\n${out}`;
      throw out.includes("EADDRINUSE") ? new PortTaken(message) : new Error(message);
    }
    try {
      // Bounded: whoever else holds the port may accept the connection and never answer.
      if ((await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1000) })).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      proc.kill("SIGKILL");
      throw new Error(`router did not start in ${timeoutMs} ms:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { url, port, proc, output: () => out, exited, kill: (s = "SIGTERM") => proc.kill(s) };
}
