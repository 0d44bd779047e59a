import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { askRedis, freePort, onFreePort, pollUntil, PortTaken } from "./redis-server.js";

export interface RedisClusterOptions {
  /** Primaries (default 3); each gets `replicasPer` replicas (default 1). */
  primaries?: number;
  replicasPer?: number;
  /** cluster-node-timeout: how long a silent primary takes to be failed over (default 2000). */
  nodeTimeoutMs?: number;
  /** requirepass/masterauth on every node. */
  password?: string;
}

export interface RedisCluster {
  /** The startup nodes, as `storage.redis.cluster` takes them. */
  nodes: { host: string; port: number }[];
  /** The ports of the current primaries. */
  primaryPorts(): Promise<number[]>;
  /** The primary that serves a key's slot now. */
  primaryOf(key: string): Promise<number>;
  /** SIGKILLs a server (no goodbye, like a crashed machine). */
  kill(port: number): Promise<void>;
  /** Starts a killed server again on its ports with its node config: empty, it rejoins as a replica and resyncs. */
  rejoin(port: number): Promise<void>;
  /** Waits until every primary has each of its replicas online and in sync (a failover then loses nothing). */
  waitForReplicas(timeoutMs?: number): Promise<void>;
  /** Waits until every slot is served by a primary that is up and the cluster says ok; returns the primaries. */
  waitForOk(timeoutMs?: number): Promise<number[]>;
  /** Waits until a primary other than `oldPort` serves the key's slot (its replica was promoted). */
  waitForNewPrimary(key: string, oldPort: number, timeoutMs?: number): Promise<number>;
  /** Stops every server and removes its files. */
  stop(): Promise<void>;
}

const HOST = "127.0.0.1";
const until = <T>(what: string, timeoutMs: number, probe: () => Promise<T | null | undefined | false>) => pollUntil("redis cluster", what, timeoutMs, probe);

function requireBinaries(): void {
  for (const bin of ["redis-server", "redis-cli"]) {
    const found = spawnSync(bin, ["--version"], { stdio: "ignore" });
    if (found.error || found.status !== 0) {
      throw new Error(`${bin} is not on PATH. The Redis Cluster suites need real Redis processes: run scripts/ensure-test-deps.sh (or apt-get install -y redis-server redis-tools).`);
    }
  }
}

/**
 * A real Redis Cluster on loopback: `primaries` x (1 + `replicasPer`) redis-server processes
 * with --cluster-enabled, each on a free port with its bus on another free port (cluster-port:
 * the default port+10000 may be taken or past 65535), joined by `redis-cli --cluster create`.
 * No persistence. Resolves once every node reports cluster_state:ok. A short node timeout keeps
 * a failover within a few seconds.
 */
