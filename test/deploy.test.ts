/**
 * Static checks of deploy/: no Docker engine or cluster here, so we parse every manifest
 * and check the parts that must agree with the code (metric names, config schema, CLI,
 * health routes) and with each other (labels, ports, mounted files).
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { parseConfigText } from "../src/config/load.js";
import { createMetrics, metricNames } from "../src/ops/metrics.js";
import { promtool, skipPromtool } from "./helpers/promtool.js";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const deploy = join(root, "deploy");
const read = (p: string) => readFileSync(join(deploy, p), "utf8");

/** Every document of a YAML file; throws on any syntax error. Merge keys (<<) as compose allows. */
function yamlDocs(path: string): any[] {
  const docs = parseAllDocuments(read(path), { merge: true });
  const list = Array.isArray(docs) ? docs : [docs];
  for (const d of list) {
    if (d.errors.length > 0) throw new Error(`${path}: ${d.errors.map((e) => e.message).join("; ")}`);
  }
  return list.map((d) => d.toJS()).filter((d) => d !== null && d !== undefined);
}
const yamlDoc = (path: string) => yamlDocs(path)[0];

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? walk(p) : [p];
  });
}

const FAKE_ENV = {
  REDIS_URL: "redis://:0123abcd@redis:6379",
  ROUTER_API_KEY: "test-router-key",
  OPENAI_API_KEY: "sk-test",
};

const METRIC_REF = /\bresponses_router_[a-zA-Z0-9_]+/g;
const known = new Set(metricNames(createMetrics()));
const refs = (exprs: string[]) => [...new Set(exprs.flatMap((e) => e.match(METRIC_REF) ?? []))];

describe("deploy/ files parse", () => {
  const files = walk(deploy).map((p) => relative(deploy, p));

  it.each(files.filter((f) => /\.ya?ml$/.test(f)))("%s is valid YAML", (f) => {
    expect(yamlDocs(f).length).toBeGreaterThan(0);
  });

  it.each(files.filter((f) => f.endsWith(".json")))("%s is valid JSON", (f) => {
    expect(() => JSON.parse(read(f))).not.toThrow();
  });
});

describe("router.yaml examples validate with the real config loader", () => {
  it("deploy/config/router.yaml (compose) uses ${REDIS_URL} and listens on all interfaces", () => {
    const text = read("config/router.yaml");
    expect(text).toMatch(/redis_url:\s*\$\{REDIS_URL\}/);
    const cfg = parseConfigText(text, "deploy/config/router.yaml", FAKE_ENV);
    expect(cfg.storage.redis_url).toBe(FAKE_ENV.REDIS_URL);
    expect(cfg.server.host).toBe("0.0.0.0");
    expect(cfg.server.port).toBe(8080);
    expect(cfg.server.public_health).toBe(true);
  });

  it("fails loudly without REDIS_URL, so replicas never silently use separate memory stores", () => {
    expect(() => parseConfigText(read("config/router.yaml"), "deploy/config/router.yaml", { ...FAKE_ENV, REDIS_URL: undefined })).toThrow(/REDIS_URL/);
  });
});

