import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { zodTextFormat } from "openai/helpers/zod";
import { z } from "zod";
import { afterEach, describe, expect, it } from "vitest";
import { waitUntil } from "../helpers/wait.js";

/**
 * The npm scripts a newcomer and an operator type, run as they run them: `npm run demo`
 * answers the openai SDK with no LLM installed, and SIGTERM to `npm start` stops the
 * router (npm signals its child; a shell in between would keep the port).
 */
const procs: ChildProcess[] = [];
afterEach(() => {
  // A test that failed half-way: end npm and the node it runs (its own process group), so no
  // router is left holding a port. SIGKILL to npm alone would orphan node.
  for (const p of procs.splice(0)) {
    try {
      process.kill(-p.pid!, "SIGKILL");
    } catch {
      // already gone
    }
  }
});

function npm(args: string[]): { proc: ChildProcess; output(): string; exited: Promise<number | string> } {
  // No TTY here: the router logs JSON lines, as under a process manager.
  const proc = spawn("npm", args, { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, npm_config_loglevel: "warn" }, detached: true });
  procs.push(proc);
  let out = "";
  proc.stdout!.on("data", (d) => (out += d));
  proc.stderr!.on("data", (d) => (out += d));
  const exited = new Promise<number | string>((resolve) => proc.once("exit", (code, signal) => resolve(code ?? signal ?? -1)));
  return { proc, output: () => out, exited };
}

const listening = async (url: string) => {
  try {
    return (await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1000) })).ok;
  } catch {
    return false;
  }
};

/**
 * The address a router started on port 0 names in its start line, once it answers there. Port 0:
 * the router binds a free port itself (one picked here could be taken before the child binds it).
 */
async function startedAt(output: () => string): Promise<string> {
  let url: string | undefined;
  await waitUntil("the router to listen", async () => (url ??= /responses-router listening on (http:\/\/[\w.:[\]]+)/.exec(output())?.[1]) !== undefined && (await listening(url)), 90_000, 200);
  return url!;
}

describe("npm run demo", () => {
  it("answers create, stream, chaining, tool calls, structured output and background jobs through the openai SDK, labelled as a demo", async () => {
    const demo = npm(["run", "demo", "--", "--port", "0"]);
    const url = await startedAt(demo.output);
    const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: "unused", maxRetries: 0 });

    const first = await client.responses.create({ model: "demo", input: "Say hi" });
    expect(first.status).toBe("completed");
    expect(first.output_text).toContain("[demo backend");
    expect(first.output_text).toContain("Say hi");

    const stream = client.responses.stream({ model: "demo", input: "Stream please", previous_response_id: first.id });
    const deltas: string[] = [];
    stream.on("response.output_text.delta", (e) => deltas.push(e.delta));
    const chained = await stream.finalResponse();
    expect(deltas.length).toBeGreaterThan(3);
    expect(deltas.join("")).toBe(chained.output_text);
    expect(chained.output_text).toContain("I can see 2 earlier messages in this conversation");

    const tools = [{ type: "function" as const, name: "get_weather", strict: false, parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } }];
    const call = await client.responses.create({ model: "demo", input: "Weather in Paris?", tools });
    const fc = call.output.find((o) => o.type === "function_call");
    expect(fc).toMatchObject({ type: "function_call", name: "get_weather", arguments: '{"city":"demo"}' });
    const after = await client.responses.create({
      model: "demo",
      previous_response_id: call.id,
      tools,
      input: [{ type: "function_call_output", call_id: (fc as { call_id: string }).call_id, output: "sunny, 21 C" }],
    });
    expect(after.output_text).toContain("sunny, 21 C");

    // Structured output: the SDK's parse helper gets JSON its own schema accepts, streamed too.
    const Trip = z.object({ city: z.string(), days: z.number().int().min(1), stops: z.array(z.object({ name: z.string(), nights: z.number().int() })) });
    const parsed = await client.responses.parse({ model: "demo", input: "Plan a trip", text: { format: zodTextFormat(Trip, "trip") } });
    expect(parsed.output_parsed).toEqual({ city: "demo", days: 1, stops: [{ name: "demo", nights: 1 }] });
    const streamed = await client.responses.stream({ model: "demo", input: "Plan a trip", text: { format: zodTextFormat(Trip, "trip") } }).finalResponse();
    expect(streamed.output_parsed).toEqual(parsed.output_parsed);

    const job = await client.responses.create({ model: "demo", input: "Later", background: true });
    expect(["queued", "in_progress"]).toContain(job.status);
    await waitUntil("the background job", async () => (await client.responses.retrieve(job.id)).status === "completed", 20_000, 100);
    expect((await client.responses.retrieve(job.id)).output_text).toContain("[demo backend");

    const logs = demo.output();
    expect(logs).toMatch(/"msg":"DEMO: model \\"demo\\" is served by the built-in demo backend \(canned answers, not a real model\)"/);
    expect(logs).toContain("router.demo.yaml");

    demo.proc.kill("SIGTERM");
    expect(await demo.exited).toBe(0);
    expect(await listening(url)).toBe(false);
  }, 150_000);
});

describe("npm start", () => {
  it("stops the router on SIGTERM to npm: the port is free and npm exits", async () => {
    const dir = mkdtempSync(join(tmpdir(), "rr-start-"));
    const config = join(dir, "router.yaml");
    writeFileSync(config, "endpoints: [{ name: a, url: http://127.0.0.1:9/v1, kind: chat }]\nmodels: { m: { endpoints: [a] } }\n");
    const start = npm(["start", "--", "--config", config, "--port", "0"]);
    const url = await startedAt(start.output);
    start.proc.kill("SIGTERM");
    expect(await start.exited).toBe(0);
    expect(start.output()).toContain("shutdown complete");
    expect(await listening(url)).toBe(false);
  }, 150_000);
});

describe("npm run bench", () => {
  it("prints an estimate first and leaves the tracked BENCHMARKS.md and results alone without --write", async () => {
    const tracked = ["BENCHMARKS.md", "test/bench/results/latest.json", "test/bench/results/chart.svg"];
    const before = tracked.map((f) => readFileSync(f, "utf8"));
    const out = join(mkdtempSync(join(tmpdir(), "rr-bench-")), "run.json");
    const bench = npm(["run", "bench", "--", "--only", "latency", "--rounds", "20", "--paths", "translated-json", "--no-peer", "--no-build", "--nice", "0", "--out", out]);
    expect(await bench.exited).toBe(0);
    const lines = bench.output().split("\n").filter((l) => l.startsWith("[bench]"));
    expect(lines[0]).toMatch(/^\[bench\] estimated duration: ~\d+ (s|min)/);
    expect(lines[1]).toContain("BENCHMARKS.md is left alone");
    expect(JSON.parse(readFileSync(out, "utf8")).paths[0].key).toBe("translated-json");
    expect(tracked.map((f) => readFileSync(f, "utf8"))).toEqual(before);
  }, 120_000);
});
