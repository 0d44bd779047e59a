import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { ConfigError, loadConfigFile, type RouterConfig } from "./config/load.js";
import { watchConfig } from "./config/watch.js";
import { createLogger, LOG_FORMATS, type LogFormat, type Logger } from "./ops/log.js";
import { startRouter } from "./server.js";
import { tuneGc } from "./runtime/gc.js";
import { probeEndpoints } from "./upstream/config-probe.js";
import { probeMcpServers } from "./tools/mcp/index.js";
import { probeStore } from "./store/index.js";
import { probeEmbeddingModel } from "./files/probe.js";

export const USAGE = `responses-router [check [--probe]] [--config FILE] [--port N] [--host H] [--log-format pretty|json]

  check              validate the config file, print every problem with its path, exit 1 if any
  check --probe      also contact every endpoint (GET {url}/models): reachability, credentials,
                     a url without /v1, upstream models a chat endpoint does not list; and list
                     the tools of every MCP server in tools.mcp.servers; embed a word with
                     tools.file_search.embedding_model at each of its endpoints; and the Redis
                     store (a cluster: cluster_state and nodes reachable); exit 1 on any problem
  --config FILE      router config (default: $ROUTER_CONFIG, ./router.yaml, else ./router.example.yaml)
  --port N           listen port (default: server.port, or $PORT)
  --host H           listen address (default: server.host)
  --log-format F     pretty (one readable line per event) or json (default: pretty on a terminal, else json)
  -h, --help         this text`;

export interface CliHooks {
  /** Runs once the router listens, with its logger (the demo announces its backend here). */
  onListening?(log: Logger, url: string): void;
}

function configPath(explicit: string | undefined): string {
  if (explicit) return resolve(explicit);
  if (process.env.ROUTER_CONFIG) return resolve(process.env.ROUTER_CONFIG);
  return resolve(existsSync("router.yaml") ? "router.yaml" : "router.example.yaml");
}

