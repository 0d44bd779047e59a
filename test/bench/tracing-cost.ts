/**
 * What tracing costs: router CPU per request with tracing off and on (every trace sampled,
 * the real OTLP/HTTP exporter posting to a local sink), two fresh router children measured
 * in interleaved rounds at concurrency 64 (the server's CPU time over the requests it
 * answered). The sink runs in the bench process, on the client core.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { throughput } from "./clients.js";
import type { Child } from "./procs.js";

export interface TracingCost {
  path: string;
  /** Median CPU µs per request of the rounds. */
  offUs: number;
  onUs: number;
  offRounds: number[];
  onRounds: number[];
  /** OTLP export requests and bytes the sink received from the traced router. */
  exports: number;
  exportedKb: number;
}

export interface TracingCostOptions {
  /** Starts a router child with this config merged over the bench's. */
  start(name: string, extra: Record<string, unknown>): Promise<Child>;
  paths: { key: string; path: string; body: string }[];
  rounds: number;
  seconds: number;
  log(msg: string): void;
}

export async function measureTracingCost(o: TracingCostOptions): Promise<TracingCost[]> {
  const sink = { requests: 0, bytes: 0 };
  const server = createServer((req, res) => {
    req.on("data", (c: Buffer) => (sink.bytes += c.length));
    req.on("end", () => {
      sink.requests++;
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`;
  const off = await o.start("router-tracing-off", {});
  const on = await o.start("router-tracing-on", { tracing: { endpoint: url, sample_ratio: 1 } });
  const out: TracingCost[] = [];
  try {
    for (const p of o.paths) {
      const rounds = { off: [] as number[], on: [] as number[] };
      const exports0 = { ...sink };
      for (let i = 0; i < o.rounds; i++) {
        for (const [label, child] of [["off", off], ["on", on]] as const) {
          const t = { name: label, origin: `http://127.0.0.1:${child.port}`, path: p.path, body: p.body };
          await throughput(t, 64, 1, 0); // warm-up
          const c0 = child.cpuSeconds();
          const r = await throughput(t, 64, o.seconds, 0);
          if (r.errors + r.non2xx > 0) throw new Error(`tracing ${label} ${p.key}: ${r.errors} errors, ${r.non2xx} non-2xx`);
          rounds[label].push(((child.cpuSeconds() - c0) * 1e6) / Math.max(1, r.requests));
        }
        o.log(`tracing ${p.key} round ${i + 1}: off ${rounds.off.at(-1)!.toFixed(1)} µs, on ${rounds.on.at(-1)!.toFixed(1)} µs CPU per request`);
      }
      out.push({
        path: p.key,
        offUs: median(rounds.off),
        onUs: median(rounds.on),
        offRounds: rounds.off,
        onRounds: rounds.on,
        exports: sink.requests - exports0.requests,
        exportedKb: (sink.bytes - exports0.bytes) / 1024,
      });
    }
  } finally {
    await off.stop();
    await on.stop();
    server.close();
  }
  return out;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

export function tracingLine(c: TracingCost): string {
  const f = (v: number) => v.toFixed(1);
  const pct = c.offUs > 0 ? ((c.onUs - c.offUs) / c.offUs) * 100 : Number.NaN;
  return (
    `tracing, ${c.path} (c=64, median of ${c.onRounds.length} interleaved rounds): off ${f(c.offUs)} µs, on (100% sampled, OTLP/HTTP to a local sink) ${f(c.onUs)} µs CPU per request ` +
    `(+${f(c.onUs - c.offUs)} µs, ${pct >= 0 ? "+" : ""}${pct.toFixed(0)}%); ${c.exports} exports, ${c.exportedKb.toFixed(0)} KB`
  );
}
