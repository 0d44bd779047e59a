import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { askRedis as ask, onFreePort, pollUntil, PortTaken } from "./redis-server.js";

export interface SentinelGroupOptions {
  /** Replicas beside the primary (default 1). */
  replicas?: number;
  /** Sentinel processes (default 3, quorum 2; 0: a primary and its replicas only). */
  sentinels?: number;
  /**
   * sentinel down-after-milliseconds: how long a silent primary takes to be declared down
   * (default 2000). Keep it above 1 s: a sentinel pings once a second, and at 1 s it can declare
   * a just-promoted primary down before its first ping is answered (a failover nobody caused).
   */
  downAfterMs?: number;
  /** sentinel failover-timeout (default 5000). */
  failoverTimeoutMs?: number;
  /** requirepass/masterauth on the servers and auth-pass in the sentinels. */
  password?: string;
  /** The monitored group's name (default "rrtest"). */
  name?: string;
}

export interface SentinelGroup {
  name: string;
  password?: string;
  sentinels: { host: string; port: number }[];
  /** The ports the group started with (which is primary changes with failovers). */
  initial: { primary: number; replicas: number[] };
  /** The port of the primary the sentinels currently name. */
  primaryPort(): Promise<number>;
  /** SIGKILLs the current primary (no goodbye, like a crashed machine) and returns its port. */
  killPrimary(): Promise<number>;
  /** Waits until the sentinels name a primary other than `oldPort`; returns it. */
  waitForNewPrimary(oldPort: number, timeoutMs?: number): Promise<number>;
  /** Starts a killed server again, as a replica of the current primary (empty, it resyncs). */
  rejoin(port: number): Promise<void>;
  /**
   * Waits until the group is whole: the primary the sentinels name has every replica online,
   * each replica's link is up, and every sentinel knows each replica as promotable (a rejoined
   * one is not until then). Killing the primary before that can promote a replica still
   * resyncing (empty), which loses everything - a second failure, not a failover.
   */
  waitForHealthy(timeoutMs?: number): Promise<void>;
  /**
   * Where a key is, for a failure message: each running server's port, role and whether it
   * holds the key, and the primary the sentinels name.
   */
  describeKey(key: string): Promise<string>;
  /** Every sentinel's events so far (sdown, odown, votes, promotions, switches, aborts), in time order. */
  history(): string;
  /** Stops every process of the group and removes its files. */
  stop(): Promise<void>;
}

const HOST = "127.0.0.1";
const until = <T>(what: string, timeoutMs: number, probe: () => Promise<T | null | undefined | false>) => pollUntil("sentinel group", what, timeoutMs, probe);

function requireBinaries(): void {
  for (const bin of ["redis-server", "redis-sentinel"]) {
    const found = spawnSync(bin, ["--version"], { stdio: "ignore" });
    if (found.error || found.status !== 0) {
      throw new Error(`${bin} is not on PATH. The Sentinel suites need real Redis processes: run scripts/ensure-test-deps.sh (or apt-get install -y redis-server redis-sentinel).`);
    }
  }
}

/** A process that exited before it answered: its port was taken before it could bind it (onFreePort tries another). */
function exitedEarly(child: ChildProcess, port: number): false {
  if (child.exitCode !== null) throw new PortTaken(`exited with ${child.exitCode} on port ${port}`);
  return false;
}

/**
 * A real Redis Sentinel deployment on loopback: one primary, `replicas` replicas (redis-server
 * --replicaof) and `sentinels` redis-sentinel processes (quorum: a majority), every one on a
 * free port, no persistence. Resolves once the sentinels know each other and the replicas, so
 * a failover can happen. Short down-after/failover timeouts keep a failover within seconds.
 */
