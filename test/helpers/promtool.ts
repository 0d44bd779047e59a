import { spawnSync } from "node:child_process";

/**
 * promtool (Debian package "prometheus"). Optional on a developer machine; in CI (`CI` set,
 * as .ci/run does) the promtool tests run and fail when it is missing instead of skipping.
 */
export const skipPromtool = spawnSync("promtool", ["--version"], { stdio: "ignore" }).status !== 0 && !process.env.CI;

/** Runs promtool; throws with its output when it exits non-zero (lint findings included). */
export function promtool(args: string[], input?: string): string {
  const r = spawnSync("promtool", args, { input, encoding: "utf8" });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`promtool ${args.join(" ")} exited ${r.status}:\n${r.stdout}${r.stderr}`);
  return r.stdout + r.stderr;
}
