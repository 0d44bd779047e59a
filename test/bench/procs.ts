/**
 * Child processes of a bench run: spawned (optionally pinned to a CPU with taskset),
 * waited for, measured through /proc (CPU time and RSS, for our children and for
 * third-party servers alike), and stopped by pid.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";

export interface Child {
  name: string;
  pid: number;
  port: number;
  proc: ChildProcess;
  /** user+system CPU seconds so far, from /proc/PID/stat. */
  cpuSeconds(): number;
  /** Resident set size in bytes, from /proc/PID/status. */
  rssBytes(): number;
  stop(): Promise<void>;
}

const TICKS = Number(spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout.trim()) || 100;
const HAS_TASKSET = spawnSync("taskset", ["-c", "0", "true"]).status === 0;

export function cpuCount(): number {
  return Number(spawnSync("nproc", { encoding: "utf8" }).stdout.trim()) || 1;
}

export function procCpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / TICKS; // utime, stime
  } catch {
    return Number.NaN;
  }
}

export function procRssBytes(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) * 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

export interface SpawnOptions {
  name: string;
  /** The node arguments (script and its args). */
  args: string[];
  env?: Record<string, string>;
  /** CPU list for taskset ("1", "0", "0,1"); ignored where taskset is missing. */
  cpus?: string;
  /** How the child says it is ready: an IPC { ready, port } message (ours), or a port to poll (third-party). */
  ready: { ipc: true } | { pollPort: number; path: string };
  /** Keep stdout/stderr (else /dev/null, as a server logging to a collector would). */
  verbose?: boolean;
  timeoutMs?: number;
}

export async function spawnNode(opts: SpawnOptions): Promise<Child> {
  const nodeArgs = [process.execPath, ...opts.args];
  const [cmd, ...args] = opts.cpus && HAS_TASKSET ? ["taskset", "-c", opts.cpus, ...nodeArgs] : nodeArgs;
  const proc = spawn(cmd!, args, {
    env: { ...process.env, ...opts.env },
    stdio: ["ignore", opts.verbose ? "inherit" : "ignore", opts.verbose ? "inherit" : "pipe", "ipc"],
  });
  let stderr = "";
  proc.stderr?.on("data", (d: Buffer) => {
    if (stderr.length < 8_000) stderr += d.toString();
  });
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill("SIGKILL");
      reject(new Error(`${opts.name} did not start within ${timeoutMs} ms: ${stderr}`));
    }, timeoutMs);
    proc.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${opts.name} exited (${code ?? signal}) before it was ready: ${stderr}`));
    });
    if ("ipc" in opts.ready) {
      proc.on("message", (m: { ready?: boolean; port?: number }) => {
        if (m?.ready && typeof m.port === "number") {
          clearTimeout(timer);
          resolve(m.port);
        }
      });
    } else {
      const { pollPort, path } = opts.ready;
      const deadline = Date.now() + timeoutMs;
      const poll = async () => {
        while (Date.now() < deadline && proc.exitCode === null) {
          try {
            const r = await fetch(`http://127.0.0.1:${pollPort}${path}`);
            await r.arrayBuffer();
            clearTimeout(timer);
            resolve(pollPort);
            return;
          } catch {
            await new Promise((r) => setTimeout(r, 100));
          }
        }
      };
      void poll();
    }
  });
  proc.removeAllListeners("exit");
  const pid = proc.pid!;
  return {
    name: opts.name,
    pid,
    port,
    proc,
    cpuSeconds: () => procCpuSeconds(pid),
    rssBytes: () => procRssBytes(pid),
    stop: () =>
      new Promise<void>((resolve) => {
        if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
        const timer = setTimeout(() => proc.kill("SIGKILL"), 5_000);
        proc.once("exit", () => {
          clearTimeout(timer);
          resolve();
        });
        proc.kill("SIGTERM");
      }),
  };
}

export function hasTaskset(): boolean {
  return HAS_TASKSET;
}
