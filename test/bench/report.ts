/** Bench results: their shape, the console/markdown table, a hand-built SVG chart, BENCHMARKS.md. */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import type { Summary } from "./clients.js";
import { limiterLine, type LimiterCost } from "./limiter.js";
import { renderToolLoops, type ToolLoopResult } from "./websocket.js";
import { tracingLine, type TracingCost } from "./tracing-cost.js";
import { toolRoundLine, toolRoundTarget, type ToolRoundCost } from "./tool-round.js";

export interface TargetResult {
  latency?: Summary;
  first?: Summary;
  addedP50?: number;
  addedP99?: number;
  addedFirstP50?: number;
  addedFirstP99?: number;
  rps?: number;
  rpsErrors?: number;
  rpsLatencyP50?: number;
  rpsLatencyP99?: number;
  rpsVsBare?: number;
  /** Cores the server process used during the throughput run (1.0 = one full core). */
  serverCpu?: number;
  /** Server process CPU time per request in the throughput run. */
  cpuUsPerRequest?: number;
  /** bare proxy's CPU per request / this one's: the RPS ratio on a core of its own, immune to other load. */
  cpuVsBare?: number;
}

export interface PathResult {
  key: string;
  label: string;
  stream: boolean;
  targets: Record<string, TargetResult>;
  notes: string[];
}

export interface BenchResults {
  startedAt: string;
  machine: { nproc: number; node: string; cpu: string; memGb: number };
  settings: Record<string, unknown>;
  load: { before: number[]; after: number[]; niceness: number };
  command: string;
  chatPassThrough: boolean;
  peer: string | null;
  paths: PathResult[];
  streamsCpu: {
    inProcess?: { chunks: number; translatorUsPerChunk: number; pipelineUsPerChunk: number };
    routerTranslatedUs?: number;
    routerNativeUs?: number;
    /** kind: anthropic, Messages events translated to Responses events. */
    routerAnthropicUs?: number;
    routerChatUs?: number;
    bareUs?: number;
    honoUs?: number;
    peerChatUs?: number;
  };
  openStreams?: { label: string; streams: number; failed: number; allOpenMs: number; idleRssMb: number; rssMb: number; perStreamKb: number; mockRssMb: number }[];
  storage?: {
    kind: string;
    storeFalse: Summary;
    storeTrue: Summary;
    cacheHit: Summary;
    addedByStoreP50: number;
    addedByStoreP99: number;
    addedByStoreStreamP50: number;
    cacheHitVsUpstreamP50: number;
  }[];
  limiter?: LimiterCost[];
  /** 10-turn tool loops: one WebSocket vs a POST per turn (section ws). */
  toolLoops?: ToolLoopResult[];
  tracing?: TracingCost[];
  /** CPU per response: a plain answer next to one MCP tool round (section tools). */
  toolRound?: ToolRoundCost;
}

const ORDER = ["direct", "bare", "hono", "router", "portkey"];
const f = (v: number | undefined, d = 3) => (v === undefined || Number.isNaN(v) ? "-" : v.toFixed(d));
const pct = (v: number | undefined) => (v === undefined || Number.isNaN(v) ? "-" : `${Math.round(v * 100)}%`);
const check = (ok: boolean | undefined) => (ok === undefined ? "n/a" : ok ? "met" : "MISSED");
const times = (v: number | undefined) => (v === undefined || !Number.isFinite(v) ? "-" : `${v.toFixed(2)}x`);
/** CPU per request of a target over the hono floor's on the same path in the same run (the ratio the targets are set in). */
const cpuVsHono = (p: PathResult, name: string) => (p.targets[name]?.cpuUsPerRequest ?? Number.NaN) / (p.targets.hono?.cpuUsPerRequest ?? Number.NaN);

function rows(r: BenchResults): string[][] {
  const out: string[][] = [];
  for (const p of r.paths) {
    for (const name of ORDER) {
      const t = p.targets[name];
      if (!t) continue;
      out.push([
        p.label,
        name,
        f(t.latency?.p50),
        name === "direct" ? "" : f(t.addedP50),
        name === "direct" ? "" : f(t.addedP99),
        p.stream && name !== "direct" ? f(t.addedFirstP50) : "",
        t.rps === undefined ? "-" : Math.round(t.rps).toString(),
        name === "direct" ? "" : pct(t.rpsVsBare),
        f(t.serverCpu, 2),
        f(t.cpuUsPerRequest, 0),
        name === "direct" ? "" : pct(t.cpuVsBare),
        name === "direct" ? "" : times(cpuVsHono(p, name)),
        t.rpsErrors ? String(t.rpsErrors) : "",
      ]);
    }
  }
  return out;
}

