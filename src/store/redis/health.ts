/**
 * What Redis says of itself, for `check --probe` and `/readyz`: a reachable server, or a Redis
 * Cluster's own view (`cluster_state` and its nodes, as CLUSTER INFO and CLUSTER NODES of the
 * first node that answers give them). Never a password: addresses only.
 */
import { Cluster } from "ioredis";
import { settlesWithin } from "../settles-within.js";
import { closeClient, createRedisClient, waitReady, type RedisClient, type RedisTarget } from "./client.js";
import { describeTarget } from "./target.js";
import type { ClusterState } from "../types.js";

const UNREACHABLE: ClusterState = { state: "unreachable", nodes: { total: 0, reachable: 0, primaries: 0, failing: [] } };

/** Asks the cluster's known primaries in turn (each within timeoutMs) until one answers. */
export async function readClusterState(client: Cluster, timeoutMs = 500): Promise<ClusterState> {
  for (const node of client.nodes("master")) {
    const asked = Promise.all([node.cluster("INFO"), node.cluster("NODES")]);
    asked.catch(() => {});
    if (!(await settlesWithin(asked, timeoutMs))) continue;
    try {
      const [info, nodes] = (await asked) as [string, string];
      return parseClusterState(info, nodes);
    } catch {
      // The next primary may answer.
    }
  }
  return UNREACHABLE;
}

/** CLUSTER INFO's cluster_state and CLUSTER NODES' lines: `<id> <addr> <flags> <primary> <ping> <pong> <epoch> <link> <slots>...`. */
export function parseClusterState(info: string, nodes: string): ClusterState {
  const state = /cluster_state:(\w+)/.exec(info)?.[1] === "ok" ? "ok" : "fail";
  let total = 0;
  let reachable = 0;
  let primaries = 0;
  const failing: string[] = [];
  for (const line of nodes.split("\n")) {
    const f = line.trim().split(" ");
    if (f.length < 8) continue;
    total++;
    const flags = f[2]!.split(",");
    const address = f[1]!.split("@")[0]!;
    const up = f[7] === "connected" && !flags.some((x) => x === "fail" || x === "fail?" || x === "noaddr" || x === "handshake");
    if (up) reachable++;
    else failing.push(address);
    if (flags.includes("master") && up) primaries++;
  }
  return { state, nodes: { total, reachable, primaries, failing } };
}

/** The cluster's state for a page polled every few seconds: asked at most once a second, never waited on longer than timeoutMs. */
export class ClusterStateReader {
  private last: { at: number; value: Promise<ClusterState> } | null = null;

  constructor(
    private readonly client: Cluster,
    private readonly timeoutMs = 500,
  ) {}

  read(): Promise<ClusterState> {
    if (!this.last || Date.now() - this.last.at > 1_000) this.last = { at: Date.now(), value: readClusterState(this.client, this.timeoutMs) };
    return this.last.value;
  }
}

/** `check --probe`: connects as the router would, and says what it found. */
export async function probeRedis(target: RedisTarget, timeoutMs = 3_000): Promise<{ ok: boolean; detail: string }> {
  const where = describeTarget(target);
  const client: RedisClient = createRedisClient(target, { connectionName: "rr-check", connectTimeoutMs: timeoutMs });
  try {
    await waitReady(client, timeoutMs, "store");
    if (client instanceof Cluster) {
      const s = await readClusterState(client, timeoutMs);
      const failing = s.nodes.failing.length ? `; failing: ${s.nodes.failing.join(", ")}` : "";
      return { ok: s.state === "ok", detail: `${where}: cluster_state ${s.state}, ${s.nodes.reachable}/${s.nodes.total} nodes reachable, ${s.nodes.primaries} primaries${failing}` };
    }
    const pong = await client.ping();
    return { ok: pong === "PONG", detail: `${where}: answered PING` };
  } catch (err) {
    return { ok: false, detail: `${where}: ${(err as Error).message}` };
  } finally {
    await closeClient(client);
  }
}