export async function startRedisCluster(opts: RedisClusterOptions = {}): Promise<RedisCluster> {
  requireBinaries();
  const ask = (port: number, ...args: string[]) => askRedis(port, opts.password, ...args);
  /** CLUSTER SLOTS as [from, to, primary port]. */
  const slotRanges = async (port: number): Promise<[number, number, number][] | null> => {
    const slots = (await ask(port, "CLUSTER", "SLOTS")) as [number, number, [string, number, ...unknown[]], ...unknown[]][] | null;
    return slots ? slots.map(([from, to, primary]) => [from, to, Number(primary[1])]) : null;
  };
  const dir = mkdtempSync(join(tmpdir(), "rr-cluster-"));
  const servers = new Map<number, ChildProcess>();
  const busPorts = new Map<number, number>();
  const count = (opts.primaries ?? 3) * (1 + (opts.replicasPer ?? 1));

  const launch = async (port: number): Promise<number> => {
    const bus = busPorts.get(port) ?? (await freePort());
    busPorts.set(port, bus);
    const args = [
      "--port", String(port), "--cluster-port", String(bus), "--bind", HOST, "--cluster-enabled", "yes",
      "--cluster-config-file", join(dir, `nodes-${port}.conf`), "--cluster-node-timeout", String(opts.nodeTimeoutMs ?? 2_000),
      "--save", "", "--appendonly", "no", "--daemonize", "no", "--dir", dir, "--dbfilename", `dump-${port}.rdb`,
      "--repl-diskless-sync-delay", "0",
      ...(opts.password ? ["--requirepass", opts.password, "--masterauth", opts.password] : []),
    ]; // prettier-ignore
    const child = spawn("redis-server", args, { stdio: "ignore" });
    servers.set(port, child);
    await until(`redis-server on ${port}`, 10_000, async () => {
      if (child.exitCode !== null) {
        servers.delete(port);
        busPorts.delete(port);
        throw new PortTaken(`exited with ${child.exitCode} on port ${port}`);
      }
      return (await ask(port, "PING")) === "PONG";
    });
    return port;
  };

  const stop = async () => {
    await Promise.all(
      [...servers.values()].map(async (child) => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
        child.kill("SIGKILL");
        await exited;
      }),
    );
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    const ports: number[] = [];
    for (let i = 0; i < count; i++) ports.push(await onFreePort(launch));
    const created = spawnSync("redis-cli", ["--cluster", "create", ...ports.map((p) => `${HOST}:${p}`), "--cluster-replicas", String(opts.replicasPer ?? 1), "--cluster-yes", ...(opts.password ? ["-a", opts.password, "--no-auth-warning"] : [])], { encoding: "utf8", timeout: 60_000 });
    if (created.status !== 0) throw new Error(`redis-cli --cluster create failed: ${created.stdout}${created.stderr}`);
    await until("every node to report cluster_state:ok", 30_000, async () => {
      for (const p of ports) if (!/cluster_state:ok/.test(String((await ask(p, "CLUSTER", "INFO")) ?? ""))) return false;
      return true;
    });
  } catch (err) {
    await stop();
    throw err;
  }

  const alive = () => [...servers].filter(([, c]) => c.exitCode === null && c.signalCode === null).map(([p]) => p);
  const anyRanges = async () => until("a node to answer CLUSTER SLOTS", 5_000, async () => {
    for (const p of alive()) {
      const r = await slotRanges(p);
      if (r) return r;
    }
    return null;
  }); // prettier-ignore
  const slotOf = async (key: string) => Number(await until("a node to hash a key", 5_000, async () => {
    for (const p of alive()) {
      const s = await ask(p, "CLUSTER", "KEYSLOT", key);
      if (typeof s === "number") return String(s);
    }
    return null;
  })); // prettier-ignore
  const primaryOf = async (key: string) => {
    const slot = await slotOf(key);
    const range = (await anyRanges()).find(([from, to]) => slot >= from && slot <= to);
    if (!range) throw new Error(`redis cluster: no node serves slot ${slot}`);
    return range[2];
  };

  const primaryPorts = async () => [...new Set((await anyRanges()).map(([, , p]) => p))];

  return {
    nodes: [...servers.keys()].map((port) => ({ host: HOST, port })),
    primaryPorts,
    primaryOf,
    async kill(port) {
      const child = servers.get(port);
      if (!child || child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
      child.kill("SIGKILL");
      await exited;
    },
    async rejoin(port) {
      rmSync(join(dir, `dump-${port}.rdb`), { force: true });
      await launch(port);
    },
    async waitForReplicas(timeoutMs = 30_000) {
      const perPrimary = opts.replicasPer ?? 1;
      await until("every primary's replicas to be in sync", timeoutMs, async () => {
        for (const p of await primaryPorts()) {
          const info = String((await ask(p, "INFO", "replication")) ?? "");
          const online = [...info.matchAll(/^slave\d+:ip=[^,]+,port=(\d+),state=online/gm)].map((m) => Number(m[1]));
          if (online.length < perPrimary) return false;
          for (const r of online) {
            const own = String((await ask(r, "INFO", "replication")) ?? "");
            if (!/master_link_status:up/.test(own) || /master_sync_in_progress:1/.test(own)) return false;
          }
        }
        return true;
      });
    },
    async waitForOk(timeoutMs = 30_000) {
      return until("the cluster to be ok with every slot on a live primary", timeoutMs, async () => {
        const up = new Set(alive());
        for (const p of up) if (!/cluster_state:ok/.test(String((await ask(p, "CLUSTER", "INFO")) ?? ""))) return null;
        const ranges = await anyRanges();
        const primaries = [...new Set(ranges.map(([, , p]) => p))];
        return primaries.every((p) => up.has(p)) && ranges.reduce((n, [from, to]) => n + to - from + 1, 0) === 16_384 ? primaries : null;
      });
    },
    async waitForNewPrimary(key, oldPort, timeoutMs = 30_000) {
      return until("a replica to be promoted", timeoutMs, async () => {
        const port = await primaryOf(key).catch(() => null);
        if (!port || port === oldPort) return null;
        const role = (await ask(port, "ROLE")) as unknown[] | null;
        return role?.[0] === "master" ? port : null;
      });
    },
    stop,
  };
}
