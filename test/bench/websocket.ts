/**
 * A 10-turn tool loop (the model calls a tool every turn; the client answers with the tool's
 * output) through the router, three ways, on both backend kinds:
 *
 *   websocket   one socket per loop, `store: false`, each turn only the tool output plus
 *               `previous_response_id` (the connection keeps the previous turn)
 *   http        a POST per turn, `store: false`, the whole history re-sent each turn (what an
 *               agent such as Codex does over HTTP)
 *   http-chain  a POST per turn, `store: true` + `previous_response_id` (the router's store)
 *
 * and the same turns sent straight to the mock (direct) as the reference. Figures per turn:
 * p50/p99 client time (request sent -> terminal event read), added p50 (minus direct), and the
 * router process's CPU per turn (from /proc over blocks of one way only). The ways alternate
 * in blocks of loops, so all see the same machine state.
 *
 * Used by `npm run bench` (section `ws`); alone: `node --import tsx test/bench/websocket.ts
 * --router http://127.0.0.1:PORT --pid PID --mock http://127.0.0.1:PORT [--loops 100]`.
 */
import { parseArgs } from "node:util";
import { WebSocket } from "ws";
import { summarize, type Summary } from "./clients.js";
import { procCpuSeconds } from "./procs.js";

export const TURNS = 10;
const TOOL = { type: "function", name: "lookup", description: "Looks something up.", parameters: { type: "object", properties: { q: { type: "string" } }, required: ["q"] } };
const FIRST = "Look things up with the tool until I say stop.";

export type Way = "websocket" | "http" | "http-chain" | "direct";

export interface ToolLoopResult {
  kind: "chat" | "openai";
  way: Way;
  turns: number;
  turn: Summary;
  /** p50 per turn minus direct's p50. */
  addedP50Ms?: number;
  addedP99Ms?: number;
  /** Router CPU per turn, µs (not for direct). */
  cpuUsPerTurn?: number;
}

interface Turn {
  ms: number;
  response: { id: string; output: { type: string; call_id?: string }[] };
}

/** A Responses stream body's terminal event (response.completed), parsed. */
function terminalOf(text: string): Turn["response"] {
  const at = text.lastIndexOf("event: response.completed");
  if (at < 0) throw new Error(`no response.completed in: ${text.slice(0, 300)}`);
  const data = text.indexOf("data: ", at) + 6;
  return (JSON.parse(text.slice(data, text.indexOf("\n", data))) as { response: Turn["response"] }).response;
}

async function postTurn(url: string, body: Record<string, unknown>): Promise<Turn> {
  const t0 = performance.now();
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", authorization: "Bearer sk-bench" }, body: JSON.stringify({ ...body, stream: true }) });
  const text = await res.text();
  const ms = performance.now() - t0;
  if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${text.slice(0, 300)}`);
  return { ms, response: terminalOf(text) };
}

/** One socket, sequential turns: each resolves with its response.completed. */
class SocketTurns {
  private pending: ((e: string) => void) | null = null;
  private constructor(private readonly ws: WebSocket) {
    ws.on("message", (data) => {
      const text = String(data);
      if (text.startsWith('{"type":"response.completed"') || text.startsWith('{"type":"error"') || text.startsWith('{"type":"response.failed"')) this.pending?.(text);
    });
  }

  static async open(url: string): Promise<SocketTurns> {
    const ws = new WebSocket(url, { headers: { authorization: "Bearer sk-bench" }, perMessageDeflate: false });
    await new Promise((resolve, reject) => (ws.once("open", resolve), ws.once("error", reject)));
    return new SocketTurns(ws);
  }

  async turn(body: Record<string, unknown>): Promise<Turn> {
    const t0 = performance.now();
    const done = new Promise<string>((resolve) => (this.pending = resolve));
    this.ws.send(JSON.stringify({ type: "response.create", ...body }));
    const text = await done;
    const ms = performance.now() - t0;
    const event = JSON.parse(text) as { type: string; response: Turn["response"] };
    if (event.type !== "response.completed") throw new Error(`websocket turn ended with ${text.slice(0, 300)}`);
    return { ms, response: event.response };
  }

  close(): void {
    this.ws.close();
  }
}

const callId = (r: Turn["response"]) => r.output.find((i) => i.type === "function_call")?.call_id ?? "call_bench1";

/** One loop of TURNS turns one way; returns the per-turn times. */
async function loop(way: Way, kind: "chat" | "openai", router: string, mock: string): Promise<number[]> {
  const model = kind === "chat" ? "chat-tool" : "oai-tool";
  const times: number[] = [];
  if (way === "websocket") {
    const ws = await SocketTurns.open(`${router.replace("http", "ws")}/v1/responses`);
    let last: Turn["response"] | null = null;
    for (let t = 0; t < TURNS; t++) {
      const input = last ? [{ type: "function_call_output", call_id: callId(last), output: `result ${t}` }] : FIRST;
      const turn = await ws.turn({ model, input, tools: [TOOL], store: false, ...(last ? { previous_response_id: last.id } : {}) });
      times.push(turn.ms);
      last = turn.response;
    }
    ws.close();
    return times;
  }
  if (way === "http-chain") {
    let last: Turn["response"] | null = null;
    for (let t = 0; t < TURNS; t++) {
      const input = last ? [{ type: "function_call_output", call_id: callId(last), output: `result ${t}` }] : FIRST;
      const turn = await postTurn(`${router}/v1/responses`, { model, input, tools: [TOOL], store: true, ...(last ? { previous_response_id: last.id } : {}) });
      times.push(turn.ms);
      last = turn.response;
    }
    return times;
  }
  // http (full history, store:false) and direct (the same bodies straight to the mock).
  const history: unknown[] = [{ role: "user", content: FIRST }];
  const messages: unknown[] = [{ role: "user", content: FIRST }];
  for (let t = 0; t < TURNS; t++) {
    if (way === "direct") {
      const t0 = performance.now();
      const body = kind === "chat" ? { model, messages, tools: [{ type: "function", function: TOOL }], stream: true } : { model, input: history, tools: [TOOL], store: false, stream: true };
      const res = await fetch(`${mock}/v1/${kind === "chat" ? "chat/completions" : "responses"}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
      await res.text();
      times.push(performance.now() - t0);
      messages.push({ role: "assistant", content: null, tool_calls: [{ id: "call_bench1", type: "function", function: { name: "lookup", arguments: '{"q":"next"}' } }] }, { role: "tool", tool_call_id: "call_bench1", content: `result ${t}` });
      history.push({ type: "function_call", call_id: "call_bench1", name: "lookup", arguments: '{"q":"next"}' }, { type: "function_call_output", call_id: "call_bench1", output: `result ${t}` });
      continue;
    }
    const turn = await postTurn(`${router}/v1/responses`, { model, input: history, tools: [TOOL], store: false });
    times.push(turn.ms);
    history.push(...turn.response.output, { type: "function_call_output", call_id: callId(turn.response), output: `result ${t}` });
  }
  return times;
}