const HEAD = ["path", "via", "c=1 p50 ms", "added p50 ms", "added p99 ms", "added TTFE p50 ms", "rps c=64", "vs bare", "server cores", "CPU µs/req", "CPU vs bare", "CPU / hono", "errors"];

function targetsLines(r: BenchResults): string[] {
  const lines: string[] = [];
  for (const p of r.paths) {
    const t = p.targets.router;
    if (!t) continue;
    const peer = p.targets.portkey;
    lines.push(
      `${p.label}: added p50 ${f(t.addedP50)} ms (<= 0.3: ${check(t.addedP50 === undefined ? undefined : t.addedP50 <= 0.3)}), ` +
        `p99 ${f(t.addedP99)} ms (<= 1: ${check(t.addedP99 === undefined ? undefined : t.addedP99 <= 1)}), ` +
        `${pct(t.rpsVsBare)} of bare's rps (>= 75%: ${check(t.rpsVsBare === undefined ? undefined : t.rpsVsBare >= 0.75)}; by CPU per request ${pct(t.cpuVsBare)} of bare, ` +
        `${pct((p.targets.hono?.cpuUsPerRequest ?? Number.NaN) / (t.cpuUsPerRequest ?? Number.NaN))} of the hono floor)` +
        `; CPU ${times(cpuVsHono(p, "router"))} the hono floor (<= ${hostBound(p.key)}x: ${check(cpuVsHono(p, "router") <= hostBound(p.key))})` +
        `; added p99 ${f(t.addedP99 === undefined || p.targets.bare?.addedP99 === undefined ? undefined : t.addedP99 - p.targets.bare.addedP99)} ms over the bare proxy's (<= 1: ${check(t.addedP99 === undefined || p.targets.bare?.addedP99 === undefined ? undefined : t.addedP99 - p.targets.bare.addedP99 <= 1)})` +
        (p.key === "translated-json" ? jsonVsStream(r) : "") +
        (peer?.rps && t.rps
          ? `, ${(t.rps / peer.rps).toFixed(2)}x the peer's rps (ahead: ${check(t.rps > peer.rps)}; by CPU per request ${((peer.cpuUsPerRequest ?? Number.NaN) / (t.cpuUsPerRequest ?? Number.NaN)).toFixed(2)}x)`
          : ", no peer on this path"),
    );
  }
  const c = r.streamsCpu;
  if (c.routerTranslatedUs !== undefined) lines.push(`stream translation: ${f(c.routerTranslatedUs, 1)} µs CPU per chunk in the router process (<= 20: ${check(c.routerTranslatedUs <= 20)})`);
  for (const o of r.openStreams ?? []) lines.push(`${o.streams} open ${o.label} streams: ${f(o.rssMb, 0)} MB RSS (1,000 in <= 200 MB: ${check(o.streams >= 1000 ? o.rssMb <= 200 : undefined)})`);
  const tool = r.toolRound && toolRoundTarget(r.toolRound);
  if (tool) lines.push(tool);
  return lines;
}

/** Router CPU per request over the hono floor's: pass-through streams at most 1.5x, every other path at most 2x. */
function hostBound(key: string): number {
  return key === "native-stream" || key === "chat-stream" ? 1.5 : 2;
}

/** The translated JSON answer costs no more than the translated stream of the same answer. */
function jsonVsStream(r: BenchResults): string {
  const json = r.paths.find((p) => p.key === "translated-json")?.targets.router?.cpuUsPerRequest;
  const stream = r.paths.find((p) => p.key === "translated-stream")?.targets.router?.cpuUsPerRequest;
  if (json === undefined || stream === undefined) return "";
  return `; ${f(json, 0)} µs against the translated stream's ${f(stream, 0)} (<=: ${check(json <= stream)})`;
}

export function renderTable(r: BenchResults): string {
  const all = [HEAD, ...rows(r)];
  const widths = HEAD.map((_, i) => Math.max(...all.map((row) => row[i]!.length)));
  const fmt = (row: string[]) => row.map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ");
  const lines = [fmt(HEAD), widths.map((w) => "-".repeat(w)).join("  "), ...rows(r).map(fmt)];
  for (const p of r.paths) for (const n of p.notes) lines.push(`  note (${p.label}): ${n}`);
  lines.push(`  load average before ${r.load.before.join(" / ")}, after ${r.load.after.join(" / ")}; niceness ${r.load.niceness}`);
  lines.push("", ...streamLines(r), "", ...storageLines(r), "", "Targets:", ...targetsLines(r).map((l) => `  ${l}`));
  return lines.join("\n");
}