export async function startSentinelGroup(opts: SentinelGroupOptions = {}): Promise<SentinelGroup> {
  requireBinaries();
  const name = opts.name ?? "rrtest";
  const password = opts.password;
  const dir = mkdtempSync(join(tmpdir(), "rr-sentinel-"));
  const servers = new Map<number, ChildProcess | null>();
  const sentinelProcs: ChildProcess[] = [];
  const auth = password ? ["--requirepass", password, "--masterauth", password] : [];

  // Each server its own RDB file (a replica's full sync writes one), removed before a restart:
  // a rejoining server starts empty, as a crashed machine without persistence does, instead of
  // loading whatever another server last wrote. No sync delay: a rejoined replica syncs at once.
  const rdbFile = (port: number) => `dump-${port}.rdb`;
  const launchServer = async (port: number, replicaOf?: number, priority = 100): Promise<number> => {
    rmSync(join(dir, rdbFile(port)), { force: true });
    const args = ["--port", String(port), "--bind", HOST, "--save", "", "--appendonly", "no", "--daemonize", "no", "--dir", dir, "--dbfilename", rdbFile(port), "--repl-diskless-sync-delay", "0", "--replica-priority", String(priority), ...auth];
    if (replicaOf) args.push("--replicaof", HOST, String(replicaOf));
    const child = spawn("redis-server", args, { stdio: "ignore" });
    servers.set(port, child);
    await until(`redis-server on ${port}`, 10_000, async () => exitedEarly(child, port) || (await ask(port, password, "PING")) === "PONG").catch((err: unknown) => {
      if (err instanceof PortTaken) servers.delete(port); // not the group's: describeKey must not ask whoever holds it
      throw err;
    });
    return port;
  };

  const primary = await onFreePort((port) => launchServer(port));
  const replicaPorts: number[] = [];
  for (let i = 0; i < (opts.replicas ?? 1); i++) replicaPorts.push(await onFreePort((port) => launchServer(port, primary)));
  await until("the replicas to sync", 10_000, async () => {
    const info = String((await ask(primary, password, "INFO", "replication")) ?? "");
    return (/connected_slaves:(\d+)/.exec(info)?.[1] ?? "0") === String(replicaPorts.length) && !/state=(wait_bgsave|send_bulk)/.test(info);
  });

  const count = opts.sentinels ?? 3;
  const quorum = Math.floor(count / 2) + 1;
  const sentinels: { host: string; port: number }[] = [];
  const launchSentinel = async (port: number): Promise<number> => {
    const conf = join(dir, `sentinel-${port}.conf`);
    writeFileSync(
      conf,
      [
        `port ${port}`,
        `bind ${HOST}`,
        "daemonize no",
        `dir ${dir}`,
        `logfile ${join(dir, `sentinel-${port}.log`)}`,
        `sentinel monitor ${name} ${HOST} ${primary} ${quorum}`,
        `sentinel down-after-milliseconds ${name} ${opts.downAfterMs ?? 2_000}`,
        `sentinel failover-timeout ${name} ${opts.failoverTimeoutMs ?? 5_000}`,
        `sentinel parallel-syncs ${name} 1`,
        ...(password ? [`sentinel auth-pass ${name} ${password}`] : []),
        "",
      ].join("\n"),
    );
    const child = spawn("redis-sentinel", [conf], { stdio: "ignore" });
    sentinelProcs.push(child);
    await until(`redis-sentinel on ${port}`, 10_000, async () => exitedEarly(child, port) || (await ask(port, undefined, "PING")) === "PONG");
    return port;
  };
  for (let i = 0; i < count; i++) sentinels.push({ host: HOST, port: await onFreePort(launchSentinel) });
  // A failover needs the sentinels to know each other (hello messages every 2 s) and the replicas.
  for (const s of sentinels) {
    await until(`sentinel ${s.port} to see its peers and replicas`, 20_000, async () => {
      const peers = (await ask(s.port, undefined, "SENTINEL", "sentinels", name)) as unknown[] | null;
      const replicas = (await ask(s.port, undefined, "SENTINEL", "replicas", name)) as unknown[] | null;
      return peers?.length === count - 1 && replicas?.length === replicaPorts.length;
    });
  }

  const primaryPort = async (): Promise<number> =>
    until("a sentinel to name the primary", 5_000, async () => {
      for (const s of sentinels) {
        const addr = (await ask(s.port, undefined, "SENTINEL", "get-master-addr-by-name", name)) as string[] | null;
        if (addr) return Number(addr[1]);
      }
      return null;
    });

  /** Every sentinel's events in time order (the lines that say what the group did, not its set-up). */
  const history = (): string => {
    const lines: string[] = [];
    for (const s of sentinels) {
      const file = join(dir, `sentinel-${s.port}.log`);
      if (!existsSync(file)) continue;
      for (const l of readFileSync(file, "utf8").split("\n")) {
        const m = /^\d+:X (\d+ \w+ \d+ )?([\d:.]+) [#*] ([+-].*)$/.exec(l);
        if (m && !/^\+(monitor|set)\b/.test(m[3])) lines.push(`${m[2]} s${s.port} ${m[3]}`);
      }
    }
    return lines.sort().join(" | ") || "none";
  };

  const kill = async (port: number) => {
    const child = servers.get(port);
    servers.set(port, null);
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    child.kill("SIGKILL");
    await exited;
  };

  return {
    name,
    password,
    sentinels,
    initial: { primary, replicas: replicaPorts },
    primaryPort,
    async killPrimary() {
      const port = await primaryPort();
      await kill(port);
      return port;
    },
    async waitForNewPrimary(oldPort, timeoutMs = 20_000) {
      return until("the sentinels to promote a replica", timeoutMs, async () => {
        // Every sentinel must have switched, and the new primary must accept writes.
        const named = new Set<number>();
        for (const s of sentinels) {
          const addr = (await ask(s.port, undefined, "SENTINEL", "get-master-addr-by-name", name)) as string[] | null;
          if (!addr) return null;
          named.add(Number(addr[1]));
        }
        const [port] = [...named];
        if (named.size !== 1 || port === oldPort) return null;
        const role = (await ask(port, password, "ROLE")) as unknown[] | null;
        return role?.[0] === "master" ? port : null;
      });
    },
    async rejoin(port) {
      const current = await primaryPort();
      // Not promotable (replica-priority 0) until waitForHealthy sees it in sync: the sentinels
      // could otherwise promote it empty, mid-sync, on the next failover, real or not (a loaded
      // machine can miss a 1 s down-after), and its primary would resync from it and lose all.
      await launchServer(port, current, 0);
    },
    async waitForHealthy(timeoutMs = 30_000) {
      const replicas = replicaPorts.length;
      await until("every replica to be in sync", timeoutMs, async () => {
        const port = await primaryPort();
        const info = String((await ask(port, password, "INFO", "replication")) ?? "");
        const online = [...info.matchAll(/^slave\d+:ip=[^,]+,port=(\d+),state=online/gm)].map((m) => Number(m[1]));
        if (online.length !== replicas) return false;
        for (const r of online) {
          const own = String((await ask(r, password, "INFO", "replication")) ?? "");
          if (!/master_link_status:up/.test(own) || /master_sync_in_progress:1/.test(own)) return false;
        }
        // In sync: promotable again, once every sentinel has read so (they ask replicas every 10 s).
        for (const r of online) await ask(r, password, "CONFIG", "SET", "replica-priority", "100");
        for (const s of sentinels) {
          const known = ((await ask(s.port, undefined, "SENTINEL", "replicas", name)) as string[][] | null) ?? [];
          const priorities = known.map((fields) => fields[fields.indexOf("slave-priority") + 1]);
          if (priorities.length < replicas || priorities.includes("0")) return false;
        }
        return true;
      });
    },
    async describeKey(key) {
      const named = await primaryPort().catch(() => null);
      const parts: string[] = [];
      for (const [port, child] of servers) {
        if (!child) {
          parts.push(`${port}: down`);
          continue;
        }
        const role = (await ask(port, password, "ROLE")) as unknown[] | null;
        const exists = await ask(port, password, "EXISTS", key);
        parts.push(`${port}: ${String(role?.[0] ?? "no answer")}, ${exists === 1 ? "has" : "lacks"} the key`);
      }
      return `sentinels name ${named ?? "no primary"}; ${parts.join("; ")}; sentinel events: ${history()}`;
    },
    history,
    async stop() {
      const all = [...sentinelProcs, ...[...servers.values()].filter((c): c is ChildProcess => c !== null)];
      await Promise.all(
        all.map(async (child) => {
          if (child.exitCode !== null || child.signalCode !== null) return;
          const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
          child.kill("SIGKILL");
          await exited;
        }),
      );
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
