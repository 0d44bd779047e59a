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

/** Asks the cluster's known primaries at once; the first to answer within timeoutMs is the answer. */
export async function readClusterState(client: Cluster, timeoutMs = 500): Promise<ClusterState> {
  const asked = Promise.any(client.nodes("master").map(async (node) => parseClusterState(...((await Promise.all([node.cluster("INFO"), node.cluster("NODES")])) as [string, string]))));
  asked.catch(() => {});
  return (await settlesWithin(asked, timeoutMs)) ? asked.catch(() => UNREACHABLE) : UNREACHABLE;
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

/**
 * The cluster's state for pages polled every few seconds (/readyz must answer at once whatever
 * the cluster does): the last state read, refreshed in the background at most once a second;
 * only the first read waits (at most timeoutMs).
 */
export class ClusterStateReader {
  private latest: ClusterState | null = null;
  private pending: Promise<ClusterState> | null = null;
  private readAt = 0;

  constructor(
    private readonly client: Cluster,
    private readonly timeoutMs = 500,
  ) {}

  read(): Promise<ClusterState> {
    if (!this.pending && Date.now() - this.readAt > 1_000) {
      this.readAt = Date.now();
      this.pending = readClusterState(this.client, this.timeoutMs).then((state) => {
        this.latest = state;
        this.pending = null;
        return state;
      });
    }
    return this.latest ? Promise.resolve(this.latest) : this.pending!;
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
