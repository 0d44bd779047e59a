/**
 * What a hosted tool round costs the router: CPU per response for a plain translated answer
 * (one upstream round) next to one whose model calls an MCP tool (list the server's tools,
 * round 1, one MCP call over loopback, round 2), streamed, through a router child whose
 * config defines the MCP server (the SDK's own server, in the bench process on the client
 * core), and the same exchanges through the hono floor (`/floor/mcp-round`, hono-proxy.ts
 * --mcp). Interleaved rounds at concurrency 16; the figure is each server's CPU time over the
 * responses it answered.
 */
import { throughput } from "./clients.js";
import type { Child } from "./procs.js";
import { startMcpServer } from "../helpers/mcp-server.js";

export interface ToolRoundCost {
  /** Median CPU µs per response. */
  plainUs: number;
  mcpUs: number;
  /** The hono floor making the same exchanges (none when no floor was started). */
  floorUs?: number;
  plainRounds: number[];
  mcpRounds: number[];
  floorRounds: number[];
  /** MCP tool calls the server received (one per tool response, a check the path ran). */
  mcpCalls: number;
  mcpResponses: number;
}

export interface ToolRoundOptions {
  start(name: string, extra: Record<string, unknown>): Promise<Child>;
  /** The hono floor, given the MCP server's URL (its /floor/mcp-round route). */
  startFloor?(mcpUrl: string): Promise<Child>;
  rounds: number;
  seconds: number;
  log(msg: string): void;
}

const CONCURRENCY = 16;

export async function measureToolRound(o: ToolRoundOptions): Promise<ToolRoundCost> {
  const mcp = await startMcpServer();
  const router = await o.start("router-tools", { tools: { mcp: { servers: [{ label: "bench", url: mcp.url, require_approval: "never", allowed_tools: ["echo"] }] } } });
  const origin = `http://127.0.0.1:${router.port}`;
  const plain = { name: "plain", origin, path: "/v1/responses", body: JSON.stringify({ model: "chat-s", input: "hi", stream: true, store: false }) };
  const tool = { name: "mcp", origin, path: "/v1/responses", body: JSON.stringify({ model: "chat-mcp", input: "hi", stream: true, store: false, tools: [{ type: "mcp", server_label: "bench" }] }) };
  const floor = o.startFloor ? await o.startFloor(mcp.url) : null;
  const floorTarget = floor && { name: "floor", origin: `http://127.0.0.1:${floor.port}`, path: "/floor/mcp-round", body: FLOOR_BODY };
  const out = { plain: [] as number[], mcp: [] as number[], floor: [] as number[] };
  let responses = 0;
  try {
    for (let i = 0; i < o.rounds; i++) {
      const targets = [["plain", plain, router], ["mcp", tool, router], ...(floorTarget ? [["floor", floorTarget, floor!] as const] : [])] as const;
      for (const [label, t, server] of targets) {
        await throughput(t, CONCURRENCY, 1, 0); // warm-up
        const calls0 = mcp.calls.length;
        const c0 = server.cpuSeconds();
        const r = await throughput(t, CONCURRENCY, o.seconds, 0);
        if (r.errors + r.non2xx > 0) throw new Error(`tool round ${label}: ${r.errors} errors, ${r.non2xx} non-2xx`);
        out[label].push(((server.cpuSeconds() - c0) * 1e6) / Math.max(1, r.requests));
        if (label !== "plain" && mcp.calls.length - calls0 < r.requests) throw new Error(`tool round ${label}: ${r.requests} responses but ${mcp.calls.length - calls0} MCP calls`);
        if (label === "mcp") responses += r.requests;
      }
      o.log(`tool round ${i + 1}: plain ${out.plain.at(-1)!.toFixed(0)} µs, MCP tool round ${out.mcp.at(-1)!.toFixed(0)} µs${floor ? `, its hono floor ${out.floor.at(-1)!.toFixed(0)} µs` : ""} CPU per response`);
    }
  } finally {
    await router.stop();
    await floor?.stop();
    await mcp.close();
  }
  return { plainUs: median(out.plain), mcpUs: median(out.mcp), floorUs: floor ? median(out.floor) : undefined, plainRounds: out.plain, mcpRounds: out.mcp, floorRounds: out.floor, mcpCalls: mcp.calls.length, mcpResponses: responses };
}

/** The round as the floor is asked for it: the chat request the router's first round sends, with the tool the model calls. */
export const FLOOR_BODY = JSON.stringify({ model: "chat-mcp", messages: [{ role: "user", content: "hi" }], stream: true, stream_options: { include_usage: true }, tools: [{ type: "function", function: { name: "bench__echo", parameters: { type: "object", properties: { text: { type: "string" } } } } }] });

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

export function toolRoundLine(c: ToolRoundCost): string {
  const f = (v: number) => v.toFixed(0);
  const floor = c.floorUs === undefined ? "" : `; the hono floor making the same exchanges ${f(c.floorUs)} µs (router ${(c.mcpUs / c.floorUs).toFixed(2)}x)`;
  return `hosted tool round, chat stream (c=${CONCURRENCY}, median of ${c.mcpRounds.length} interleaved rounds): plain answer ${f(c.plainUs)} µs, one MCP call over loopback (listing + 2 model rounds + the call) ${f(c.mcpUs)} µs CPU per response (+${f(c.mcpUs - c.plainUs)} µs)${floor}`;
}

/** The tool round against its floor, as the Responses paths are: at most 2x. */
export function toolRoundTarget(c: ToolRoundCost): string | null {
  if (c.floorUs === undefined) return null;
  const ratio = c.mcpUs / c.floorUs;
  return `one MCP tool round: CPU ${ratio.toFixed(2)}x the hono floor making the same exchanges (<= 2x: ${ratio <= 2 ? "met" : "MISSED"})`;
}
