import { describe, expect, it } from "vitest";
import { REDACTED, redactTree, scrubSecret, scrubSecrets } from "../../src/ops/secrets.js";

const KEY = "sk-proj-abcdef0123456789";

describe("scrubbing secrets out of text", () => {
  it("removes the value and the 8-character head an upstream echoes of it", () => {
    expect(scrubSecret(`bad key ${KEY} given`, KEY)).toBe("bad key [redacted] given");
    expect(scrubSecret("Incorrect API key provided: sk-proj-********6789.", KEY)).toBe("Incorrect API key provided: [redacted]********6789.");
    // Inside JSON text too (an error body, a stream event).
    expect(scrubSecret(JSON.stringify({ error: { message: `key ${KEY}` } }), KEY)).toBe('{"error":{"message":"key [redacted]"}}');
  });

  it("leaves text without it, and values too short to be credentials, untouched", () => {
    const text = "nothing here: none, EMPTY";
    expect(scrubSecret(text, KEY)).toBe(text);
    expect(scrubSecret(text, "none")).toBe(text);
    expect(scrubSecret(text, "EMPTY")).toBe(text);
    expect(scrubSecret(text, undefined)).toBe(text);
  });

  it("removes every secret of a list (an MCP server's header values and token)", () => {
    const token = "mcp-token-0123456789";
    const header = "Bearer zz-header-secret-42";
    const message = `401 from server: token ${token} and ${header} rejected; echoed head mcp-toke...`;
    expect(scrubSecrets(message, [header, token, undefined, "json"])).toBe("401 from server: token [redacted] and [redacted] rejected; echoed head [redacted]...");
  });
});

describe("redactTree: the config as the console shows it", () => {
  it("redacts credential fields, header values and URL passwords, and the same values elsewhere", () => {
    const tree = {
      server: { api_keys: [{ name: "ops", key: "rr-admin-0123456789", role: "admin" }] },
      endpoints: [{ name: "oai", url: "https://api.openai.com/v1", api_key: "sk-live-abcdefghijkl" }],
      storage: { redis_url: "redis://user:hunter2-long-pass@redis:6379/0", redis: { password: "p4ssw0rd-long", sentinels: [{ host: "s1", port: 26379 }] } },
      tools: { mcp: { servers: [{ label: "docs", url: "https://mcp.example", headers: { "x-api-token": "tok-123456789", Authorization: "Bearer abcdefghij" } }] } },
      compaction: { key: "compaction-secret-key-xyz" },
      note: "mentions sk-live-abcdefghijkl in passing",
      retries: 3,
    };
    const out = redactTree(tree) as typeof tree;
    const text = JSON.stringify(out);
    for (const secret of ["rr-admin-0123456789", "sk-live-abcdefghijkl", "hunter2-long-pass", "p4ssw0rd-long", "tok-123456789", "abcdefghij", "compaction-secret-key-xyz"]) expect(text).not.toContain(secret);
    expect(out.server.api_keys[0]).toEqual({ name: "ops", key: REDACTED, role: "admin" });
    expect(out.storage.redis_url).toBe(`redis://user:${REDACTED}@redis:6379/0`);
    expect(out.tools.mcp.servers[0]!.headers).toEqual({ "x-api-token": REDACTED, Authorization: REDACTED });
    expect(out.endpoints[0]!.url).toBe("https://api.openai.com/v1");
    expect(out.note).toBe(`mentions ${REDACTED} in passing`);
    expect(out.retries).toBe(3);
    expect(out.storage.redis.sentinels).toEqual([{ host: "s1", port: 26379 }]);
  });
});