describe("Dockerfile", () => {
  // Join continuation lines first so each instruction is one line.
  const text = read("Dockerfile").replace(/\\\n\s*/g, " ");
  const lines = text.split("\n").filter((l) => l.trim() && !l.trim().startsWith("#"));
  const args = new Map<string, string>();
  for (const l of lines) {
    const m = /^ARG\s+(\w+)=(\S+)/.exec(l);
    if (m) args.set(m[1], m[2]);
  }
  const expand = (s: string) => s.replace(/\$\{?(\w+)\}?/g, (_m, n: string) => args.get(n) ?? "");
  const stages = lines.reduce<string[][]>((acc, l) => {
    if (/^FROM\s/i.test(l)) acc.push([]);
    acc.at(-1)?.push(l);
    return acc;
  }, []);
  const runtime = stages.at(-1) ?? [];

  it("is multi-stage on Node 24", () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    for (const s of stages) expect(expand(s[0])).toMatch(/^FROM\s+node:24(-alpine|-slim)?\b/);
    expect(stages[0].join("\n")).toMatch(/npm ci\b/);
    expect(stages[0].join("\n")).toMatch(/npm run build/);
    expect(runtime.join("\n")).toMatch(/npm ci --omit=dev/);
    // npm run build bundles the console too: its source and script are in the build stage.
    expect(stages[0]).toContain("COPY ui ./ui");
    expect(stages[0]).toContain("COPY scripts/build-ui.mjs ./scripts/build-ui.mjs");
  });

  it("runs dist/main.js like package.json's start script, with the mounted config", () => {
    const cmdLine = runtime.filter((l) => /^CMD\s/.test(l)).at(-1);
    expect(cmdLine).toBeDefined();
    const cmd = JSON.parse(cmdLine!.replace(/^CMD\s+/, "")) as string[];
    const start = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts.start;
    // "exec node dist/main.js": exec so npm's SIGTERM reaches node, not a shell that ignores it.
    const [startBin, startFile] = start.replace(/^exec\s+/, "").split(/\s+/);
    expect(cmd[0]).toBe(startBin);
    expect(cmd[1]).toBe(startFile);
    expect(cmd[1]).toBe("dist/main.js");
    expect(cmd.slice(2)).toEqual(["--config", "/etc/responses-router/router.yaml"]);
  });

  it("runs as a non-root user, exposes 8080 and health-checks /healthz without curl", () => {
    const user = runtime.filter((l) => /^USER\s/.test(l)).at(-1);
    expect(user).toBeDefined();
    expect(user!.replace(/^USER\s+/, "").trim()).not.toMatch(/^(root|0)(:|$)/);
    expect(runtime).toContain("EXPOSE 8080");
    const health = runtime.find((l) => l.startsWith("HEALTHCHECK")) ?? "";
    expect(health).toMatch(/\/healthz/);
    expect(health).toMatch(/fetch\(/);
    expect(health).not.toMatch(/curl|wget/);
  });

  it("has a .dockerignore that keeps node_modules, dist and .git out of the context", () => {
    const ignore = readFileSync(join(root, ".dockerignore"), "utf8").split("\n").map((l) => l.trim());
    for (const p of ["node_modules", "dist", ".git"]) expect(ignore).toContain(p);
    for (const p of ["src", "ui", "scripts", "package.json", "package-lock.json", "tsconfig.json", "tsconfig.build.json"]) expect(ignore).not.toContain(p);
  });
});

describe("compose.sentinel.yaml (Redis behind Sentinel)", () => {
  const over = yamlDoc("compose.sentinel.yaml") as { services: Record<string, any> };
  const base = (yamlDoc("compose.yaml") as { services: Record<string, any> }).services;
  const cfg = parseConfigText(read("config-sentinel/router.yaml"), "config-sentinel/router.yaml", { ...FAKE_ENV, REDIS_PASSWORD: "0123abcd" });

  it("adds a replica and three sentinels monitoring compose's Redis, all with the password from the environment", () => {
    const sentinels = Object.keys(over.services).filter((s) => s.startsWith("sentinel-"));
    expect(sentinels).toHaveLength(3);
    for (const s of sentinels) {
      const cmd = over.services[s].command.join(" ");
      expect(cmd).toMatch(/sentinel monitor main redis 6379 2/);
      expect(cmd).toContain("$$REDIS_PASSWORD");
    }
    expect(over.services["redis-replica"].command.join(" ")).toMatch(/--replicaof redis 6379/);
    for (const s of ["redis", "redis-replica"]) expect(over.services[s].command.join(" ")).toMatch(/--masterauth "\$\$REDIS_PASSWORD"/);
    expect(base.redis).toBeDefined();
  });

  it("points both routers at config-sentinel, whose storage names exactly those sentinels and waits for a replica", () => {
    for (const r of ["router-1", "router-2"]) {
      expect(over.services[r].volumes).toEqual(["./config-sentinel:/etc/responses-router:ro"]);
      expect(base[r]).toBeDefined();
    }
    const names = Object.keys(over.services).filter((s) => s.startsWith("sentinel-"));
    expect(cfg.storage.redis?.sentinels).toEqual(names.map((host) => ({ host, port: 26379 })));
    expect(cfg.storage.redis?.name).toBe("main");
    expect(cfg.storage.redis?.password).toBe("0123abcd");
    expect(cfg.storage.durability).toBe("replica");
    expect(cfg.storage.redis_url).toBe("");
    expect(read("config-sentinel/router.yaml")).toMatch(/password: \$\{REDIS_PASSWORD\}/);
  });
});