/** The command line: resolves with the process exit code once the router stopped (or at once for check/usage errors). */
export async function runCli(args: string[], hooks: CliHooks = {}): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      options: {
        config: { type: "string", short: "c" },
        port: { type: "string", short: "p" },
        host: { type: "string" },
        "log-format": { type: "string" },
        check: { type: "boolean" },
        probe: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (err) {
    // Unknown flag, missing value: say which, show the usage, no stack.
    console.error(`${(err as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const path = configPath(values.config);
  if (values.check || positionals[0] === "check") return check(path, values.probe === true);
  if (positionals.length > 0) {
    console.error(`unknown command: ${positionals.join(" ")}\n\n${USAGE}`);
    return 2;
  }
  const format = values["log-format"] ?? (process.stdout.isTTY ? "pretty" : "json");
  if (!(LOG_FORMATS as readonly string[]).includes(format)) {
    console.error(`invalid --log-format ${format} (pretty or json)\n\n${USAGE}`);
    return 2;
  }
  const portArg = values.port ?? process.env.PORT;
  const port = portArg !== undefined ? Number(portArg) : undefined;
  if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535)) {
    console.error(`invalid --port ${portArg}\n\n${USAGE}`);
    return 2;
  }

  const config = loadOrReport(path);
  if (!config) return 1;
  const log = createLogger(config.logging.level, undefined, format as LogFormat);

  // Process-wide, before the heap grows: the young-generation GC for the cores this process has, no allocation-site pretenuring.
  const gc = tuneGc();
  let router;
  try {
    router = await startRouter(config, { logger: log, port, host: values.host, checkStore: true });
  } catch (err) {
    log.fatal({ err: (err as Error).message }, "router failed to start");
    return 1;
  }
  const { runtime } = router;
  log.info({ url: router.url, config: path, store: runtime.stores.kind, models: Object.keys(config.models), cores: gc.cores, parallelScavenge: gc.parallelScavenge, pretenuring: gc.pretenuring }, `responses-router listening on ${router.url}`);
  hooks.onListening?.(log, router.url);
  if (!config.compaction.key) log.warn("compaction.key is not set: compaction items are sealed with a random key of this process (they do not open on other instances or after a restart)");

  const watcher = watchConfig(path, {
    onReload(next) {
      if (JSON.stringify(next.storage) !== JSON.stringify(runtime.config.storage)) log.warn("storage settings changed: they take effect on restart");
      runtime.applyConfig(next);
      runtime.lastReload = { at: Date.now(), ok: true, errors: [] };
      runtime.metrics.configReloads.inc({ result: "ok" });
      runtime.metrics.configLastReload.set(Date.now() / 1000);
      log.info({ config: path, models: Object.keys(next.models), logLevel: next.logging.level }, "config reloaded");
      // The tracer provider and its exporter are built once, at start.
      if (JSON.stringify(next.tracing) !== JSON.stringify(config.tracing)) log.warn("tracing settings changed: they take effect on restart");
    },
    onError(err) {
      runtime.metrics.configReloads.inc({ result: "error" });
      runtime.lastReload = { at: Date.now(), ok: false, errors: err.issues.map((i) => `${i.path || "(root)"}: ${i.message}`) };
      log.error({ config: path, issues: err.issues }, "config reload rejected; keeping the running config");
    },
  });

  return new Promise<number>((done) => {
    const shutdown = (signal: string) => {
      log.info({ signal, deadlineMs: runtime.config.server.shutdown_timeout }, "shutting down: draining in-flight requests");
      watcher.close();
      router.close().then(
        () => {
          log.info("shutdown complete");
          done(0);
        },
        (err) => {
          log.error({ err: (err as Error).message }, "shutdown failed");
          done(1);
        },
      );
    };
    process.once("SIGTERM", () => shutdown("SIGTERM"));
    process.once("SIGINT", () => shutdown("SIGINT"));
  });
}

async function check(path: string, probe: boolean): Promise<number> {
  const cfg = loadOrReport(path);
  if (!cfg) return 1;
  console.log(`${path}: OK (${cfg.endpoints.length} endpoints, ${Object.keys(cfg.models).length} models)`);
  if (!probe) return 0;
  const [results, servers, embeddings, store] = await Promise.all([probeEndpoints(cfg), probeMcpServers(cfg), probeEmbeddingModel(cfg), probeStore(cfg.storage)]);
  const width = Math.max(5, ...results.map((r) => r.endpoint.length), ...servers.map((s) => s.server.length + 4));
  for (const r of results) console.log(`${r.ok ? "ok  " : "FAIL"} ${r.endpoint.padEnd(width)}  ${r.detail}`);
  for (const s of servers) console.log(`${s.ok ? "ok  " : "FAIL"} ${`mcp ${s.server}`.padEnd(width)}  ${s.detail}`);
  for (const e of embeddings) console.log(`${e.ok ? "ok  " : "FAIL"} ${`embedding ${e.model} @ ${e.endpoint}`.padEnd(width)}  ${e.detail}`);
  if (store) console.log(`${store.ok ? "ok  " : "FAIL"} ${"store".padEnd(width)}  ${store.detail}`);
  const embeddingFailed = embeddings.filter((e) => !e.ok).length;
  if (embeddings.length) console.log(embeddingFailed === 0 ? "the file_search embedding model answered" : `the file_search embedding model failed at ${embeddingFailed} of ${embeddings.length} endpoints`);
  const failed = results.filter((r) => !r.ok).length;
  const mcpFailed = servers.filter((s) => !s.ok).length;
  console.log(failed === 0 ? `every endpoint answered` : `${failed} of ${results.length} endpoints have problems`);
  if (servers.length) console.log(mcpFailed === 0 ? `every MCP server listed its tools` : `${mcpFailed} of ${servers.length} MCP servers have problems`);
  return failed === 0 && mcpFailed === 0 && embeddingFailed === 0 && store?.ok !== false ? 0 : 1;
}

/** The config, or null after printing every problem with its path. */
function loadOrReport(path: string): RouterConfig | null {
  try {
    return loadConfigFile(path);
  } catch (err) {
    console.error(err instanceof ConfigError ? err.message : String(err));
    return null;
  }
}