function streamLines(r: BenchResults): string[] {
  const c = r.streamsCpu;
  const out: string[] = [];
  if (c.inProcess) out.push(`CPU per chunk, in process: translator ${f(c.inProcess.translatorUsPerChunk, 2)} µs; SSE parse + read + translate + serialise ${f(c.inProcess.pipelineUsPerChunk, 2)} µs (${c.inProcess.chunks} chunks)`);
  if (c.routerTranslatedUs !== undefined)
    out.push(
      `CPU per chunk, whole server process over long streams: router translated ${f(c.routerTranslatedUs, 1)} µs, router native ${f(c.routerNativeUs, 1)} µs` +
        (c.routerAnthropicUs !== undefined ? `, router translated anthropic ${f(c.routerAnthropicUs, 1)} µs` : "") +
        (c.routerChatUs !== undefined ? `, router chat pass-through ${f(c.routerChatUs, 1)} µs` : "") +
        `, bare proxy ${f(c.bareUs, 1)} µs, hono proxy ${f(c.honoUs, 1)} µs` +
        (c.peerChatUs !== undefined ? `, portkey chat pass-through ${f(c.peerChatUs, 1)} µs` : ""),
    );
  for (const o of r.openStreams ?? [])
    out.push(`${o.streams} open ${o.label} streams (${o.failed} failed, all open in ${f(o.allOpenMs, 0)} ms): router RSS ${f(o.rssMb, 1)} MB (idle ${f(o.idleRssMb, 1)} MB, ${f(o.perStreamKb, 1)} KB per stream)`);
  return out;
}

function storageLines(r: BenchResults): string[] {
  return [...storageOnly(r), ...(r.limiter ?? []).map(limiterLine), ...(r.tracing ?? []).map(tracingLine), ...(r.toolRound ? [toolRoundLine(r.toolRound)] : [])];
}

function storageOnly(r: BenchResults): string[] {
  return (r.storage ?? []).map(
    (s) =>
      `${s.kind} store (translated json, c=1): store:false p50 ${f(s.storeFalse.p50)} ms; store:true adds ${f(s.addedByStoreP50)} ms p50 / ${f(s.addedByStoreP99)} ms p99 ` +
      `(stream: ${f(s.addedByStoreStreamP50)} ms p50); cache hit p50 ${f(s.cacheHit.p50)} ms (${f(s.cacheHitVsUpstreamP50)} ms vs an upstream call)`,
  );
}

export function renderMarkdown(r: BenchResults): string {
  const md: string[] = [];
  md.push(`Run ${r.startedAt} on ${r.machine.nproc} cores (${r.machine.cpu}), ${r.machine.memGb} GB, Node ${r.machine.node}.`);
  md.push(`Load average (1/5/15 min) before ${r.load.before.join(" / ")}, after ${r.load.after.join(" / ")}; bench niceness ${r.load.niceness}.`);
  md.push(`Command: \`${r.command}\`. Placement: ${String(r.settings.placement)}. Mock latency ${String(r.settings.mockLatencyMs)} ms, router log level ${String(r.settings.logLevel)}, peer: ${r.peer ?? "none"}.`);
  md.push("", `| ${HEAD.join(" | ")} |`, `| ${HEAD.map((_, i) => (i < 2 ? "---" : "---:")).join(" | ")} |`);
  for (const row of rows(r)) md.push(`| ${row.join(" | ")} |`);
  md.push("");
  for (const p of r.paths) for (const n of p.notes) md.push(`- ${p.label}: ${n}`);
  md.push("", ...streamLines(r).map((l) => `- ${l}`), ...storageLines(r).map((l) => `- ${l}`));
  if (r.toolLoops?.length) md.push("", "10-turn tool loops, per turn (one WebSocket vs a POST per turn; see \"Tool loops over a WebSocket\" below):", "", renderToolLoops(r.toolLoops));
  md.push("", "Against the targets:", "", ...targetsLines(r).map((l) => `- ${l}`));
  md.push("", "![throughput and added latency](test/bench/results/chart.svg)");
  return md.join("\n");
}

const BEGIN = "<!-- bench:results:begin (written by npm run bench) -->";
const END = "<!-- bench:results:end -->";