describe("compose.yaml", () => {
  const compose = yamlDoc("compose.yaml") as { services: Record<string, any> };
  const services = compose.services;
  const routers = Object.entries(services).filter(([, s]) => s.build?.dockerfile === "deploy/Dockerfile");

  it("runs two router replicas plus redis, prometheus and grafana behind a load balancer", () => {
    const replicas = routers.reduce((n, [, s]) => n + (s.deploy?.replicas ?? 1), 0);
    expect(replicas).toBeGreaterThanOrEqual(2);
    for (const name of ["redis", "prometheus", "grafana"]) expect(services[name]).toBeDefined();
    const lb = Object.values(services).find((s) => /nginx|haproxy/.test(String(s.image)));
    expect(lb?.ports).toContain("8080:8080");
  });

  it("gives every replica the shared Redis, with its password, and the same read-only config directory", () => {
    for (const [, s] of routers) {
      expect(s.environment.REDIS_URL).toBe("redis://:${REDIS_PASSWORD:?set REDIS_PASSWORD (see deploy/README.md)}@redis:6379");
      // The directory the CMD's --config file is in, never the file alone: an editor's
      // write-and-rename would leave a file bind mount on the old inode (no hot reload).
      expect(s.volumes).toContain("./config:/etc/responses-router:ro");
      expect((s.volumes as string[]).filter((v) => /\.ya?ml:/.test(v))).toEqual([]);
    }
    expect(existsSync(join(deploy, "config/router.yaml"))).toBe(true);
  });

  it("Redis requires the password the routers use and is not published", () => {
    const redis = services.redis;
    expect(redis.ports).toBeUndefined();
    expect(redis.environment.REDIS_PASSWORD).toMatch(/^\$\{REDIS_PASSWORD:\?/);
    expect(redis.environment.REDISCLI_AUTH).toBe(redis.environment.REDIS_PASSWORD);
    const cmd = (redis.command as string[]).join(" ");
    // $$ is compose's escape: the shell in the container expands it, the password stays out of the args compose shows.
    expect(cmd).toContain('--requirepass "$$REDIS_PASSWORD"');
    expect(redis.healthcheck.test).toEqual(["CMD", "redis-cli", "ping"]);
  });

  it("bind-mounts only files that exist", () => {
    for (const s of Object.values(services)) {
      for (const v of (s.volumes ?? []) as string[]) {
        if (!v.startsWith(".")) continue;
        expect(existsSync(join(deploy, v.split(":")[0])), v).toBe(true);
      }
    }
  });

  it("points nginx and Prometheus at exactly the router services", () => {
    const names = routers.map(([n]) => `${n}:8080`).sort();
    const upstreams = [...read("nginx/nginx.conf").matchAll(/^\s*server\s+([\w.-]+:\d+)/gm)].map((m) => m[1]).sort();
    expect(upstreams).toEqual(names);
    const prom = yamlDoc("prometheus/prometheus.yml") as any;
    const job = prom.scrape_configs.find((j: any) => j.job_name === "responses-router");
    expect([...job.static_configs[0].targets].sort()).toEqual(names);
    expect(prom.rule_files).toContain("/etc/prometheus/alerts.yml");
  });
});

describe("alert rules and dashboard only use metrics that exist", () => {
  const rules = (yamlDoc("prometheus/alerts.yml") as any).groups.flatMap((g: any) => g.rules) as { alert: string; expr: string }[];
  const dashboard = JSON.parse(read("grafana/dashboards/responses-router.json"));
  const panels = (dashboard.panels as any[]).flatMap((p) => [p, ...(p.panels ?? [])]);
  const panelExprs = panels.flatMap((p) => (p.targets ?? []).map((t: any) => String(t.expr)));
  const varExprs = (dashboard.templating?.list ?? []).map((v: any) => String(v.definition ?? v.query?.query ?? v.query ?? ""));

  it("alert expressions reference known metrics", () => {
    const used = refs(rules.map((r) => r.expr));
    expect(used.length).toBeGreaterThan(5);
    expect(used.filter((n) => !known.has(n))).toEqual([]);
  });

  it("has the required alerts", () => {
    const byMetric = (re: RegExp) => rules.filter((r) => re.test(r.expr));
    expect(byMetric(/responses_router_endpoint_up\b[^\n]*==\s*0/)).not.toHaveLength(0);
    expect(rules.find((r) => /responses_router_endpoint_up/.test(r.expr)) as any).toMatchObject({ for: "2m" });
    expect(byMetric(/status=~"5\.\."/)).not.toHaveLength(0);
    expect(byMetric(/histogram_quantile\(0\.99,[\s\S]*responses_router_request_duration_seconds_bucket/)).not.toHaveLength(0);
    expect(byMetric(/responses_router_background_jobs\{status="in_progress"\}[\s\S]*responses_router_background_jobs_finished_total\[15m\]/)).not.toHaveLength(0);
    expect(byMetric(/responses_router_redis_up\s*==\s*0/)).not.toHaveLength(0);
    expect(byMetric(/responses_router_config_reloads_total\{result="error"\}/)).not.toHaveLength(0);
    for (const r of rules) expect(r.alert).toMatch(/^[A-Z][A-Za-z0-9]+$/);
  });

  it("name the configured endpoint by the label upstream, never endpoint (the Prometheus Operator's target label)", () => {
    const texts = [...rules.flatMap((r: any) => [r.expr, ...Object.values(r.annotations ?? {})]), ...panelExprs, ...varExprs];
    texts.push(...panels.flatMap((p) => (p.targets ?? []).map((t: any) => String(t.legendFormat ?? ""))));
    const endpointLabel = /\bendpoint\s*(=~|!~|=|!=)|(by|without)\s*\([^)]*\bendpoint\b|\$labels\.endpoint\b|\{\{\s*endpoint\s*\}\}|\$endpoint\b|,\s*endpoint\)/;
    expect(texts.filter((t) => endpointLabel.test(String(t)))).toEqual([]);
    expect(rules.find((r) => /responses_router_endpoint_up/.test(r.expr))?.expr).toMatch(/by \(upstream\)/);
    expect(dashboard.templating.list.map((v: any) => v.name)).toContain("upstream");
  });

  it("dashboard expressions and variables reference known metrics", () => {
    const used = refs([...panelExprs, ...varExprs]);
    expect(used.filter((n) => !known.has(n))).toEqual([]);
  });

  it("dashboard covers traffic, latency, endpoints, tokens, cache, jobs, redis and config", () => {
    const used = new Set(refs(panelExprs));
    for (const n of [
      "responses_router_requests_total",
      "responses_router_request_duration_seconds_bucket",
      "responses_router_time_to_first_token_seconds_bucket",
      "responses_router_overhead_seconds_bucket",
      "responses_router_endpoint_in_flight",
      "responses_router_endpoint_max_concurrency",
      "responses_router_endpoint_state",
      "responses_router_tokens_total",
      "responses_router_upstream_retries_total",
      "responses_router_failovers_total",
      "responses_router_cache_requests_total",
      "responses_router_background_jobs",
      "responses_router_background_jobs_finished_total",
      "responses_router_redis_up",
      "responses_router_config_reloads_total",
    ]) {
      expect(used.has(n), n).toBe(true);
    }
  });

  it("dashboard panels have unique ids and use the provisioned datasource", () => {
    const ids = panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    const ds = (yamlDoc("grafana/provisioning/datasources/prometheus.yaml") as any).datasources[0];
    const dsVar = dashboard.templating.list.find((v: any) => v.type === "datasource");
    expect(dsVar.current.value).toBe(ds.uid);
    const provider = (yamlDoc("grafana/provisioning/dashboards/dashboards.yaml") as any).providers[0];
    expect(services().grafana.volumes).toContain(`./grafana/dashboards:${provider.options.path}:ro`);
  });

  it.skipIf(skipPromtool)("promtool accepts the alert rules and every dashboard expression", () => {
    promtool(["check", "rules", join(deploy, "prometheus/alerts.yml")]);
    const dir = mkdtempSync(join(tmpdir(), "rr-dash-"));
    const asRules = panelExprs.map((e, i) => ({
      record: `dashboard:expr${i}`,
      expr: e.replaceAll("$__rate_interval", "5m").replaceAll("$model", ".*").replaceAll("$upstream", ".*"),
    }));
    writeFileSync(join(dir, "dashboard-rules.json"), JSON.stringify({ groups: [{ name: "dashboard", rules: asRules }] }));
    promtool(["check", "rules", join(dir, "dashboard-rules.json")]);
  });

  it.skipIf(skipPromtool)("promtool accepts prometheus.yml (with its rule file where compose mounts it)", () => {
    const dir = mkdtempSync(join(tmpdir(), "rr-prom-"));
    const text = read("prometheus/prometheus.yml");
    expect(text).toContain("/etc/prometheus/alerts.yml");
    writeFileSync(join(dir, "prometheus.yml"), text.replace("/etc/prometheus/alerts.yml", join(deploy, "prometheus/alerts.yml")));
    promtool(["check", "config", join(dir, "prometheus.yml")]);
  });

  it.skipIf(skipPromtool)("the alert rules' unit tests pass (any job name, upstream label, no Redis alert without Redis)", () => {
    expect(promtool(["test", "rules", join(deploy, "prometheus/alerts.test.yml")])).toContain("SUCCESS");
  });

  it("RouterReplicaDown does not depend on a job name", () => {
    const rule = rules.find((r) => r.alert === "RouterReplicaDown")!;
    expect(rule.expr).toMatch(/\bup\b/);
    expect(rule.expr).not.toMatch(/job\s*=/);
  });

  it("process panels use Node's standard metric names, which the router exports", () => {
    const std = [...new Set(panelExprs.flatMap((e) => e.match(/\b(process|nodejs)_[a-z0-9_]+/g) ?? []))];
    expect(std.length).toBeGreaterThanOrEqual(3);
    expect(std.filter((n) => !known.has(n))).toEqual([]);
  });

  function services() {
    return (yamlDoc("compose.yaml") as { services: Record<string, any> }).services;
  }
});

describe("k8s manifests", () => {
  const kustomization = yamlDoc("k8s/kustomization.yaml") as { resources: string[] };
  const objects = kustomization.resources.flatMap((r) => yamlDocs(join("k8s", r))) as any[];
  const find = (kind: string, name: string) => objects.find((o) => o.kind === kind && o.metadata?.name === name);
  const deployment = find("Deployment", "responses-router");
  const pod = deployment?.spec.template;
  const container = pod?.spec.containers[0];
  const configMap = find("ConfigMap", "responses-router-config");
  const subset = (sel: Record<string, string>, labels: Record<string, string>) =>
    Object.keys(sel).length > 0 && Object.entries(sel).every(([k, v]) => labels[k] === v);

  it("kustomization lists files that exist, and no Secret with placeholder values", () => {
    for (const r of kustomization.resources) expect(existsSync(join(deploy, "k8s", r)), r).toBe(true);
    expect(objects.filter((o) => o.kind === "Secret")).toEqual([]);
  });

  it("Deployment: >= 2 replicas, probes on /readyz and /healthz, non-root, resources, scrape annotations", () => {
    expect(deployment).toBeDefined();
    expect(deployment.spec.replicas).toBeGreaterThanOrEqual(2);
    expect(subset(deployment.spec.selector.matchLabels, pod.metadata.labels)).toBe(true);
    expect(container.readinessProbe.httpGet.path).toBe("/readyz");
    expect(container.livenessProbe.httpGet.path).toBe("/healthz");
    expect(pod.spec.securityContext.runAsNonRoot).toBe(true);
    expect(pod.spec.securityContext.runAsUser).not.toBe(0);
    expect(container.securityContext.allowPrivilegeEscalation).toBe(false);
    expect(container.resources.requests.cpu).toBeDefined();
    expect(container.resources.requests.memory).toBeDefined();
    expect(container.resources.limits.memory).toBeDefined();
    expect(pod.metadata.annotations["prometheus.io/scrape"]).toBe("true");
    expect(pod.metadata.annotations["prometheus.io/port"]).toBe("8080");
    expect(pod.metadata.annotations["prometheus.io/path"]).toBe("/metrics");
  });

  it("ConfigMap's router.yaml validates with the real loader and matches the pod's port", () => {
    const cfg = parseConfigText(configMap.data["router.yaml"], "k8s/configmap.yaml", FAKE_ENV);
    expect(cfg.server.host).toBe("0.0.0.0");
    expect(container.ports.find((p: any) => p.name === "http").containerPort).toBe(cfg.server.port);
    expect(configMap.data["router.yaml"]).toMatch(/redis_url:\s*\$\{REDIS_URL\}/);
    const names = container.env.map((e: any) => e.name);
    expect(container.env.find((e: any) => e.name === "REDIS_URL").value).toBe("redis://:$(REDIS_PASSWORD)@redis:6379");
    // Kubernetes expands $(VAR) only from variables defined earlier in the list.
    expect(names.indexOf("REDIS_PASSWORD")).toBeGreaterThanOrEqual(0);
    expect(names.indexOf("REDIS_PASSWORD")).toBeLessThan(names.indexOf("REDIS_URL"));
    expect(container.env.find((e: any) => e.name === "REDIS_PASSWORD").valueFrom.secretKeyRef).toEqual({ name: "responses-router-secrets", key: "REDIS_PASSWORD" });
  });

  it("mounts the ConfigMap as a directory (no subPath) where the CMD expects it, so reloads reach the pod", () => {
    const mount = container.volumeMounts.find((m: any) => m.mountPath === "/etc/responses-router");
    expect(mount).toBeDefined();
    expect(mount.subPath).toBeUndefined();
    const vol = pod.spec.volumes.find((v: any) => v.name === mount.name);
    expect(vol.configMap.name).toBe(configMap.metadata.name);
  });

  it("gives the router longer than its shutdown and background drain deadlines (plus preStop) to drain", () => {
    const cfg = parseConfigText(configMap.data["router.yaml"], "k8s/configmap.yaml", FAKE_ENV);
    const preStop = Number(container.lifecycle?.preStop?.exec?.command?.[1] ?? 0);
    expect(cfg.background.drain_timeout).toBeGreaterThan(cfg.server.shutdown_timeout);
    expect(pod.spec.terminationGracePeriodSeconds).toBeGreaterThan(cfg.background.drain_timeout / 1000 + preStop);
  });

  it("PDB (minAvailable 1) and Service select the Deployment's pods", () => {
    const pdb = objects.find((o) => o.kind === "PodDisruptionBudget");
    expect(pdb.spec.minAvailable).toBe(1);
    expect(pdb.spec.selector.matchLabels).toEqual(deployment.spec.selector.matchLabels);
    expect(subset(pdb.spec.selector.matchLabels, pod.metadata.labels)).toBe(true);
    const svc = find("Service", "responses-router");
    expect(subset(svc.spec.selector, pod.metadata.labels)).toBe(true);
    expect(svc.spec.ports[0].targetPort).toBe("http");
  });

  it("ships Redis (Deployment + Service named as in REDIS_URL)", () => {
    const redis = find("Deployment", "redis");
    const svc = find("Service", "redis");
    expect(redis).toBeDefined();
    expect(svc.spec.ports[0].port).toBe(6379);
    expect(subset(svc.spec.selector, redis.spec.template.metadata.labels)).toBe(true);
  });

  it("Redis wants the password from the Secret, and its probe authenticates", () => {
    const redis = find("Deployment", "redis").spec.template.spec.containers[0];
    const args = redis.args as string[];
    expect(args[args.indexOf("--requirepass") + 1]).toBe("$(REDIS_PASSWORD)");
    const ref = (name: string) => redis.env.find((e: any) => e.name === name)?.valueFrom?.secretKeyRef;
    expect(ref("REDIS_PASSWORD")).toEqual({ name: "responses-router-secrets", key: "REDIS_PASSWORD" });
    expect(ref("REDISCLI_AUTH")).toEqual({ name: "responses-router-secrets", key: "REDIS_PASSWORD" });
    expect(redis.readinessProbe.exec.command[0]).toBe("redis-cli");
  });

  it("a NetworkPolicy admits only the router pods to Redis, on 6379", () => {
    const redisPod = find("Deployment", "redis").spec.template.metadata.labels;
    const policies = objects.filter((o) => o.kind === "NetworkPolicy" && subset(o.spec.podSelector.matchLabels ?? {}, redisPod));
    expect(policies).toHaveLength(1);
    const [np] = policies;
    expect(np.apiVersion).toBe("networking.k8s.io/v1");
    expect(np.spec.policyTypes).toContain("Ingress");
    expect(np.spec.ingress).toHaveLength(1);
    const [rule] = np.spec.ingress;
    expect(rule.ports).toEqual([{ protocol: "TCP", port: 6379 }]);
    expect(rule.from).toHaveLength(1);
    const peer = rule.from[0];
    expect(Object.keys(peer)).toEqual(["podSelector"]); // no namespaceSelector / ipBlock widening it
    expect(subset(peer.podSelector.matchLabels, pod.metadata.labels)).toBe(true);
    expect(subset(peer.podSelector.matchLabels, redisPod)).toBe(false);
  });

  it("secret example holds placeholders only", () => {
    const [secret] = yamlDocs("k8s/secret.example.yaml");
    expect(secret.kind).toBe("Secret");
    for (const v of Object.values(secret.stringData as Record<string, string>)) expect(v).toMatch(/^REPLACE_/);
    const redisContainer = find("Deployment", "redis").spec.template.spec.containers[0];
    const used = [...container.env, ...redisContainer.env].filter((e: any) => e.valueFrom?.secretKeyRef).map((e: any) => e.valueFrom.secretKeyRef);
    for (const ref of used) {
      expect(ref.name).toBe(secret.metadata.name);
      expect(Object.keys(secret.stringData)).toContain(ref.key);
    }
  });
});
