import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, parseConfigText } from "../../src/config/load.js";
import { redisTarget } from "../../src/store/index.js";
import { targetOptions } from "../../src/store/redis/client.js";
import { describeTarget } from "../../src/store/redis/target.js";

const minimal = `
endpoints:
  - { name: a, url: "http://127.0.0.1:9/v1", kind: chat }
models:
  m: { endpoints: [a] }
`;

function issuesOf(text: string): string[] {
  try {
    parseConfigText(text, "t.yaml", {});
  } catch (err) {
    if (err instanceof ConfigError) return err.issues.map((i) => `${i.path}: ${i.message}`);
    throw err;
  }
  return [];
}

describe("storage.redis: Sentinel, credentials, TLS", () => {
  it("parses sentinels as host:port strings or objects, and durability with its timeout", () => {
    const cfg = parseConfigText(
      `${minimal}storage:\n  redis: { sentinels: ["10.0.0.1:26379", "[::1]:26380", { host: s3, port: 26381 }], name: main, password: pw, sentinel_password: spw }\n  durability: replica\n  durability_timeout: 250ms\n`,
      "t",
      {},
    );
    expect(cfg.storage.redis?.sentinels).toEqual([
      { host: "10.0.0.1", port: 26379 },
      { host: "::1", port: 26380 },
      { host: "s3", port: 26381 },
    ]);
    expect(cfg.storage.durability).toBe("replica");
    expect(cfg.storage.durability_timeout).toBe(250);
    expect(redisTarget(cfg.storage)).toMatchObject({ name: "main", password: "pw", url: undefined });
    // Defaults: one server by URL (or memory), primary durability.
    const plain = parseConfigText(minimal, "t", {});
    expect(plain.storage.durability).toBe("primary");
    expect(redisTarget(plain.storage)).toBeNull();
  });

  it("rejects a Sentinel set-up without a name, beside a redis_url, or a redis block with nothing to apply to", () => {
    expect(issuesOf(`${minimal}storage:\n  redis: { sentinels: ["h:1"] }\n`)).toEqual([expect.stringMatching(/^storage\.redis\.name: .*name/)]);
    expect(issuesOf(`${minimal}storage:\n  redis_url: redis://h:6379\n  redis: { sentinels: ["h:1"], name: x }\n`)).toEqual([expect.stringMatching(/^storage\.redis_url: set either/)]);
    expect(issuesOf(`${minimal}storage:\n  redis: { password: x }\n`)).toEqual([expect.stringMatching(/^storage\.redis: .*needs sentinels/)]);
    expect(issuesOf(`${minimal}storage:\n  redis: { sentinels: ["nohost"], name: x }\n`)).toEqual([expect.stringMatching(/host:port/)]);
    expect(issuesOf(`${minimal}storage:\n  durability: quorum\n`)).toHaveLength(1);
  });

  it("builds ioredis Sentinel options that follow failovers, with TLS to the servers (and optionally the sentinels)", () => {
    const dir = mkdtempSync(join(tmpdir(), "rr-ca-"));
    const ca = join(dir, "ca.pem");
    writeFileSync(ca, "-----BEGIN CERTIFICATE-----\nfake\n-----END CERTIFICATE-----\n");
    const opts = targetOptions({ sentinels: [{ host: "s1", port: 26379 }], name: "main", password: "pw", sentinel_password: "spw", tls: { ca_file: ca, sentinels: true } });
    expect(opts).toMatchObject({ sentinels: [{ host: "s1", port: 26379 }], name: "main", password: "pw", sentinelPassword: "spw", failoverDetector: true, enableTLSForSentinelMode: true });
    expect(String(opts.tls?.ca)).toContain("BEGIN CERTIFICATE");
    expect(opts.sentinelTLS).toBe(opts.tls);
    // TLS to the servers only, and a plain URL target with a CA.
    expect(targetOptions({ sentinels: [{ host: "s1", port: 1 }], name: "m", tls: {} })).toMatchObject({ enableTLSForSentinelMode: true, tls: {} });
    expect(targetOptions({ sentinels: [{ host: "s1", port: 1 }], name: "m", tls: {} }).sentinelTLS).toBeUndefined();
    expect(targetOptions({ url: "rediss://h:6380", tls: { ca_file: ca, servername: "redis.internal" } }).tls).toMatchObject({ servername: "redis.internal" });
    expect(targetOptions({ url: "redis://h:6379" })).toEqual({});
    rmSync(dir, { recursive: true, force: true });
  });

  it("describes a target for logs and errors without its passwords", () => {
    expect(describeTarget({ url: "redis://user:hunter2@h:6379/0" })).toBe("redis://user:***@h:6379/0");
    const s = describeTarget({ sentinels: [{ host: "s1", port: 26379 }, { host: "s2", port: 26379 }], name: "main", password: "hunter2", sentinel_password: "hunter3" });
    expect(s).toBe('Sentinel group "main" (s1:26379, s2:26379)');
    expect(s).not.toMatch(/hunter/);
  });
});

describe("storage.redis.cluster", () => {
  it("parses startup nodes, keeps credentials and TLS beside them, and names the cluster without its password", () => {
    const cfg = parseConfigText(`${minimal}storage:\n  redis: { cluster: ["10.0.0.1:6379", { host: r2, port: 6380 }], username: app, password: pw }\n  durability: replica\n`, "t", {});
    const target = redisTarget(cfg.storage);
    expect(target).toMatchObject({ cluster: [{ host: "10.0.0.1", port: 6379 }, { host: "r2", port: 6380 }], username: "app", password: "pw", url: undefined });
    expect(describeTarget(target!)).toBe("Redis Cluster (10.0.0.1:6379, r2:6380)");
  });

  it("rejects a cluster beside a redis_url or sentinels", () => {
    expect(issuesOf(`${minimal}storage:\n  redis_url: redis://h:6379\n  redis: { cluster: ["h:1"] }\n`)).toEqual([expect.stringMatching(/^storage\.redis_url: set either storage\.redis_url or storage\.redis\.cluster/)]);
    expect(issuesOf(`${minimal}storage:\n  redis: { cluster: ["h:1"], sentinels: ["h:2"], name: x }\n`)).toEqual([expect.stringMatching(/^storage\.redis\.cluster: set either/)]);
    expect(issuesOf(`${minimal}storage:\n  redis: { cluster: [] }\n`)).toHaveLength(1);
  });
});

describe("a Redis Cluster client", () => {
  it("gives every node the credentials and TLS, fails fast, and reads from primaries only", async () => {
    const { Cluster } = await import("ioredis");
    const { createRedisClient } = await import("../../src/store/redis/client.js");
    const client = createRedisClient({ cluster: [{ host: "127.0.0.1", port: 1 }], username: "app", password: "pw", tls: { servername: "redis.internal" } });
    try {
      expect(client).toBeInstanceOf(Cluster);
      const opts = (client as InstanceType<typeof Cluster>).options;
      expect(opts.redisOptions).toMatchObject({ username: "app", password: "pw", tls: { servername: "redis.internal" }, maxRetriesPerRequest: 1, commandTimeout: 1_000 });
      expect(opts).toMatchObject({ enableOfflineQueue: false, scaleReads: "master" });
      const blocking = createRedisClient({ cluster: [{ host: "127.0.0.1", port: 1 }] }, { blocking: true });
      expect((blocking as InstanceType<typeof Cluster>).options).toMatchObject({ enableOfflineQueue: true, redisOptions: { maxRetriesPerRequest: null } });
      blocking.disconnect();
    } finally {
      client.disconnect();
    }
  });
});