/** Replaces the generated section of BENCHMARKS.md, keeping the hand-written text around it. */
export function updateBenchmarksMd(file: string, section: string): void {
  const text = existsSync(file) ? readFileSync(file, "utf8") : `# Benchmarks\n\n${BEGIN}\n${END}\n`;
  const a = text.indexOf(BEGIN);
  const b = text.indexOf(END);
  const next = a !== -1 && b > a ? `${text.slice(0, a + BEGIN.length)}\n${section}\n${text.slice(b)}` : `${text.trimEnd()}\n\n${BEGIN}\n${section}\n${END}\n`;
  writeFileSync(file, next);
}

// ---- SVG ----------------------------------------------------------------------------

const COLORS: Record<string, string> = { direct: "#9aa0a6", bare: "#5f6368", hono: "#34a853", router: "#1a73e8", portkey: "#e8710a" };
const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;");

/** Two grouped bar panels: requests/s at concurrency 64, and added p50 latency at concurrency 1. */
export function renderChart(r: BenchResults): string {
  const W = 1000;
  const panelH = 260;
  const left = 70;
  const top = 40;
  const groups = r.paths;
  const series = ["bare", "hono", "router", "portkey"];
  const gw = (W - left - 20) / Math.max(1, groups.length);
  const bw = Math.min(28, (gw - 16) / series.length);
  const parts: string[] = [];
  const panel = (y0: number, title: string, value: (t: TargetResult) => number | undefined, unit: string) => {
    const vals = groups.flatMap((g) => series.map((s) => (g.targets[s] ? value(g.targets[s]!) : undefined))).filter((v): v is number => v !== undefined && Number.isFinite(v));
    const max = Math.max(1e-9, ...vals) * 1.15;
    const h = panelH - 60;
    parts.push(`<text x="${left}" y="${y0 + 16}" font-size="14" font-weight="bold">${esc(title)}</text>`);
    parts.push(`<line x1="${left}" y1="${y0 + 30 + h}" x2="${W - 20}" y2="${y0 + 30 + h}" stroke="#333"/>`);
    for (let k = 0; k <= 4; k++) {
      const v = (max / 4) * k;
      const y = y0 + 30 + h - (h * k) / 4;
      parts.push(`<line x1="${left}" y1="${y}" x2="${W - 20}" y2="${y}" stroke="#eee"/>`);
      parts.push(`<text x="${left - 6}" y="${y + 4}" font-size="10" text-anchor="end">${v >= 100 ? Math.round(v) : v.toFixed(2)}${unit}</text>`);
    }
    groups.forEach((g, gi) => {
      const gx = left + gi * gw + 8;
      series.forEach((s, si) => {
        const t = g.targets[s];
        const v = t ? value(t) : undefined;
        if (v === undefined || !Number.isFinite(v)) return;
        const bh = (Math.max(0, v) / max) * h;
        const x = gx + si * bw;
        parts.push(`<rect x="${x.toFixed(1)}" y="${(y0 + 30 + h - bh).toFixed(1)}" width="${(bw - 2).toFixed(1)}" height="${bh.toFixed(1)}" fill="${COLORS[s]}"><title>${esc(`${g.label} via ${s}: ${v.toFixed(3)}${unit}`)}</title></rect>`);
      });
      parts.push(`<text x="${(gx + (series.length * bw) / 2).toFixed(1)}" y="${y0 + 30 + h + 14}" font-size="10" text-anchor="middle">${esc(g.label)}</text>`);
    });
  };
  panel(top, "Requests/s at concurrency 64 (server under test on one core)", (t) => t.rps, "");
  panel(top + panelH, "Added latency p50 at concurrency 1, ms over direct-to-mock", (t) => t.addedP50, "");
  const legendY = 18;
  series.forEach((s, i) => {
    parts.push(`<rect x="${W - 390 + i * 95}" y="${legendY - 10}" width="12" height="12" fill="${COLORS[s]}"/>`);
    parts.push(`<text x="${W - 374 + i * 95}" y="${legendY}" font-size="12">${s === "bare" ? "bare proxy" : s === "hono" ? "hono proxy" : s}</text>`);
  });
  const H = top + panelH * 2 + 10;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif">\n<rect width="100%" height="100%" fill="white"/>\n<text x="10" y="${legendY}" font-size="12" fill="#555">${esc(`responses-router bench, ${r.startedAt.slice(0, 16)}, node ${r.machine.node}, ${r.machine.nproc} cores`)}</text>\n${parts.join("\n")}\n</svg>\n`;
}