/**
 * Runs `loops` loops per way and kind, ways alternating in blocks of `block` loops; the
 * router's CPU is read around each block.
 */
export async function measureToolLoops(opts: { router: string; routerPid: number; mock: string; loops: number; block?: number; log?: (m: string) => void }): Promise<ToolLoopResult[]> {
  const ways: Way[] = ["direct", "http", "http-chain", "websocket"];
  const block = opts.block ?? 10;
  const out: ToolLoopResult[] = [];
  for (const kind of ["chat", "openai"] as const) {
    const times = new Map<Way, number[]>(ways.map((w) => [w, []]));
    const cpu = new Map<Way, number>(ways.map((w) => [w, 0]));
    // Warm-up: a few loops each way (JIT, connections).
    for (const w of ways) for (let i = 0; i < 3; i++) await loop(w, kind, opts.router, opts.mock);
    opts.log?.(`tool loops (${kind}): ${opts.loops} loops of ${TURNS} turns per way, ways alternating in blocks of ${block}`);
    for (let done = 0; done < opts.loops; done += block) {
      for (const w of ways) {
        const c0 = procCpuSeconds(opts.routerPid);
        for (let i = 0; i < Math.min(block, opts.loops - done); i++) times.get(w)!.push(...(await loop(w, kind, opts.router, opts.mock)));
        cpu.set(w, cpu.get(w)! + procCpuSeconds(opts.routerPid) - c0);
      }
    }
    const direct = summarize(times.get("direct")!);
    for (const w of ways) {
      const turns = times.get(w)!;
      const s = summarize(turns);
      out.push({
        kind,
        way: w,
        turns: turns.length,
        turn: s,
        ...(w === "direct" ? {} : { addedP50Ms: s.p50 - direct.p50, addedP99Ms: s.p99 - direct.p99, cpuUsPerTurn: (cpu.get(w)! / turns.length) * 1e6 }),
      });
    }
  }
  return out;
}

/** A markdown table of the results. */
export function renderToolLoops(results: ToolLoopResult[]): string {
  const rows = results.map((r) => {
    const f = (v: number | undefined, d = 2) => (v === undefined ? "-" : v.toFixed(d));
    return `| ${r.kind} | ${r.way} | ${r.turns} | ${f(r.turn.p50)} | ${f(r.turn.p99)} | ${f(r.addedP50Ms)} | ${f(r.addedP99Ms)} | ${f(r.cpuUsPerTurn, 0)} |`;
  });
  return ["| backend | way | turns | turn p50 ms | turn p99 ms | added p50 ms | added p99 ms | router CPU µs/turn |", "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |", ...rows].join("\n");
}

const isMain = process.argv[1] && import.meta.url.endsWith(process.argv[1].replace(/^.*\//, ""));
if (isMain) {
  const { values } = parseArgs({ options: { router: { type: "string" }, pid: { type: "string" }, mock: { type: "string" }, loops: { type: "string" } } });
  const results = await measureToolLoops({ router: values.router!, routerPid: Number(values.pid), mock: values.mock!, loops: Number(values.loops ?? 100), log: (m) => console.error("[bench]", m) });
  console.log(renderToolLoops(results));
}
